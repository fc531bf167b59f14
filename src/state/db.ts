/**
 * Opening state.db (02-state.md §1): the busy timeout goes into the constructor before anything else, then
 * WAL, synchronous=FULL and foreign_keys=ON. Writers migrate; readers open read-only and never create or
 * migrate. SQLite failures become `Busy` (the lock outlasted the timeout) or `DatabaseError` (corrupt,
 * unreadable, not SQLite); the file is never overwritten.
 */
import Database from 'better-sqlite3';
import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { join, resolve } from 'node:path';
import { TugError } from '../contract/errors.js';
import { migrate, readSchemaVersion, LATEST_SCHEMA_VERSION } from './migrate.js';
import { stmt } from './queries/stmt.js';

export type Db = Database.Database;

const DEFAULT_BUSY_TIMEOUT_MS = 5000;

/**
 * The longest a writer blocks the event loop in one try for the write lock (SQLite's busy handler runs in
 * the calling thread). Between tries `immediate` awaits a timer, so other tasks in the process (heartbeat
 * timers, the integration lock's refresh) keep running while it waits.
 */
export const BUSY_SLICE_MS = 25;
/** Pause between two tries for the write lock: doubles from the first value up to the last. */
const BACKOFF_MIN_MS = 5;
const BACKOFF_MAX_MS = 50;

/** `<main root>/.tugtool/state.db`, or TUGCODE_STATE_DB. */
export function stateDbPath(mainRoot: string, env: NodeJS.ProcessEnv = process.env): string {
  const override = env.TUGCODE_STATE_DB;
  return override ? resolve(override) : join(mainRoot, '.tugtool', 'state.db');
}

/** 5000 ms; TUGCODE_BUSY_TIMEOUT_MS lowers it, honoured only under NODE_ENV=test. */
export function busyTimeoutMs(env: NodeJS.ProcessEnv = process.env): number {
  if (env.NODE_ENV === 'test' && env.TUGCODE_BUSY_TIMEOUT_MS && /^\d+$/.test(env.TUGCODE_BUSY_TIMEOUT_MS)) {
    return Math.min(Number(env.TUGCODE_BUSY_TIMEOUT_MS), DEFAULT_BUSY_TIMEOUT_MS);
  }
  return DEFAULT_BUSY_TIMEOUT_MS;
}

const CORRUPT = /^SQLITE_(NOTADB|CORRUPT|CANTOPEN|IOERR|FULL|READONLY|PERM|AUTH|PROTOCOL|FORMAT)/;
/** The file or its directory cannot be written: a permissions problem (the catalogue's hint says so). */
const NOT_WRITABLE = /^SQLITE_(READONLY|PERM)/;

/** Maps a SQLite failure to the catalogue; anything else is rethrown unchanged. */
export function sqliteToTugError(e: unknown, dbPath: string, timeoutMs: number): unknown {
  if (e instanceof TugError) return e;
  const code = (e as { code?: unknown })?.code;
  if (typeof code !== 'string') return e;
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
    return new TugError('Busy', { db_path: dbPath, timeout_ms: timeoutMs, sqlite_code: code });
  }
  if (CORRUPT.test(code)) {
    const notWritable = NOT_WRITABLE.test(code);
    return new TugError('DatabaseError', {
      db_path: dbPath,
      reason: notWritable
        ? `cannot write: the file or its directory is read-only for this user (${code})`
        : `${(e as Error).message} (${code})`,
      sqlite_code: code,
    });
  }
  return e;
}

export interface OpenedDb {
  db: Db;
  path: string;
  timeoutMs: number;
  /** Schema version found on open (after migration for writers). */
  version: number;
}

/**
 * Open for writing: the file must exist unless `create` (only `state init` creates it), then migrate.
 * A DB whose version is newer than this code is refused (SchemaTooNew).
 */
export function openWrite(
  path: string,
  opts: { create?: boolean; env?: NodeJS.ProcessEnv; migrationsDir?: string } = {},
): OpenedDb {
  const timeoutMs = busyTimeoutMs(opts.env);
  let db: Db | undefined;
  try {
    db = new Database(path, { timeout: timeoutMs, fileMustExist: !opts.create });
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.pragma('foreign_keys = ON');
    const version = migrate(db, { dbPath: path, allowCreate: Boolean(opts.create), dir: opts.migrationsDir });
    // Opening (and a migration, once per upgrade) waits with the full timeout; from here on the writer
    // waits for the lock only in `immediate`, one short slice per try.
    db.pragma(`busy_timeout = ${Math.min(BUSY_SLICE_MS, timeoutMs)}`);
    return { db, path, timeoutMs, version };
  } catch (e) {
    db?.close();
    throw sqliteToTugError(e, path, timeoutMs);
  }
}

/**
 * Open read-only; null when the file does not exist (never created). A newer schema is read best-effort
 * (the returned version says so); a DB without `schema_version` is a DatabaseError.
 */
export function openRead(path: string, opts: { env?: NodeJS.ProcessEnv } = {}): OpenedDb | null {
  if (!existsSync(path)) return null;
  const timeoutMs = busyTimeoutMs(opts.env);
  let db: Db | undefined;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true, timeout: timeoutMs });
    const version = readSchemaVersion(db, path);
    if (version === null) {
      throw new TugError('DatabaseError', {
        db_path: path,
        reason: 'no schema_version table: not a tugcode state database',
      });
    }
    return { db, path, timeoutMs, version };
  } catch (e) {
    db?.close();
    throw sqliteToTugError(e, path, timeoutMs);
  }
}

/** True when a reader must not trust every column (written by a newer tugcode). */
export function isNewerSchema(version: number): boolean {
  return version > LATEST_SCHEMA_VERSION;
}

function isBusy(e: unknown): boolean {
  const code = (e as { code?: unknown })?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

/**
 * Runs `fn` in one IMMEDIATE transaction (every read-then-write, 02-state.md §1); SQLite failures are
 * mapped to Busy / DatabaseError.
 *
 * Waiting for the write lock never blocks the event loop for long: each `BEGIN IMMEDIATE` waits at most
 * one busy slice (BUSY_SLICE_MS, set on the writer connection by `openWrite`), and between tries this
 * awaits a timer with backoff, until the total timeout (5 s, or TUGCODE_BUSY_TIMEOUT_MS under tests) has
 * passed: then `Busy`. Only `BEGIN IMMEDIATE` is retried: in WAL mode the write lock is taken there, so a
 * busy BEGIN changed nothing, and `fn` runs at most once — a transaction that began is never re-run, and
 * a failure inside it (Busy included) rolls back and is reported as is.
 */
export async function immediate<T>(o: OpenedDb, fn: () => T): Promise<T> {
  const db = o.db;
  if (db.inTransaction) throw new TugError('InternalError', { reason: 'nested state transaction' });
  const deadline = performance.now() + o.timeoutMs;
  let pause = BACKOFF_MIN_MS;
  for (;;) {
    try {
      stmt(db, 'BEGIN IMMEDIATE').run();
      break;
    } catch (e) {
      const left = deadline - performance.now();
      if (!isBusy(e) || left <= 0) throw sqliteToTugError(e, o.path, o.timeoutMs);
      await sleep(Math.min(pause, left));
      pause = Math.min(pause * 2, BACKOFF_MAX_MS);
    }
  }
  try {
    const result = fn();
    stmt(db, 'COMMIT').run();
    return result;
  } catch (e) {
    if (db.inTransaction) stmt(db, 'ROLLBACK').run();
    throw sqliteToTugError(e, o.path, o.timeoutMs);
  }
}

/** Runs a read (no transaction needed for a single statement, or a deferred one for several). */
export function read<T>(o: OpenedDb, fn: () => T): T {
  try {
    return o.db.transaction(fn).deferred();
  } catch (e) {
    throw sqliteToTugError(e, o.path, o.timeoutMs);
  }
}
