/**
 * How the kernel starts a pyright process, the language server (pyright.ts) or the CLI (verify/python.ts):
 * `node pyright-entry.cjs <entry> …`, which loads pyright through the V8 code cache, once the sources are
 * built; before a build, `node <entry> …`.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let built: string | null | undefined;

/**
 * The built pyright-entry.cts (dist/kernel/backends/python/pyright-entry.cjs), found from the package root
 * whichever layout runs this module (sources, tsc output or the bundle), or null before a build.
 */
function pyrightEntry(): string | null {
  if (built !== undefined) return built;
  built = null;
  for (let dir = dirname(fileURLToPath(import.meta.url)); dir !== dirname(dir); dir = dirname(dir)) {
    if (!existsSync(join(dir, 'package.json'))) continue;
    const f = join(dir, 'dist', 'kernel', 'backends', 'python', 'pyright-entry.cjs');
    if (existsSync(f)) built = f;
    break;
  }
  return built;
}

/** argv that runs pyright's `entry` (an absolute path) with `args`. */
export function pyrightArgv(entry: string, args: string[]): string[] {
  const launcher = pyrightEntry();
  return [process.execPath, ...(launcher ? [launcher] : []), entry, ...args];
}

/** The installed pyright's version (the server's and the CLI's: one package), or null. */
export function pyrightVersion(): string | null {
  try {
    return (createRequire(import.meta.url)('pyright/package.json') as { version: string }).version;
  } catch {
    return null;
  }
}
