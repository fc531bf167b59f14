/**
 * The PostgreSQL side of the storage seam (docs/state.md §8). One `pg` pool per process; every project has
 * its own schema (`search_path` is set when a connection starts), so the queries are the same text as on
 * SQLite. Write transactions take a transaction-scoped advisory lock on the project: exclusive for every
 * change, shared for claims, which pick their row with `FOR UPDATE SKIP LOCKED` and so run side by side.
 * Times come from the server's clock (`serverOffsetMs`).
 *
 * Once a process has reached the server, a lost connection (a restart, a failover) is retried with backoff
 * for up to `retryMs`: a transaction that failed that way rolled back, so it runs again from the start.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client, Pool, PoolClient, PoolConfig } from 'pg';
import { TugError } from '../../contract/errors.js';
import type { Conn, Database, Params, TxOptions } from './conn.js';
import { PgConn } from './pg-conn.js';
import { isUnavailable, pgLiteral, pgToTugError, type PgTarget } from './pg-sql.js';
import { migrate, quoteIdent } from './pg-migrate.js';
import { loadPg, newPool } from './pg-pool.js';
import { DEFAULT_SSL, withoutSslParams } from './pg-ssl.js';

/** A failure of PostgreSQL or of the connection to it (a server error carries its severity). */
function fromPg(e: unknown): boolean {
  return !(e instanceof TugError) && (isUnavailable(e) || typeof (e as { severity?: unknown })?.severity === 'string');
}

/** Connections a process opens at most (the driver's workers share them; a run keeps one for its identity). */
const POOL_MAX = 9;
const CONNECT_TIMEOUT_MS = 5000;
const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 2000;
/** Deadlocks and serialization failures retried before they are reported (DatabaseError). */
const CONFLICT_RETRIES = 5;

export interface PgOptions {
  url: string;
  target: PgTarget;
  /** Schema of this project (a safe identifier, see projectSchema). */
  schema: string;
  /**
   * `read` never creates or migrates; `write` migrates an existing schema but never creates one (a
   * command refused before `state init` leaves the server untouched, as on SQLite); `create` (state init,
   * after validating its plan) creates and migrates it.
   */
  mode: 'read' | 'write' | 'create';
  /**
   * How long a process that was connected keeps retrying a lost connection (0: never). The budget is the
   * database's, not each call's: once the connection has been lost for that long, every call makes one
   * attempt and fails, until one succeeds again.
   */
  retryMs: number;
  /** The process is stopping (SIGINT/SIGTERM): a lost connection is no longer retried. See stopOn. */
  signal?: AbortSignal | undefined;
  migrationsDir: string;
}

/**
 * Told of an outage a long-lived process rides out (docs/state.md §8.1): `lost` once, when a lost connection
 * is first retried (with the failure and the retry budget), `back` once, when a call succeeds again.
 */
export interface OutageWatch {
  lost(error: TugError, budgetMs: number): void;
  back(ms: number): void;
}

export class PgDatabase extends PgConn implements Database {
  /** Opened to write (migrated), or upgraded since; a reader's writes wait for ensureWriter's upgrade. */
  writable = false;
  get readonly(): boolean {
    return !this.writable;
  }
  readonly timeoutMs: number;
  /** Server time minus local time, measured when the pool first connected. */
  serverOffsetMs = 0;
  private closed = false;
  private connected = false;
  /** When the connection was found lost (performance.now()), null while calls succeed. */
  private lostAt: number | null = null;
  /** Aborted once a signal handed to stopOn aborts: retries end at once (the process is stopping). */
  private readonly stopper = new AbortController();
  private watch: OutageWatch | undefined;
  /** When the outage told to `watch` began (performance.now()), null when none is. */
  private toldAt: number | null = null;

  constructor(
    private readonly pool: Pool,
    private readonly o: PgOptions,
    public version: number,
  ) {
    super((q) => pool.query(q), o.target);
    this.timeoutMs = o.retryMs;
    if (o.signal) this.stopOn(o.signal);
  }

  /**
   * From now on `signal` aborting ends every retry of a lost connection: a call waiting to retry fails at
   * once with its DatabaseUnavailable, later calls make one attempt each. The driver hands over its stop.
   */
  stopOn(signal: AbortSignal): void {
    if (signal.aborted) this.stopper.abort();
    else signal.addEventListener('abort', () => this.stopper.abort(), { once: true });
  }

  /** From now on `watch` is told when an outage starts being ridden out, and when it ends. */
  watchOutage(watch: OutageWatch): void {
    this.watch = watch;
  }

  /** A call reached the server: the connection works, and an outage told of is over. */
  private reached(): void {
    this.lostAt = null;
    if (this.toldAt === null) return;
    const ms = performance.now() - this.toldAt;
    this.toldAt = null;
    this.watch?.back(ms);
  }

  /**
   * After a call failed with DatabaseUnavailable: waits `pauseMs` (cut short by the stop) and says whether to
   * try again. The budget is shared: it runs from the first failure since the last success.
   */
  private async mayRetry(err: TugError, pauseMs: number): Promise<boolean> {
    if (err.code !== 'DatabaseUnavailable') {
      this.reached(); // the server answered: the connection works
      return false;
    }
    const now = performance.now();
    this.lostAt ??= now;
    const left = (this.connected ? this.o.retryMs : 0) - (now - this.lostAt);
    const stop = this.stopper.signal;
    if (left <= 0 || this.closed || stop.aborted) return false;
    if (this.toldAt === null && this.watch) {
      this.toldAt = this.lostAt;
      this.watch.lost(err, this.o.retryMs);
    }
    await sleep(Math.min(pauseMs, left), undefined, { signal: stop }).catch(() => undefined);
    return !this.closed && !stop.aborted;
  }

  get path(): string {
    return this.o.target.label;
  }
  get open(): boolean {
    return !this.closed;
  }

  /**
   * BEGIN and the project's advisory lock in one round trip (a simple query of two statements: the explicit
   * BEGIN keeps the transaction open after it), with a claim's owner lock. The keys are quoted literals.
   */
  write<T>(fn: (c: Conn) => Promise<T>, opts?: TxOptions): Promise<T> {
    const lock = opts?.shared ? 'pg_advisory_xact_lock_shared' : 'pg_advisory_xact_lock';
    let begin = `BEGIN; SELECT ${lock}(1, hashtext(${pgLiteral(`tugcode:${this.o.schema}`)}))`;
    if (opts?.owner !== undefined)
      begin += `; SELECT pg_advisory_xact_lock(2, hashtext(${pgLiteral(`tugcode:owner:${opts.owner}`)}))`;
    return this.transaction(begin, fn);
  }

  read<T>(fn: (c: Conn) => Promise<T>): Promise<T> {
    return this.transaction('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY', fn);
  }

  // Statements on the database itself (outside a transaction) ride out a lost connection too.
  override get<T>(sql: string, params?: Params): Promise<T | undefined> {
    return this.retrying(() => super.get<T>(sql, params));
  }
  override all<T>(sql: string, params?: Params): Promise<T[]> {
    return this.retrying(() => super.all<T>(sql, params));
  }
  override run(sql: string, params?: Params): Promise<number> {
    return this.retrying(() => super.run(sql, params));
  }
  /** Outside a transaction nothing would report its failure: only transactions defer statements. */
  override later(_sql: string, _params?: Params): void {
    throw new TugError('InternalError', { reason: 'a deferred statement outside a transaction' });
  }

  private transaction<T>(begin: string, fn: (c: Conn) => Promise<T>): Promise<T> {
    return this.retrying(() => this.once(begin, fn));
  }

  /**
   * Runs `attempt` again while it fails with DatabaseUnavailable, with backoff, for up to `retryMs`; and a
   * transaction PostgreSQL rolled back to break a deadlock or a serialization conflict (transactions that
   * lock rows side by side can meet that way), a few times at once: it changed nothing.
   */
  private async retrying<T>(attempt: () => Promise<T>): Promise<T> {
    let pause = RETRY_MIN_MS;
    let conflicts = 0;
    for (;;) {
      try {
        const result = await attempt();
        this.reached();
        return result;
      } catch (e) {
        const code = e instanceof TugError ? e.details.pg_code : undefined;
        if ((code === '40P01' || code === '40001') && conflicts++ < CONFLICT_RETRIES && !this.closed) {
          await sleep(5 + Math.random() * 20 * conflicts);
          continue;
        }
        if (!(e instanceof TugError) || !(await this.mayRetry(e, pause))) throw e;
        pause = Math.min(pause * 2, RETRY_MAX_MS);
      }
    }
  }

  private async once<T>(begin: string, fn: (c: Conn) => Promise<T>): Promise<T> {
    let client: PoolClient;
    try {
      client = await this.pool.connect();
    } catch (e) {
      throw pgToTugError(e, this.o.target);
    }
    this.connected = true;
    let broken = false;
    const tx = new PgConn((q) => client.query(q), this.o.target, (client as unknown as Client).connection.stream);
    try {
      // BEGIN and its locks travel with the transaction's first statement.
      tx.later(begin);
      const result = await fn(tx);
      await tx.commit();
      return result;
    } catch (e) {
      tx.abandon();
      try {
        await client.query('ROLLBACK');
      } catch {
        broken = true;
      }
      // The caller's own errors (a dry run's rollback, a domain error) pass through as they are.
      throw fromPg(e) ? pgToTugError(e, this.o.target) : e;
    } finally {
      client.release(broken || undefined);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.end().catch(() => undefined);
  }

  /**
   * A session-level advisory lock `(cls, hashtext(key))` on a client of its own, held until the returned
   * release (the integration lock across hosts, docs/state.md §8). Polls `pg_try_advisory_lock` from 5 ms up
   * to 200 ms; past `timeoutMs` it is `Busy`. A lost connection is retried like a transaction; a lock lost
   * with its session (a server restart) is simply gone: the release then does nothing.
   */
  async sessionLock(cls: number, key: string, timeoutMs: number): Promise<() => Promise<void>> {
    const until = performance.now() + timeoutMs;
    let pause = 5;
    for (;;) {
      let client: PoolClient | null = null;
      try {
        client = await this.pool.connect();
        for (;;) {
          const r = await client.query('SELECT pg_try_advisory_lock($1, hashtext($2)) AS ok', [cls, key]);
          if ((r.rows[0] as { ok: boolean }).ok) break;
          if (performance.now() > until || this.closed)
            throw new TugError('Busy', {
              db_path: this.o.target.label,
              timeout_ms: timeoutMs,
              reason: `advisory lock ${key} stayed held`,
            });
          await sleep(pause);
          pause = Math.min(pause * 2, 200);
        }
      } catch (e) {
        client?.release(true);
        const err: TugError = e instanceof TugError ? e : (pgToTugError(e, this.o.target) as TugError);
        if (!(await this.mayRetry(err, pause))) throw err;
        pause = Math.min(pause * 2, RETRY_MAX_MS);
        continue;
      }
      this.reached();
      const held = client;
      let released = false;
      return async () => {
        if (released) return;
        released = true;
        let broken = false;
        try {
          await held.query('SELECT pg_advisory_unlock($1, hashtext($2))', [cls, key]);
        } catch {
          broken = true; // the session is gone, and its lock with it
        }
        held.release(broken || undefined);
      };
    }
  }

  /**
   * Tries once to take the session advisory lock `(cls, hashtext(key))` on a client of its own named `name`
   * (its `application_name`), and holds it until the returned release. When another session holds it: that
   * session's name, client address and start, as `pg_stat_activity` shows them (null where hidden).
   */
  async tryHold(
    cls: number,
    key: string,
    name: string,
  ): Promise<
    | { held: true; release: () => Promise<void> }
    | { held: false; holder: { name: string | null; addr: string | null; since: string | null } }
  > {
    let client: PoolClient | null = null;
    try {
      client = await this.pool.connect();
      await client.query('SELECT set_config($1, $2, false)', ['application_name', name]);
      const r = await client.query('SELECT pg_try_advisory_lock($1, hashtext($2)) AS ok', [cls, key]);
      if (!(r.rows[0] as { ok: boolean }).ok) {
        // An advisory lock on two int4 keys shows as classid = key1, objid = key2 (as an oid), objsubid = 2.
        const h = await client.query(
          `SELECT a.application_name AS name, host(a.client_addr) AS addr,
                  to_char(a.backend_start AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS since
             FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
            WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2 AND l.classid::bigint = $1
              AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
              AND l.objid::bigint = (hashtext($2)::bigint + 4294967296) % 4294967296
            LIMIT 1`,
          [cls, key],
        );
        client.release();
        client = null;
        const row = (h.rows[0] ?? {}) as { name?: string | null; addr?: string | null; since?: string | null };
        return { held: false, holder: { name: row.name ?? null, addr: row.addr ?? null, since: row.since ?? null } };
      }
    } catch (e) {
      client?.release(true);
      throw e instanceof TugError ? e : pgToTugError(e, this.o.target);
    }
    this.connected = true;
    const held = client;
    let released = false;
    return {
      held: true,
      release: async () => {
        if (released) return;
        released = true;
        // Ending the session ends the lock (and its name) with it, even when the server restarted since.
        held.release(true);
      },
    };
  }

  /** Marks the pool as having reached the server (a later lost connection is retried). */
  markConnected(): void {
    this.connected = true;
  }

  /** A reader becomes a writer on the same pool: migrated to `latest`, SchemaTooNew when newer. */
  async upgrade(latest: number): Promise<void> {
    try {
      if (this.version < latest) this.version = await migrate(this.pool, this.o, latest);
    } catch (e) {
      throw pgToTugError(e, this.o.target);
    }
    if (this.version > latest) {
      throw new TugError('SchemaTooNew', { db_path: this.o.target.label, found: this.version, supported: latest });
    }
    this.writable = true;
  }
}

/**
 * Open the pool and check the schema: `read` and `write` return null when the project has no schema yet;
 * `create` creates it, and `write` and `create` migrate it under a session advisory lock (two processes migrating at once apply each
 * step once). A schema newer than this code is SchemaTooNew for writers.
 */
export async function openPg(o: PgOptions, latest: number): Promise<PgDatabase | null> {
  const pg = await loadPg();
  const config: PoolConfig = {
    connectionString: withoutSslParams(o.url),
    max: POOL_MAX,
    // A transaction's statements that do not wait for each other go out together (Conn.later).
    pipeline: true,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    idleTimeoutMillis: 10_000,
    options: `-c search_path=${quoteIdent(o.schema)}`,
    // COUNT(*) and SUM are bigint (int8) and numeric: plain numbers here, as on SQLite.
    types: {
      getTypeParser: ((oid: number, format?: string) =>
        oid === 20 || oid === 1700
          ? (v: string) => Number(v)
          : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
    },
  };
  const pool = newPool(pg, config, o.target.ssl ?? DEFAULT_SSL);
  // An idle client losing its server must not crash the process; the next query reports it.
  pool.on('error', () => undefined);
  // Nor a client checked out (inside a transaction, or holding an advisory lock) when the server goes away:
  // the pool listens only to idle clients. Its pending or next query fails, and the client is discarded.
  pool.on('connect', (client) => client.on('error', () => undefined));
  const db = new PgDatabase(pool, o, 0);
  try {
    const t0 = Date.now();
    const head = await openHead(db);
    const t1 = Date.now();
    db.markConnected();
    db.serverOffsetMs = Math.round(head.ms - (t0 + t1) / 2);
    if (head.version === null && o.mode !== 'create') {
      await db.close();
      return null;
    }
    // A missing schema (create) starts from version 0; writers are migrated like an upgraded reader.
    db.version = head.version ?? 0;
    if (o.mode !== 'read') await db.upgrade(latest);
    return db;
  } catch (e) {
    await db.close();
    throw pgToTugError(e, o.target);
  }
}

const SERVER_MS = '(extract(epoch from clock_timestamp()) * 1000)::float8';

/**
 * The server's clock and the project's schema version (null: no schema, or no schema_version table yet) in one
 * round trip when the schema exists, the common case: `search_path` is the project's schema.
 */
async function openHead(c: Conn): Promise<{ ms: number; version: number | null }> {
  try {
    const r = await c.get<{ ms: number; v: number | null }>(
      `SELECT ${SERVER_MS} AS ms, (SELECT version FROM schema_version LIMIT 1) AS v`,
    );
    return { ms: r!.ms, version: r!.v };
  } catch (e) {
    if (!(e instanceof TugError && e.details.pg_code === '42P01')) throw e;
    const r = await c.get<{ ms: number }>(`SELECT ${SERVER_MS} AS ms`);
    return { ms: r!.ms, version: null };
  }
}
