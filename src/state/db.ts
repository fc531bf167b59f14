/**
 * Opening state.db (docs/state.md §1): the busy timeout goes into the constructor before anything else, then
 * WAL, synchronous=FULL and foreign_keys=ON. Writers migrate; readers open read-only and never create or
 * migrate. SQLite failures become `Busy` (the lock outlasted the timeout) or `DatabaseError` (corrupt,
 * unreadable, not SQLite); the file is never overwritten.
 */
import Database from 'better-sqlite3';
import { existsSync, linkSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { TugError } from '../contract/errors.js';
import { heldOpen } from '../util/file-openers.js';
import { sleepSync } from '../util/sleep-sync.js';
import { assertTugcodeDb, migrate, readSchemaVersion, LATEST_SCHEMA_VERSION } from './migrate.js';
import { BUSY_SLICE_MS, isFullDisk, SqliteDatabase, sqliteToTugError, writable } from './sql/sqlite.js';

export { sqliteToTugError };
/** Where state.db lives; defined in context.ts, which never loads better-sqlite3. */
export { stateDbPath } from './context.js';

export type Db = Database.Database;

const DEFAULT_BUSY_TIMEOUT_MS = 5000;

/** 5000 ms; TUGCODE_BUSY_TIMEOUT_MS lowers it, honoured only under NODE_ENV=test. */
export function busyTimeoutMs(env: NodeJS.ProcessEnv = process.env): number {
  if (env.NODE_ENV === 'test' && env.TUGCODE_BUSY_TIMEOUT_MS && /^\d+$/.test(env.TUGCODE_BUSY_TIMEOUT_MS)) {
    return Math.min(Number(env.TUGCODE_BUSY_TIMEOUT_MS), DEFAULT_BUSY_TIMEOUT_MS);
  }
  return DEFAULT_BUSY_TIMEOUT_MS;
}

let addon: string | null | undefined;

/**
 * The addon's file, given to better-sqlite3 so that it skips the `bindings` package's search for it (a stack
 * trace and a dozen stat calls, ~3 ms of every command); where it is not, better-sqlite3 searches as usual.
 */
function native(): { nativeBinding?: string } {
  if (addon === undefined) {
    try {
      addon = createRequire(import.meta.url).resolve('better-sqlite3/build/Release/better_sqlite3.node');
    } catch {
      addon = null;
    }
  }
  return addon ? { nativeBinding: addon } : {};
}

/** The embedded store's open database (sql/sqlite.ts). */
export type OpenedDb = SqliteDatabase;

/**
 * Open for writing: the file must exist unless `create` (only `state init` creates it, made whole first:
 * createWhole), then migrate.
 * A DB whose version is newer than this code is refused (SchemaTooNew).
 */
export function openWrite(
  path: string,
  opts: { create?: boolean; env?: NodeJS.ProcessEnv; migrationsDir?: string } = {},
): OpenedDb {
  const timeoutMs = busyTimeoutMs(opts.env);
  // An empty file is no tugcode database; opening it would turn it into one (a WAL header) on the way to
  // refusing it. Only `state init` may start from nothing.
  if (!opts.create && statSync(path, { throwIfNoEntry: false })?.size === 0)
    throw new TugError('DatabaseError', {
      db_path: path,
      reason: 'the file is empty (0 bytes), not a tugcode database',
    });
  // A new database is made whole under another name and linked into place (docs/state.md §1): a process
  // opening it at the same instant finds no file or the finished one, never an empty or schema-less file.
  if (opts.create && !lstatSync(path, { throwIfNoEntry: false })) createWhole(path, timeoutMs, opts.migrationsDir);
  const created = Boolean(opts.create) && !existsSync(path);
  let db: Db | undefined;
  try {
    db = new Database(path, { timeout: timeoutMs, fileMustExist: !opts.create, ...native() });
    // Another program's database is refused before the first write: even the WAL switch rewrites its
    // header (docs/output.md §3: a failed command changes no file).
    assertTugcodeDb(db, { dbPath: path, allowCreate: Boolean(opts.create) });
    const version = settle(db, path, timeoutMs, { create: Boolean(opts.create), migrationsDir: opts.migrationsDir });
    // Opening (and a migration, once per upgrade) waits with the full timeout; from here on the writer
    // waits for the lock only in `immediate`, one short slice per try.
    db.pragma(`busy_timeout = ${Math.min(BUSY_SLICE_MS, timeoutMs)}`);
    return new SqliteDatabase(db, path, timeoutMs, version);
  } catch (e) {
    db?.close();
    // A database this call created and could not finish (a full disk) is removed: a 0-byte state.db
    // left behind would make every later `state init` refuse it as no tugcode database.
    if (created) for (const f of [path, `${path}-wal`, `${path}-shm`]) rmSync(f, { force: true });
    throw sqliteToTugError(e, path, timeoutMs);
  }
}

/** A writer's settings on an open database (WAL, full sync, foreign keys), then its migrations: the version. */
function settle(db: Db, path: string, timeoutMs: number, o: { create: boolean; migrationsDir: string | undefined }) {
  toWal(db, timeoutMs);
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  return migrate(db, { dbPath: path, allowCreate: o.create, dir: o.migrationsDir });
}

/** The longest path SQLite's unix VFS opens (MAX_PATHNAME), its -wal name included. */
const SQLITE_MAX_PATH = 512;

/**
 * Creates the database at `path` whole: WAL mode and every migration, in a file of a stand-in directory
 * beside it, closed (which folds its -wal in and removes it), then hard-linked to `path`, which never
 * replaces a file there: when another process linked its own first, this one's is dropped and the caller
 * opens theirs. The stand-in's name ends in `.lock`, so the runtime ignore lines cover it (docs/git.md §2).
 * Where this cannot be done (a path too long for SQLite with the stand-in's name, a filesystem without hard
 * links, any failure), it leaves `path` missing and the caller creates the database in place, as before.
 */
function createWhole(path: string, timeoutMs: number, migrationsDir: string | undefined): void {
  removeStaleStandIns(path);
  const token = `${process.pid.toString(36)}${Math.random().toString(36).slice(2, 8)}`;
  const dir = join(dirname(path), `${basename(path)}.${token}.new.lock`);
  const file = join(dir, 'state.db');
  if (Buffer.byteLength(`${file}-wal`) > SQLITE_MAX_PATH) return;
  let db: Db | undefined;
  try {
    mkdirSync(dir);
    db = new Database(file, { timeout: timeoutMs, ...native() });
    settle(db, path, timeoutMs, { create: true, migrationsDir });
    db.close();
    // A -wal left behind holds pages state.db lacks: linking state.db alone would lose them.
    if (existsSync(`${file}-wal`)) return;
    linkSync(file, path);
  } catch {
    // EEXIST: another process linked its database first, which the caller opens. Anything else: the caller
    // creates in place and reports what fails there.
  } finally {
    if (db?.open) db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** How long a stand-in directory lies untouched before it counts as a killed creator's. */
const STAND_IN_STALE_MS = 60_000;

/**
 * Removes the stand-in directories of creators killed between mkdir and cleanup (git ignores them, so no one
 * else would): those beside `path` untouched for STAND_IN_STALE_MS, none of whose files a process holds
 * open. A younger one may be another creator's at work and is kept. Never throws (docs/state.md §1).
 */
function removeStaleStandIns(path: string): void {
  const name = basename(path);
  const parent = dirname(path);
  let entries: string[];
  try {
    entries = readdirSync(parent);
  } catch {
    return;
  }
  const now = Date.now();
  for (const entry of entries) {
    if (!entry.startsWith(`${name}.`) || !/^\.[0-9a-z]+\.new\.lock$/.test(entry.slice(name.length))) continue;
    const dir = join(parent, entry);
    try {
      const st = lstatSync(dir);
      if (!st.isDirectory()) continue;
      const files = readdirSync(dir).map((f) => join(dir, f));
      // Writing state.db or its -wal changes their mtimes, not always the directory's.
      const touched = Math.max(st.mtimeMs, ...files.map((f) => lstatSync(f).mtimeMs));
      if (now - touched < STAND_IN_STALE_MS) continue;
      if (files.some((f) => heldOpen(f))) continue;
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // Gone meanwhile (its creator finished), or unreadable: left to its owner.
    }
  }
}

/**
 * `journal_mode = WAL`, retried while SQLITE_BUSY for up to `timeoutMs`. On a database that several processes
 * create at once, the switch upgrades a read transaction to a write one, which SQLite answers with BUSY at once
 * (no busy handler: waiting could deadlock) while another creator holds the write lock. A short synchronous
 * pause between tries, as SQLite's own busy handler does; only a creation race ever takes it.
 */
function toWal(db: Db, timeoutMs: number): void {
  const until = Date.now() + timeoutMs;
  for (let pause = 2; ; pause = Math.min(pause * 2, 50)) {
    try {
      db.pragma('journal_mode = WAL');
      return;
    } catch (e) {
      if ((e as { code?: string }).code !== 'SQLITE_BUSY' || Date.now() + pause > until) throw e;
      sleepSync(pause);
    }
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
    db = new Database(path, { readonly: true, fileMustExist: true, timeout: timeoutMs, ...native() });
    const version = readSchemaVersion(db, path);
    if (version === null) {
      throw new TugError('DatabaseError', {
        db_path: path,
        reason: 'no schema_version table: not a tugcode state database',
      });
    }
    return new SqliteDatabase(db, path, timeoutMs, version);
  } catch (e) {
    db?.close();
    const copy = readOnlyCopy(e, path, timeoutMs);
    if (copy) return copy;
    throw sqliteToTugError(e, path, timeoutMs);
  }
}

/**
 * A reader in a directory it cannot write (a read-only filesystem), or on a full disk: SQLite cannot open a
 * WAL database there without its -shm file, which it would create (SQLITE_CANTOPEN) or grow
 * (SQLITE_IOERR_SHMSIZE). When no -wal file holds changes
 * state.db lacks (a cleanly closed database has none), state.db alone is the whole state: it is read from
 * an in-memory copy, its header set to rollback mode so the memory VFS accepts it. With pending WAL
 * changes, only a writer can fold them in: NotWritable naming the directory (DiskFull on a full disk). Null when this does not apply.
 */
function readOnlyCopy(e: unknown, path: string, timeoutMs: number): OpenedDb | null {
  const code = (e as { code?: unknown })?.code;
  // CANTOPEN when the -shm file is missing; READONLY_DIRECTORY (or CANTINIT) when it is there but this
  // user may not write it or the directory (a state.db of another user, mode 644 in its 755 directory).
  const noShm =
    typeof code === 'string' &&
    (code.startsWith('SQLITE_CANTOPEN') || code === 'SQLITE_READONLY_DIRECTORY' || code === 'SQLITE_READONLY_CANTINIT');
  // A full disk: the -shm file cannot grow (SQLITE_IOERR_SHMSIZE), as sqliteToTugError tells a full disk.
  const full = typeof code === 'string' && isFullDisk(code, dirname(path));
  if (!full && (!noShm || writable(dirname(path)))) return null;
  if ((statSync(`${path}-wal`, { throwIfNoEntry: false })?.size ?? 0) > 0) {
    if (full) return null;
    throw new TugError('NotWritable', {
      path: dirname(path),
      errno: code,
      db_path: path,
      reason: `state.db cannot be read: ${path}-wal holds changes not yet in state.db, which only a writer can fold in`,
    });
  }
  const bytes = readFileSync(path);
  // Bytes 18 and 19 are the write and read format versions: 2 is WAL, 1 rollback (sqlite.org/fileformat).
  if (bytes.length >= 100 && bytes[18] === 2 && bytes[19] === 2) bytes[18] = bytes[19] = 1;
  let db: Db | undefined;
  try {
    db = new Database(bytes, { readonly: true, ...native() });
    const version = readSchemaVersion(db, path);
    if (version === null)
      throw new TugError('DatabaseError', {
        db_path: path,
        reason: 'no schema_version table: not a tugcode state database',
      });
    return new SqliteDatabase(db, path, timeoutMs, version);
  } catch (err) {
    db?.close();
    throw sqliteToTugError(err, path, timeoutMs);
  }
}

/** True when a reader must not trust every column (written by a newer tugcode). */
export function isNewerSchema(version: number): boolean {
  return version > LATEST_SCHEMA_VERSION;
}
