/**
 * The state store on PostgreSQL (docs/state.md §8): the same operations as SqliteStateStore, run over a
 * `pg` pool in the project's own schema. Owners are host-qualified (`<host>:<worktree>`), and "now" is
 * the server's clock (TUGCODE_NOW still fixes it under tests). The pool opens on first use.
 */
import { createHash } from 'node:crypto';
import { formatTimestamp, type Clock } from '../clock.js';
import { inStore, pgAddress, TugError } from '../contract/errors.js';
import type { StateConfig, StateContext } from './context.js';
import { checkStateConfig } from './lease.js';
import { LATEST_SCHEMA_VERSION, migrationsDir } from './migrate.js';
import { openPg, type OutageWatch, type PgDatabase } from './sql/postgres.js';
import { pgTarget, type PgTarget } from './sql/pg-sql.js';
import { callContext, StateStore, type Mode, type StateCall } from './store.js';

type PgMode = Mode | 'create';
const RANK: Record<PgMode, number> = { read: 0, write: 1, create: 2 };

export interface PgStoreOptions {
  url: string;
  /** The project id (already resolved: `[state] project`, else the root commit's hash). */
  project: string;
  /** This machine in owner names. */
  host: string;
  /** This machine's own id (src/ops/state-backend.ts `machineId`), whatever `host` says. */
  machine?: string;
  repoRoot: string;
  clock: Clock;
  config: StateConfig;
  env: NodeJS.ProcessEnv;
  /** A process serving many calls (the driver, the MCP server) rides out a server restart. */
  longLived: boolean;
  /** The work tree of the repository holding an absolute path (src/plan/resolve.ts `workTreeHolding`). */
  workTreeHolding?: (abs: string) => string | null;
}

/** How long a long-lived process retries a lost connection before DatabaseUnavailable. */
const RETRY_MS_LONG_LIVED = 120_000;

/** The retry budget of a long-lived process; TUGCODE_PG_RETRY_MS shortens it, honoured only under NODE_ENV=test. */
function retryBudgetMs(env: NodeJS.ProcessEnv): number {
  const v = env.NODE_ENV === 'test' ? env.TUGCODE_PG_RETRY_MS : undefined;
  return v && /^\d+$/.test(v) ? Number(v) : RETRY_MS_LONG_LIVED;
}

/** The longest id kept as it is in a schema name (`tug_` + 40 stays well under PostgreSQL's 63 bytes). */
const ID_MAX = 40;

/**
 * `tug_<id>`: the project's schema. Ids are lowercased; anything but [a-z0-9_] becomes `_`. An id longer
 * than 40 characters keeps its first 27 and the first 12 hex digits of the SHA-256 of the whole (cleaned)
 * id, so long ids that differ anywhere get schemas of their own; shorter ids are used as they are.
 */
export function projectSchema(project: string): string {
  const id = project.toLowerCase().replace(/[^a-z0-9_]/g, '_');
  if (!id) throw new TugError('ConfigInvalid', { source: 'state.project', reason: 'the project id is empty' });
  if (id.length <= ID_MAX) return `tug_${id}`;
  const hash = createHash('sha256').update(id).digest('hex').slice(0, 12);
  return `tug_${id.slice(0, ID_MAX - hash.length - 1)}_${hash}`;
}

export class PgStateStore extends StateStore {
  readonly backend = 'postgres' as const;
  readonly target: PgTarget;
  readonly schema: string;
  /** What this machine's owner names start with. */
  private readonly prefix: string;
  private pending: { rank: number; p: Promise<PgDatabase | null> } | null = null;
  private opened: PgDatabase | null = null;
  /** The release of holdRunIdentity's session, ended by close. */
  private identity: (() => Promise<void>) | null = null;
  /** Handed over by stopOn: the databases opened stop retrying once it aborts. */
  private stop: AbortSignal | undefined;
  /** Handed over by watchOutage: told of the outages the databases opened ride out. */
  private watch: OutageWatch | undefined;

  constructor(private readonly o: PgStoreOptions) {
    super();
    checkStateConfig(o.config);
    this.target = pgTarget(o.url, o.env);
    this.schema = projectSchema(o.project);
    this.prefix = `${o.host}:`;
  }

  get location(): string {
    return `${this.target.label} (schema ${this.schema})`;
  }

  /** What error messages say instead of "state.db": `PostgreSQL schema tug_x (host:port/database)`. */
  override get described(): string {
    const { host, port, database } = this.target;
    return `PostgreSQL schema ${this.schema} (${pgAddress(host, port)}/${database})`;
  }

  owner(worktree: string): string {
    return worktree.startsWith(this.prefix) ? worktree : this.prefix + worktree;
  }

  /**
   * The open database. `read` and `write` find none while the project has no schema (a refused command
   * creates nothing); `create` (state init, through ensureWriter) makes it. A database opened to read is
   * upgraded in place (migrated on the same pool) when a writer is needed. A missing schema is never cached:
   * a long-lived process sees a project another process initialized later.
   */
  async open(mode: PgMode): Promise<PgDatabase | null> {
    const rank = RANK[mode];
    if (this.opened?.open) {
      if (rank > 0 && this.opened.readonly) await this.opened.upgrade(LATEST_SCHEMA_VERSION);
      return this.opened;
    }
    if (!this.pending || this.pending.rank < rank) {
      const p = openPg(
        {
          url: this.o.url,
          target: this.target,
          schema: this.schema,
          mode,
          retryMs: this.o.longLived ? retryBudgetMs(this.o.env) : 0,
          migrationsDir: `${migrationsDir()}/pg`,
        },
        LATEST_SCHEMA_VERSION,
      ).then((db) => {
        if (db) this.opened = db;
        if (db && this.stop) db.stopOn(this.stop);
        if (db && this.watch) db.watchOutage(this.watch);
        return db;
      });
      const entry = { rank, p };
      this.pending = entry;
      const done = () => {
        if (this.pending === entry) this.pending = null;
      };
      p.then(done, done);
    }
    const db = await this.pending.p;
    if (db && rank > 0 && db.readonly) return this.open(mode);
    return db;
  }

  /**
   * The process is stopping once `signal` aborts (the driver's SIGINT/SIGTERM): from then on a lost
   * connection is not retried, so the stop is not held up by a server that is gone.
   */
  override stopOn(signal: AbortSignal): void {
    this.stop = signal;
    this.opened?.stopOn(signal);
  }

  /** Tells `watch` when a lost connection starts being retried, and when a call succeeds again. */
  override watchOutage(watch: OutageWatch): void {
    this.watch = watch;
    this.opened?.watchOutage(watch);
  }

  /** The server's clock, unless TUGCODE_NOW fixed the process's. */
  private clock(db: PgDatabase | null): Clock {
    if (this.o.env.TUGCODE_NOW || !db) return this.o.clock;
    const offset = db.serverOffsetMs;
    return { now: () => formatTimestamp(Date.now() + offset), nowMs: () => Date.now() + offset };
  }

  async withContext<T>(call: StateCall, mode: Mode, fn: (ctx: StateContext) => Promise<T> | T): Promise<T> {
    const db = await this.open(mode);
    const ctx = callContext(this.o, call, {
      store: db,
      clock: this.clock(db),
      dbPath: this.location,
      ownerPrefix: this.prefix,
      openWriter: async () => (await this.open('create'))!,
    });
    try {
      return await fn(ctx);
    } catch (e) {
      throw inStore(e, this.described);
    }
  }

  /** The server's time (what leases are measured by), unless TUGCODE_NOW fixed the process's. */
  async now(): Promise<string> {
    return this.clock(await this.open('read')).now();
  }

  protected override qualify<I>(input: I): I {
    const w = (input as { worktree?: unknown } | null)?.worktree;
    return typeof w === 'string' ? { ...input, worktree: this.owner(w) } : input;
  }

  /** A session advisory lock (class 4) on the project's schema and the plan, on a client of its own. */
  async integrationLock(plan: string, timeoutMs = 60_000): Promise<() => Promise<void>> {
    // The lock needs a connection, not the schema; `create` because a run takes it before its `state init`.
    const db = await this.open('create');
    if (!db) throw new TugError('InternalError', { reason: 'the PostgreSQL state did not open' });
    return db.sessionLock(4, `tugcode:integrate:${this.schema}:${plan}`, timeoutMs);
  }

  /**
   * docs/state.md §8.4: a `run` of `plan` holds a session advisory lock (class 6) on the owners it
   * claims as (`<host>:<main root>`), in a session named after this machine, until the store closes. Two
   * machines given one host name by mistake, with their clones at one path, would otherwise both take every
   * claim as their own and implement each step twice: the second is RunInProgress before it claims. A lock
   * held from this same machine is a session left by a process that is gone (the clone's run lock keeps two
   * live runs apart here), so the run goes on without it.
   */
  override async holdRunIdentity(plan: string): Promise<void> {
    if (this.identity) return;
    const db = await this.open('create');
    if (!db) throw new TugError('InternalError', { reason: 'the PostgreSQL state did not open' });
    // application_name keeps 63 bytes: "tugcode run " + 32 + " pid " + a pid fit.
    const machine = (this.o.machine ?? this.o.host).slice(0, 32);
    const as = this.owner(this.o.repoRoot);
    const r = await db.tryHold(
      6,
      `tugcode:run:${this.schema}:${plan}:${as}`,
      `tugcode run ${machine} pid ${process.pid}`,
    );
    if (r.held) {
      this.identity = r.release;
      return;
    }
    const m = /^tugcode run (\S+) pid (\d+)$/.exec(r.holder.name ?? '');
    if (m && m[1] === machine) return;
    const where = [
      m ? `machine ${m[1]}, pid ${m[2]}` : null,
      r.holder.addr ? `from ${r.holder.addr}` : null,
      r.holder.since ? `since ${r.holder.since}` : null,
    ].filter(Boolean);
    throw new TugError(
      'RunInProgress',
      {
        plan_path: plan,
        holder_host: this.o.host,
        ...(m ? { holder_machine: m[1], holder_pid: Number(m[2]) } : {}),
        ...(r.holder.addr ? { holder_addr: r.holder.addr } : {}),
        ...(r.holder.since ? { started_at: r.holder.since } : {}),
        owner: as,
        reason: 'another machine runs it as the same owners',
      },
      {
        message:
          `another machine runs ${plan} as host ${this.o.host} from a clone at the same path ` +
          `(${where.join(', ') || 'its session is not visible to this user'}): both would take every claim of ` +
          `${as} as their own and do each step twice`,
        hint:
          'give each machine a host of its own: TUGCODE_STATE_HOST=<name> on each, or leave [state] host empty ' +
          '(the machine id); a [state] host in the committed config.toml names every clone alike',
      },
    );
  }

  async close(): Promise<void> {
    const identity = this.identity;
    this.identity = null;
    await identity?.();
    const db = this.opened;
    this.opened = null;
    this.pending = null;
    await db?.close();
  }
}
