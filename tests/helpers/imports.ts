import { spawnSync } from 'node:child_process';
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, ROOT } from './cli.js';
import { tempDir } from './repo.js';

/** The packages (node_modules/<name>, or the bundle's vendor-<name>.cjs) a CLI invocation loads through the ESM loader (`cli`: tugcode by default). */
export function packagesLoaded(
  args: string[],
  cwd: string,
  env: Record<string, string> = {},
  cli: string = CLI,
): Set<string> {
  const file = join(tempDir(), 'imports.txt');
  spawnSync(process.execPath, ['--import', join(ROOT, 'tests', 'helpers', 'trace-imports.mjs'), cli, ...args], {
    cwd,
    env: { ...process.env, ...env, TUGCODE_TRACE_IMPORTS: file },
    encoding: 'utf8',
  });
  const out = new Set<string>();
  if (!existsSync(file)) return out;
  for (const url of readFileSync(file, 'utf8').split('\n')) {
    // A package the CLI bundle vendors (scripts/bundle.mjs) loads from dist/bundle/vendor-<name>.cjs.
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url) ?? /\/dist\/bundle\/vendor-([^/]+)\.cjs$/.exec(url);
    if (m?.[1]) out.add(m[1]);
  }
  return out;
}
