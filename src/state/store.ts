/**
 * The state store behind one interface (docs/state.md §7–§8): the operations layer calls `run(call, op,
 * input)` and never sees SQLite. `SqliteStateStore` is the embedded default; a PostgreSQL store implements
 * the same interface. A store is opened once per process (a CLI call, the driver, the MCP server) and
 * reused by every call; each call brings its own event `command`, warnings sink and work tree.
 */
import type { Clock } from '../clock.js';
import type { WarningSink } from '../contract/envelope.js';
import { TugError } from '../contract/errors.js';
import { stateDbPath, type StateConfig, type StateContext } from './context.js';
import { checkStateConfig } from './lease.js';
import type { Database } from './sql/conn.js';
import type { InitInput, InitResult } from './init.js';
import type { ClaimInput, ClaimResult } from './claim.js';
import type { OwnerInput, StartResult } from './start.js';
import type { HeartbeatInput, HeartbeatResult } from './heartbeat.js';
import type { UpdateInput, UpdateResult } from './update.js';
import type { ArtifactInput, ArtifactResult } from './artifact.js';
import type { CompleteInput, CompleteResult } from './complete.js';
import type { FailInput, FailResult, ReleaseResult } from './release.js';
import type { ResetInput, ResetResult } from './reset.js';
import type { ReconcileInput, ReconcileResult } from './reconcile.js';
import type { PruneInput } from './prune.js';
import type { ShowInput, ShowResult } from './show.js';
import type { Categories, ReadyInput } from './ready.js';
import type { LogInput, LogEvent } from './log.js';
import type { ListedPlan } from './list.js';
import type { GraphFormat, GraphResult } from './graph.js';
import type { HeldClaim } from './bridge.js';
import type { StateExportDocument } from '../contract/schemas/state-export.js';
import type { ExportInput, ImportInput, ImportResult } from './export.js';

/** What one call brings: its event `command`, where its warnings go, the work tree it runs in. */
export interface StateCall {
  command: string;
  warnings: WarningSink;
  /** Canonical root of the caller's work tree (plans are read from here). */
  workTree: string;
  /** Base directory for relative plan paths. */
  cwd: string;
}

type Op<I, O> = (input: I) => O;
/** Every operation of the state library, by name: input → result. */
export interface StateOps {
  init: Op<InitInput, InitResult>;
  claim: Op<ClaimInput, ClaimResult>;
  start: Op<OwnerInput, StartResult>;
  heartbeat: Op<HeartbeatInput, HeartbeatResult>;
  update: Op<UpdateInput, UpdateResult>;
  artifact: Op<ArtifactInput, ArtifactResult>;
  complete: Op<CompleteInput, CompleteResult>;
  release: Op<OwnerInput, ReleaseResult>;
  fail: Op<FailInput, FailResult>;
  reset: Op<ResetInput, ResetResult>;
  reconcile: Op<ReconcileInput, ReconcileResult>;
  prune: Op<PruneInput, { pruned: string[]; dry_run: boolean }>;
  show: Op<ShowInput, ShowResult>;
  ready: Op<ReadyInput, Categories>;
  log: Op<LogInput, { events: LogEvent[] } & Record<string, unknown>>;
  list: Op<Record<string, never>, { plans: ListedPlan[] }>;
  graph: Op<{ plan: string; format: GraphFormat }, GraphResult>;
  claimsHeldBy: Op<{ worktree: string }, HeldClaim[]>;
  adminRelease: Op<{ plan: string; step: string; worktree: string }, { released: boolean }>;
  completionBlocker: Op<Omit<CompleteInput, 'force' | 'dry_run'>, TugError | null>;
  /** `Tug-Refactor` trailer values of a step's applied refactor rows (commit messages). */
  refactorTrailers: Op<{ plan: string; step: string; worktree: string }, string[]>;
  /** `state export`: a plan's rows and events as one document (docs/state.md §8). */
  export: Op<ExportInput, StateExportDocument>;
  /** `state import`: a document's rows into this store, in one transaction. */
  import: Op<ImportInput, ImportResult>;
}
export type OpName = keyof StateOps;
export type OpInput<K extends OpName> = Parameters<StateOps[K]>[0];
export type OpResult<K extends OpName> = Awaited<ReturnType<StateOps[K]>>;

export interface StateStore {
  readonly backend: 'sqlite' | 'postgres';
  /** Where the state lives, for people: the state.db path, or the PostgreSQL URL without its password. */
  readonly location: string;
  /**
   * The owner name of a worktree in this store: its canonical path on SQLite, `<host>:<path>` on
   * PostgreSQL (docs/state.md §8). `run` applies it to every `worktree` input itself; callers of
   * `withContext` apply it to theirs.
   */
  owner(worktree: string): string;
  run<K extends OpName>(call: StateCall, op: K, input: OpInput<K>): Promise<OpResult<K>>;
  /**
   * The library context for code that works on the embedded store directly (the refactor rows of
   * `refactor run-step`): `read` never creates or migrates, `write` needs an initialized repository.
   */
  withContext<T>(call: StateCall, mode: 'read' | 'write', fn: (ctx: StateContext) => Promise<T> | T): Promise<T>;
  /**
   * The integration lock of `plan` (docs/run.md §1 item 4.7, docs/state.md §8), held until the returned
   * release: the repo-wide `.tugtool/integration.lock` file on SQLite; on PostgreSQL a session advisory
   * lock on the project and plan, so every host integrating the plan takes turns. Past `timeoutMs`: Busy.
   */
  integrationLock(plan: string, timeoutMs?: number): Promise<() => Promise<void>>;
  /** PostgreSQL: once `signal` aborts (the process is stopping), a lost connection is no longer retried. */
  stopOn?(signal: AbortSignal): void;
  close(): Promise<void>;
}

export type Mode = 'read' | 'write';
/** Read-only operations open state.db read-only and never create or migrate it. */
export const MODES: Record<OpName, Mode> = {
  init: 'read', // state init upgrades to a writer itself, after validating the plan (a refused init creates nothing)
  claim: 'write',
  start: 'write',
  heartbeat: 'write',
  update: 'write',
  artifact: 'write',
  complete: 'write',
  release: 'write',
  fail: 'write',
  reset: 'write',
  reconcile: 'write',
  prune: 'write',
  show: 'read',
  ready: 'read',
  log: 'read',
  list: 'read',
  graph: 'read',
  claimsHeldBy: 'read',
  adminRelease: 'write',
  completionBlocker: 'write',
  refactorTrailers: 'read',
  export: 'read',
  import: 'read', // upgrades to a writer itself after validating the document (a refused import creates nothing)
};

type Impl = (ctx: StateContext, input: never) => unknown;
/** Each operation's module loads on first use, so `state heartbeat` never loads the plan parser. */
export const IMPLS: Record<OpName, () => Promise<Impl>> = {
  init: async () => (await import('./init.js')).init,
  claim: async () => (await import('./claim.js')).claim,
  start: async () => (await import('./start.js')).start,
  heartbeat: async () => (await import('./heartbeat.js')).heartbeat,
  update: async () => (await import('./update.js')).update,
  artifact: async () => (await import('./artifact.js')).artifact,
  complete: async () => (await import('./complete.js')).complete,
  release: async () => (await import('./release.js')).release,
  fail: async () => (await import('./release.js')).fail,
  reset: async () => (await import('./reset.js')).reset,
  reconcile: async () => (await import('./reconcile.js')).reconcile,
  prune: async () => (await import('./prune.js')).prune,
  show: async () => (await import('./show.js')).show,
  ready: async () => (await import('./ready.js')).ready,
  log: async () => (await import('./log.js')).log,
  list: async () => (await import('./list.js')).list,
  graph: async () => (await import('./graph.js')).graph,
  claimsHeldBy: async () => {
    const { claimsHeldBy } = await import('./bridge.js');
    return (ctx: StateContext, input: { worktree: string }) => claimsHeldBy(ctx, input.worktree);
  },
  adminRelease: async () => (await import('./bridge.js')).adminRelease,
  completionBlocker: async () => (await import('./bridge.js')).completionBlocker,
  refactorTrailers: async () => {
    const { refactorRows, refactorTrailers } = await import('./refactors.js');
    return async (ctx: StateContext, input: { plan: string; step: string; worktree: string }) =>
      refactorTrailers(await refactorRows(ctx, input));
  },
  export: async () => (await import('./export.js')).exportPlan,
  import: async () => (await import('./export.js')).importPlan,
};

/** The library context of one call: the store's settings, the call's own parts, and the open database. */
export function callContext(
  o: { repoRoot: string; config: StateConfig; env: NodeJS.ProcessEnv },
  call: StateCall,
  open: Pick<StateContext, 'store' | 'clock' | 'dbPath' | 'ownerPrefix' | 'openWriter'>,
): StateContext {
  return {
    ...open,
    repoRoot: o.repoRoot,
    workTree: call.workTree,
    config: o.config,
    warnings: call.warnings,
    command: call.command,
    cwd: call.cwd,
    env: o.env,
  };
}

export interface SqliteStoreOptions {
  /** Canonical main repo root (where `.tugtool/state.db` lives). */
  repoRoot: string;
  clock: Clock;
  config: StateConfig;
  env: NodeJS.ProcessEnv;
  /** Override the DB path (else TUGCODE_STATE_DB, else <repoRoot>/.tugtool/state.db). */
  dbPath?: string;
}

/** The embedded store: one better-sqlite3 connection, opened on first use and kept until close(). */
export class SqliteStateStore implements StateStore {
  readonly backend = 'sqlite' as const;
  readonly dbPath: string;
  get location(): string {
    return this.dbPath;
  }
  owner(worktree: string): string {
    return worktree;
  }
  private db: Database | null = null;
  private readonly overridden: boolean;

  constructor(private readonly o: SqliteStoreOptions) {
    checkStateConfig(o.config);
    this.overridden = Boolean(o.dbPath ?? o.env.TUGCODE_STATE_DB);
    this.dbPath = o.dbPath ?? stateDbPath(o.repoRoot, o.env);
  }

  /** The connection for `mode`: a writer serves reads too; a reader is replaced by a writer when needed. */
  private async open(mode: Mode): Promise<Database | null> {
    if (this.db && !this.db.open) this.db = null;
    if (this.db && (mode === 'read' || !this.db.readonly)) return this.db;
    // Loaded here, not at the top: better-sqlite3 is a native module, and pg-store.ts imports this file.
    const { openStore } = await import('./sqlite-open.js');
    const opened = openStore(mode, {
      repoRoot: this.o.repoRoot,
      path: this.dbPath,
      env: this.o.env,
      overridden: this.overridden,
    });
    if (opened) {
      await this.close();
      this.db = opened;
    }
    return opened;
  }

  private async context(call: StateCall, mode: Mode): Promise<StateContext> {
    return callContext(this.o, call, { store: await this.open(mode), clock: this.o.clock, dbPath: this.dbPath });
  }

  async withContext<T>(call: StateCall, mode: Mode, fn: (ctx: StateContext) => Promise<T> | T): Promise<T> {
    const ctx = await this.context(call, mode);
    try {
      return await fn(ctx);
    } finally {
      // An operation may have upgraded the context to a writer (state init): keep that connection.
      if (ctx.store && ctx.store !== this.db) {
        await this.close();
        this.db = ctx.store;
      }
    }
  }

  async run<K extends OpName>(call: StateCall, op: K, input: OpInput<K>): Promise<OpResult<K>> {
    const impl = await IMPLS[op]();
    return this.withContext(call, MODES[op], (ctx) => impl(ctx, input as never) as OpResult<K>);
  }

  async integrationLock(_plan: string, timeoutMs = 60_000): Promise<() => Promise<void>> {
    const { lockIntegrationFile } = await import('../util/integration-lock.js');
    return lockIntegrationFile(this.o.repoRoot, timeoutMs);
  }

  async close(): Promise<void> {
    const db = this.db;
    this.db = null;
    await db?.close();
  }
}
