/**
 * The SQLite side of the storage seam (sql/conn.ts): one better-sqlite3 connection. Statements run
 * synchronously (prepared once per connection); transactions are serialized within the process, so the
 * driver's workers, which share one connection, never interleave inside one.
 */
import type BetterSqlite3 from 'better-sqlite3';
import { accessSync, constants, statfsSync, statSync } from 'node:fs';
import { dirname, sep } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { sqlitePermission, TugError } from '../../contract/errors.js';
import { TUGTOOL_DIR } from '../../contract/layout.js';
import { openersOf } from '../../util/file-openers.js';
import { shellArg } from '../../util/shell-arg.js';
import { afterEnd, TxQueue, type Conn, type Database, type Params, type TxOptions } from './conn.js';

/**
 * The longest a writer blocks the event loop in one try for the write lock (SQLite's busy handler runs in
 * the calling thread). Between tries `write` awaits a timer, so other tasks in the process (heartbeat
 * timers, the integration lock's refresh) keep running while it waits.
 */
export const BUSY_SLICE_MS = 25;
/** Pause between two tries for the write lock: doubles from the first value up to the last. */
const BACKOFF_MIN_MS = 5;
const BACKOFF_MAX_MS = 50;

/** The longest path SQLite's unix VFS opens (MAX_PATHNAME). */
const SQLITE_MAX_PATH = 512;

const CORRUPT = /^SQLITE_(NOTADB|CORRUPT|CANTOPEN|IOERR|FULL|READONLY|PERM|AUTH|PROTOCOL|FORMAT)/;

/** Maps a SQLite failure to the catalogue; anything else is rethrown unchanged. */
export function sqliteToTugError(e: unknown, dbPath: string, timeoutMs: number): unknown {
  if (e instanceof TugError) return e;
  const code = (e as { code?: unknown })?.code;
  if (typeof code !== 'string') return e;
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
    // Whoever holds the write lock has the file open: named when this host can tell (the catalogue's hint).
    const holders = openersOf(dbPath);
    return new TugError('Busy', {
      db_path: dbPath,
      timeout_ms: timeoutMs,
      sqlite_code: code,
      ...(holders.length > 0 ? { holders } : {}),
    });
  }
  // SQLite says "disk I/O error" of a directory at the path: say what it is.
  if (code.startsWith('SQLITE_') && statSync(dbPath, { throwIfNoEntry: false })?.isDirectory()) {
    // A directory TUGCODE_STATE_DB names (`/tmp`, a project's folder) is not to be moved aside: the
    // variable is what is wrong (docs/state.md §1).
    const own = dbPath.endsWith(`${sep}${TUGTOOL_DIR}${sep}state.db`);
    return new TugError(
      'DatabaseError',
      { db_path: dbPath, reason: `it is a directory, not a database file (${code})`, sqlite_code: code },
      own
        ? {}
        : {
            hint: `point TUGCODE_STATE_DB at a database file, not a directory (tugcode state init <plan> creates it), or unset it to use .tugtool/state.db`,
          },
    );
  }
  // The same of its -wal or -shm file: then state.db itself is sound, and moving it aside (the
  // catalogue's hint) would not help; the odd file is what goes.
  for (const side of code.startsWith('SQLITE_') ? [`${dbPath}-wal`, `${dbPath}-shm`] : []) {
    const st = statSync(side, { throwIfNoEntry: false });
    if (!st || st.isFile()) continue;
    const kind = st.isDirectory() ? 'a directory' : st.isFIFO() ? 'a FIFO' : 'not a regular file';
    return new TugError(
      'DatabaseError',
      { db_path: dbPath, path: side, reason: `${side} is ${kind}, not SQLite's own file (${code})`, sqlite_code: code },
      {
        hint: `keep ${shellArg(dbPath)} (it holds the live claims); move ${shellArg(side)} aside (mv ${shellArg(side)} ${shellArg(`${side}.bak`)}), then retry`,
      },
    );
  }
  // SQLite's unix VFS opens paths of at most 512 bytes (its -wal name included): a repository deep enough
  // has no state.db to move aside; the path is what is wrong.
  if (code.startsWith('SQLITE_CANTOPEN') && Buffer.byteLength(`${dbPath}-wal`) > SQLITE_MAX_PATH) {
    return new TugError(
      'DatabaseError',
      {
        db_path: dbPath,
        reason: `the path is longer than the ${SQLITE_MAX_PATH} bytes SQLite can open (${code})`,
        sqlite_code: code,
      },
      {
        hint: 'set TUGCODE_STATE_DB to a shorter absolute path (the same for every worktree of the repository), or move the repository to a shorter path',
      },
    );
  }
  // SQLite reports a full disk as SQLITE_FULL, or as an I/O error when growing -shm or writing a page
  // fails: an I/O error on a filesystem with no space left is the full disk. CORRUPTFS is the filesystem
  // returning garbage, never a full one.
  if (isFullDisk(code, dirname(dbPath))) {
    // A full disk is no damaged database: the transaction was rolled back; the file must be kept.
    return new TugError('DiskFull', {
      path: dbPath,
      dir: dirname(dbPath),
      reason: `state.db could not grow (${code}); nothing was changed`,
      sqlite_code: code,
    });
  }
  // A file or directory that refuses this user (modes, owner, chattr +i, a read-only filesystem) is the
  // catalogue's NotWritable (exit 4), naming which one: a permissions problem, not a damaged database.
  const refused =
    sqlitePermission(code) || code.startsWith('SQLITE_CANTOPEN') ? (writeRefusals(dbPath)[0] ?? null) : null;
  if (refused) {
    return new TugError('NotWritable', {
      path: refused.path,
      errno: refused.errno,
      db_path: dbPath,
      sqlite_code: code,
      reason: `state.db cannot be ${code.startsWith('SQLITE_CANTOPEN') ? 'opened' : 'written'} (${code}); a writer needs state.db, its -wal and -shm files and ${dirname(dbPath)} writable`,
    });
  }
  if (CORRUPT.test(code)) {
    const notWritable = sqlitePermission(code);
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

/** Whether the filesystem holding `dir` has (almost) no space left for this user (under 64 KiB). */
/** Whether SQLite's `code` for a file in `dir` is a full disk (see sqliteToTugError). */
export function isFullDisk(code: string, dir: string): boolean {
  return (
    code.startsWith('SQLITE_FULL') ||
    code === 'ENOSPC' ||
    (code.startsWith('SQLITE_IOERR') && code !== 'SQLITE_IOERR_CORRUPTFS' && noSpace(dir))
  );
}

function noSpace(dir: string): boolean {
  try {
    const st = statfsSync(dir);
    // A pseudo filesystem (/proc, /sys) has no blocks at all: nothing there is ever "full".
    return st.blocks > 0 && st.bavail * st.bsize < 64 * 1024;
  } catch {
    return false;
  }
}

/**
 * Each of state.db, its directory and its -wal and -shm files that refuses this process's writes, with the
 * errno access(2) gave (EACCES, EPERM for an immutable file, EROFS), in that order; a missing one refuses
 * nothing. The directory must also be searchable: a writer creates the -wal and -shm files in it. The one
 * rule for the state's NotWritable and doctor's `state-db-writable` (docs/git.md §7).
 */
export function writeRefusals(dbPath: string): { path: string; errno: string }[] {
  const out: { path: string; errno: string }[] = [];
  const dir = dirname(dbPath);
  for (const path of [dbPath, dir, `${dbPath}-wal`, `${dbPath}-shm`]) {
    try {
      accessSync(path, path === dir ? constants.W_OK | constants.X_OK : constants.W_OK);
    } catch (e) {
      const errno = (e as NodeJS.ErrnoException).code ?? 'EACCES';
      if (errno !== 'ENOENT' && errno !== 'ENOTDIR') out.push({ path, errno });
    }
  }
  return out;
}

/** Whether this process may create files in `dir` (false on a read-only filesystem). */
export function writable(dir: string): boolean {
  try {
    accessSync(dir, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

function isBusy(e: unknown): boolean {
  const code = (e as { code?: unknown })?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

type Statement = BetterSqlite3.Statement;

function bind(params: Params | undefined): unknown[] {
  if (params === undefined) return [];
  return Array.isArray(params) ? (params as unknown[]) : [params];
}

export class SqliteDatabase implements Database {
  readonly dialect = 'sqlite' as const;
  private readonly stmts = new Map<string, Statement>();
  private readonly queue = new TxQueue();

  constructor(
    /** The better-sqlite3 connection (migrations and doctor's checks use it directly). */
    readonly raw: BetterSqlite3.Database,
    readonly path: string,
    readonly timeoutMs: number,
    readonly version: number,
  ) {}

  get readonly(): boolean {
    return this.raw.readonly;
  }
  get open(): boolean {
    return this.raw.open;
  }

  private stmt(sql: string): Statement {
    let s = this.stmts.get(sql);
    if (!s) {
      s = this.raw.prepare(sql);
      this.stmts.set(sql, s);
    }
    return s;
  }

  private mapped(e: unknown): unknown {
    return sqliteToTugError(e, this.path, this.timeoutMs);
  }

  get<T>(sql: string, params?: Params): Promise<T | undefined> {
    try {
      return Promise.resolve(this.stmt(sql).get(...bind(params)) as T | undefined);
    } catch (e) {
      return Promise.reject(this.mapped(e));
    }
  }

  all<T>(sql: string, params?: Params): Promise<T[]> {
    try {
      return Promise.resolve(this.stmt(sql).all(...bind(params)) as T[]);
    } catch (e) {
      return Promise.reject(this.mapped(e));
    }
  }

  run(sql: string, params?: Params): Promise<number> {
    try {
      return Promise.resolve(this.stmt(sql).run(...bind(params)).changes);
    } catch (e) {
      return Promise.reject(this.mapped(e));
    }
  }

  later(sql: string, params?: Params): void {
    try {
      this.stmt(sql).run(...bind(params));
    } catch (e) {
      throw this.mapped(e);
    }
  }

  /**
   * One IMMEDIATE transaction (every read-then-write, docs/state.md §1). Waiting for the write lock never
   * blocks the event loop for long: each `BEGIN IMMEDIATE` waits at most one busy slice (BUSY_SLICE_MS,
   * set on the writer connection when it was opened), and between tries this awaits a timer with backoff,
   * until the total timeout (5 s, or TUGCODE_BUSY_TIMEOUT_MS under tests) has passed: then `Busy`. Only
   * `BEGIN IMMEDIATE` is retried: in WAL mode the write lock is taken there, so a busy BEGIN changed
   * nothing, and `fn` runs at most once — a transaction that began is never re-run, and a failure inside it
   * (Busy included) rolls back and is reported as is.
   */
  // Every SQLite writer runs alone (the database has one write lock): `shared` changes nothing here.
  async write<T>(fn: (c: Conn) => Promise<T>, _opts?: TxOptions): Promise<T> {
    const done = await this.queue.acquire();
    try {
      // Date.now(), as toWal (db.ts): the global `performance` loads perf_hooks, ~1 ms of every write.
      const deadline = Date.now() + this.timeoutMs;
      let pause = BACKOFF_MIN_MS;
      for (;;) {
        try {
          this.stmt('BEGIN IMMEDIATE').run();
          break;
        } catch (e) {
          const left = deadline - Date.now();
          if (!isBusy(e) || left <= 0) throw this.mapped(e);
          await sleep(Math.min(pause, left));
          pause = Math.min(pause * 2, BACKOFF_MAX_MS);
        }
      }
      return await this.inTransaction(fn);
    } finally {
      done();
    }
  }

  /** A deferred transaction: the reads of `fn` see one snapshot. */
  async read<T>(fn: (c: Conn) => Promise<T>): Promise<T> {
    const done = await this.queue.acquire();
    try {
      try {
        this.stmt('BEGIN DEFERRED').run();
      } catch (e) {
        throw this.mapped(e);
      }
      return await this.inTransaction(fn);
    } finally {
      done();
    }
  }

  private async inTransaction<T>(fn: (c: Conn) => Promise<T>): Promise<T> {
    const tx = new SqliteTx(this);
    try {
      const result = await fn(tx);
      tx.ended = true;
      this.stmt('COMMIT').run();
      return result;
    } catch (e) {
      tx.ended = true;
      if (this.raw.inTransaction) this.stmt('ROLLBACK').run();
      throw this.mapped(e);
    }
  }

  close(): Promise<void> {
    if (this.raw.open) this.raw.close();
    return Promise.resolve();
  }
}

/**
 * One transaction's view of the connection. Once it committed or rolled back it refuses statements: a chain
 * of the transaction still running (statements issued side by side with `Promise.all`) would otherwise run
 * them on their own, outside it, or inside the next transaction.
 */
class SqliteTx implements Conn {
  readonly dialect = 'sqlite' as const;
  ended = false;
  constructor(private readonly db: SqliteDatabase) {}

  get<T>(sql: string, params?: Params): Promise<T | undefined> {
    return this.ended ? Promise.reject(afterEnd()) : this.db.get<T>(sql, params);
  }
  all<T>(sql: string, params?: Params): Promise<T[]> {
    return this.ended ? Promise.reject(afterEnd()) : this.db.all<T>(sql, params);
  }
  run(sql: string, params?: Params): Promise<number> {
    return this.ended ? Promise.reject(afterEnd()) : this.db.run(sql, params);
  }
  later(sql: string, params?: Params): void {
    if (this.ended) throw afterEnd();
    this.db.later(sql, params);
  }
}
