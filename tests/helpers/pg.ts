/**
 * PostgreSQL for tests: the run's shared server (started by tests/helpers/pg-global-setup.ts), a fresh database per
 * test or file, and private servers for tests that stop or restart PostgreSQL.
 *
 *   const db = await createTestDatabase();      // fresh database on the shared server
 *   runCli([...], { env: { TUGCODE_STATE_URL: db.url } });
 *   const own = await startPrivatePg();          // a server of its own, to stop/restart freely
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { afterEachFile } from './file-hooks.js';
import type {} from './pg-global-setup.js'; // declares inject('tugcodePg')
import { LATEST_SCHEMA_VERSION, migrationsDir } from '../../src/state/migrate.js';
import { pgTarget } from '../../src/state/sql/pg-sql.js';
import { openPg, type PgDatabase } from '../../src/state/sql/postgres.js';
import {
  createPgServer,
  destroyPgServer,
  destroyPgServerSync,
  ensurePgServer,
  pgServerEnv,
  pgServerUrl,
  restartPgServer,
  startPgServer,
  stopPgServer,
  type PgServerInfo,
  type StartPgOptions,
} from './pg-server.js';

export type { PgServerInfo } from './pg-server.js';

export interface TestDatabase {
  /** The database's name (lowercase, unique in the run). */
  name: string;
  /** postgres://user:password@127.0.0.1:port/name */
  url: string;
  /** PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE for this database. */
  env: Record<string, string>;
  /** The server it lives on. */
  server: PgServerInfo;
  /** Drops it (terminating its connections). Idempotent; also done after the file's tests. */
  drop(): Promise<void>;
}

export interface PrivatePg {
  info: PgServerInfo;
  url(database?: string): string;
  env(database?: string): Record<string, string>;
  createDatabase(prefix?: string): Promise<TestDatabase>;
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  start(): Promise<void>;
  restart(mode?: 'fast' | 'immediate'): Promise<void>;
  /** Stops it and deletes its directory; also done after the file's tests. */
  destroy(): Promise<void>;
}

let shared: PgServerInfo | undefined;

/**
 * The run's shared server, started on first use (~0.6 s once per run; other workers wait for it).
 * Throws the reason when it did not start. createTestDatabase() and the restart helpers call it themselves.
 */
export async function pgReady(): Promise<PgServerInfo> {
  if (shared) return shared;
  const provided = inject('tugcodePg');
  if (!provided?.baseDir)
    throw new Error(provided?.error ?? 'no test PostgreSQL: is tests/helpers/pg-global-setup.ts the globalSetup?');
  shared = await ensurePgServer(provided.baseDir);
  return shared;
}

/** The shared server's host, port, user, password… Call `await pgReady()` (or createTestDatabase()) first. */
export function pgInfo(): PgServerInfo {
  if (!shared) throw new Error('the test PostgreSQL server starts on first use: await pgReady() first');
  return shared;
}

/** URL (with password) of a database on the shared server; default the maintenance database `postgres`. */
export function pgUrl(database?: string): string {
  return pgServerUrl(pgInfo(), database);
}

/** libpq-style environment for the shared server. */
export function pgEnv(database?: string): Record<string, string> {
  return pgServerEnv(pgInfo(), database);
}

/** A connected `pg` client; the caller ends it. */
export async function pgConnect(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return client;
}

/**
 * Polls (every 20 ms, on a connection of its own) until `sql`, run in the database at `url`, returns a row whose
 * first column is truthy; throws after `ms`. How a test waits for another session's state (a transaction
 * waiting on a lock, a session gone) instead of sleeping for a guess of how long it takes.
 */
export async function waitForPg(url: string, what: string, sql: string, ms = 30_000): Promise<void> {
  const c = await pgConnect(url);
  try {
    const until = Date.now() + ms;
    for (;;) {
      // Each query is its own transaction, so pg_stat_activity is read afresh every time.
      const r = await c.query(sql);
      if (r.rows[0] && Object.values(r.rows[0])[0]) return;
      if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
      await new Promise((res) => setTimeout(res, 20));
    }
  } finally {
    await c.end();
  }
}

/** Waits until `n` sessions of the database at `url` wait for a lock (a row, a table, an advisory lock). */
export function waitForLockWaiters(url: string, n: number, ms?: number): Promise<void> {
  return waitForPg(
    url,
    `${n} session(s) waiting for a lock`,
    `SELECT count(*) >= ${Number(n)} FROM pg_stat_activity
       WHERE datname = current_database() AND wait_event_type = 'Lock'`,
    ms,
  );
}

/**
 * Waits until no session but the poller's and `keep` (backend pids) is connected to the database at `url`:
 * the others have ended, and so have flushed their statistics (PostgreSQL 15+ flushes them at exit).
 */
export function waitForOtherSessionsGone(url: string, keep: number[] = [], ms?: number): Promise<void> {
  const others = ['pg_backend_pid()', ...keep.map(Number)].join(', ');
  return waitForPg(
    url,
    'the other sessions to end',
    `SELECT count(*) = 0 FROM pg_stat_activity WHERE datname = current_database() AND pid NOT IN (${others})`,
    ms,
  );
}

const dropAfterFile = new Set<TestDatabase>();
const privateServers = new Set<PgServerInfo>();
let exitHookInstalled = false;

afterEachFile(async () => {
  for (const db of [...dropAfterFile]) await db.drop().catch(() => undefined);
  for (const info of [...privateServers]) await destroyPgServer(info).catch(() => undefined);
  privateServers.clear();
});

async function createDatabaseOn(server: PgServerInfo, prefix = 't'): Promise<TestDatabase> {
  const clean = prefix
    .toLowerCase()
    .replace(/[^a-z0-9_]/g, '_')
    .slice(0, 40);
  const name = `${clean}_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = await pgConnect(pgServerUrl(server));
  try {
    await admin.query(`create database "${name}"`);
  } finally {
    await admin.end();
  }
  let dropped = false;
  const db: TestDatabase = {
    name,
    url: pgServerUrl(server, name),
    env: pgServerEnv(server, name),
    server,
    async drop() {
      if (dropped) return;
      const c = await pgConnect(pgServerUrl(server));
      try {
        await c.query(`drop database if exists "${name}" with (force)`);
      } finally {
        await c.end();
      }
      dropped = true;
      dropAfterFile.delete(db);
    },
  };
  dropAfterFile.add(db);
  return db;
}

/** A fresh, empty database on the shared server (dropped after the file's tests). */
export async function createTestDatabase(prefix?: string): Promise<TestDatabase> {
  return createDatabaseOn(await pgReady(), prefix);
}

/**
 * Stops and starts the shared server (same port, same data). Test files run in parallel: every other file's
 * connections break meanwhile. Prefer startPrivatePg() for fault tests.
 */
export async function restartPg(mode: 'fast' | 'immediate' = 'fast'): Promise<void> {
  await restartPgServer(await pgReady(), mode);
}

/** Stops the shared server (see restartPg's warning); startPg() brings it back on the same port. */
export async function stopPg(mode: 'fast' | 'immediate' = 'fast'): Promise<void> {
  await stopPgServer(await pgReady(), mode);
}

export async function startPg(): Promise<void> {
  await startPgServer(await pgReady());
}

/**
 * A server of the test file's own: own directory, own port; destroyed after the file's tests. ~0.5 s. Its data
 * directory is a copy of the shared server's pristine one (initdb's output), unless a user or password is asked.
 */
export async function startPrivatePg(opts: StartPgOptions = {}): Promise<PrivatePg> {
  const from = opts.user || opts.password ? undefined : await pgReady().catch(() => undefined);
  const info = await createPgServer({ ...(from ? { from } : {}), ...opts });
  privateServers.add(info);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once('exit', () => privateServers.forEach(destroyPgServerSync));
  }
  return {
    info,
    url: (database) => pgServerUrl(info, database),
    env: (database) => pgServerEnv(info, database),
    createDatabase: (prefix) => createDatabaseOn(info, prefix),
    stop: (mode = 'fast') => stopPgServer(info, mode),
    start: () => startPgServer(info),
    restart: (mode = 'fast') => restartPgServer(info, mode),
    async destroy() {
      privateServers.delete(info);
      await destroyPgServer(info);
    },
  };
}

/**
 * The state library's own connection to `url` (openPg) on the project schema `schema`: null when a reader or a
 * writer finds no schema; `create` creates and migrates it. Lost connections are not retried.
 */
export function openStatePg(
  url: string,
  schema: string,
  mode: 'read' | 'write' | 'create' = 'create',
): Promise<PgDatabase | null> {
  return openPg(
    { url, target: pgTarget(url, {}), schema, mode, retryMs: 0, migrationsDir: `${migrationsDir()}/pg` },
    LATEST_SCHEMA_VERSION,
  );
}
