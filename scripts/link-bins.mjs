#!/usr/bin/env node
// Run from `prepare`: in a clone of this repository, `npm install` installs the dependencies but never
// links the package's own bins, so `npx tugcode` would look for tugcode on the registry. Link them into
// node_modules/.bin, as npm does for dependencies.
import { existsSync, lstatSync, mkdirSync, readFileSync, symlinkSync, unlinkSync, chmodSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const binDir = join(root, 'node_modules', '.bin');
if (!existsSync(join(root, 'node_modules'))) process.exit(0);
mkdirSync(binDir, { recursive: true });
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
for (const [name, target] of Object.entries(pkg.bin ?? {})) {
  const link = join(binDir, name);
  try {
    if (lstatSync(link)) unlinkSync(link);
  } catch {
    /* not there yet */
  }
  chmodSync(join(root, target), 0o755);
  symlinkSync(relative(binDir, join(root, target)), link);
}
