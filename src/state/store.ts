/**
 * The state store (docs/state.md §7–§8): the one entrance to the state library. Each operation is a method
 * — `store.claim(call, input)`, `store.heartbeat(call, input)`, … — whose body names the library function
 * it runs, so "go to definition" goes from a caller to the method and from there to the function. Each
 * function's module loads on its first call, so `state heartbeat` never loads the plan parser.
 *
 * `SqliteStateStore` is the embedded default; `PgStateStore` (pg-store.ts) runs the same operations on
 * PostgreSQL. A store is opened once per process (a CLI call, the driver, the MCP server) and reused by
 * every call; each call brings its own event `command`, warnings sink and work tree (`stateCall`).
 */
import type { DecideInput, DecideResult, EscalateInput, EscalateResult } from './supervision.js';
import type { Clock } from '../clock.js';
import type { WarningSink } from '../contract/envelope.js';
import { inStore, type TugError } from '../contract/errors.js';
import { stateDbPath, type StateConfig, type StateContext } from './context.js';
import { checkStateConfig } from './lease.js';
import type { Database } from './sql/conn.js';
import type { InitInput, InitResult } from './init.js';
import type { ClaimInput, ClaimResult } from './claim.js';
import type { OwnerInput, StartResult } from './start.js';
import type { HeartbeatInput, HeartbeatResult } from './heartbeat.js';
import type { UpdateInput, UpdateResult } from './update.js';
import type { ArtifactInput, ArtifactResult } from './artifact.js';
import type { UsageInput, UsageResult } from './usage.js';
import type { UsageTotals } from '../contract/usage.js';
import type { CompleteInput, CompleteResult } from './complete.js';
import type { FailInput, FailResult, ReleaseResult } from './release.js';
import type { ResetInput, ResetResult } from './reset.js';
import type { ReconcileInput, ReconcileResult } from './reconcile.js';
import type { PruneInput } from './prune.js';
import type { ParsedPlan } from '../plan/types.js';
import type { ShowInput, ShowResult } from './show.js';
import type { Categories, ReadyInput } from './ready.js';
import type { LogInput, LogResult } from './log.js';
import type { ListedPlan } from './list.js';
import type { GraphFormat, GraphResult } from './graph.js';
import type { FailedAttempt, HeldClaim } from './bridge.js';
import type { SkipInput, SkipResult } from './refactors.js';
import type { StateExportDocument } from '../contract/schemas/state-export.js';
import type { ExportInput, ImportInput, ImportResult } from './export.js';
import type { ArtifactsInput, ListedArtifact } from './artifacts.js';
import type { IntegrationTarget, TargetInput, TargetResult } from './integration-target.js';
import type { StoredPlan } from './stored-plan.js';
import type { LastRun } from './last-run.js';

/** What one call brings: its event `command`, where its warnings go, the work tree it runs in. */
export interface StateCall {
  command: string;
  warnings: WarningSink;
  /** Canonical root of the caller's work tree (plans are read from here). */
  workTree: string;
  /** Base directory for relative plan paths. */
  cwd: string;
}

/**
 * The one builder of a state call: `call`'s event command and warnings, in `workTree`; relative plan paths
 * resolve against `cwd`, by default the work tree itself (callers that pass repo-relative paths).
 */
export function stateCall(
  call: { command: string; warnings: WarningSink },
  workTree: string,
  cwd: string = workTree,
): StateCall {
  return { command: call.command, warnings: call.warnings, workTree, cwd };
}

/** Read-only operations open state.db read-only and never create or migrate it. */
export type Mode = 'read' | 'write';

/** A library function: the context of one call and its input → its result. */
type Impl<I, O> = (ctx: StateContext, input: I) => Promise<O> | O;

export abstract class StateStore {
  abstract readonly backend: 'sqlite' | 'postgres';
  /** Where the state lives, for people: the state.db path, or the PostgreSQL URL without its password. */
  abstract readonly location: string;
  /** Where the state lives, for messages and debug lines: never a user name or password (docs/state.md §8). */
  get described(): string {
    return this.location;
  }
  /**
   * The owner name of a worktree in this store: its canonical path on SQLite, `<host>:<path>` on
   * PostgreSQL (docs/state.md §8). The operations apply it to every `worktree` input themselves.
   */
  abstract owner(worktree: string): string;
  /**
   * The library context of one call, for a flow that works on the library across its own steps (the
   * refactor run-step of src/ops/refactor.ts: kernel calls between short transactions). `read` never
   * creates or migrates; `write` needs an initialized repository. Owners in its inputs are the caller's to
   * qualify (`owner`).
   */
  abstract withContext<T>(call: StateCall, mode: Mode, fn: (ctx: StateContext) => Promise<T> | T): Promise<T>;
  /**
   * The integration lock of `plan` (docs/run.md §1 item 4.7, docs/state.md §8), held until the returned
   * release: the repo-wide `.tugtool/integration.lock` file on SQLite; on PostgreSQL a session advisory
   * lock on the project and plan, so every host integrating the plan takes turns. Past `timeoutMs`: Busy.
   */
  abstract integrationLock(plan: string, timeoutMs?: number): Promise<() => Promise<void>>;
  /** PostgreSQL: once `signal` aborts (the process is stopping), a lost connection is no longer retried. */
  stopOn?(signal: AbortSignal): void;
  /**
   * PostgreSQL: `watch.lost` once when a lost connection starts being retried (an outage the process rides
   * out), `watch.back` once when a call succeeds again (docs/state.md §8.1).
   */
  watchOutage?(watch: { lost(error: TugError, budgetMs: number): void; back(ms: number): void }): void;
  /** PostgreSQL: a `run` of `plan` (with `--remote` or not) is the only one claiming as this clone's owners (docs/state.md §8.4). */
  holdRunIdentity?(plan: string): Promise<void>;
  abstract close(): Promise<void>;

  /** A `worktree` input as this store names owners (PostgreSQL qualifies it with the host). */
  protected qualify<I>(input: I): I {
    return input;
  }

  /** One operation: its module loaded (once), then run in a context of `mode` with its owner qualified. */
  private async op<I, O>(call: StateCall, mode: Mode, input: I, load: () => Promise<Impl<I, O>>): Promise<O> {
    const impl = await load();
    const qualified = this.qualify(input);
    return this.withContext(call, mode, (ctx) => impl(ctx, qualified));
  }

  // The operations, one per `state` command (docs/state.md §4), then the questions other callers ask.

  /** `state init`. Opened to read: init upgrades to a writer after validating the plan (a refused init creates nothing). */
  init(call: StateCall, input: InitInput): Promise<InitResult> {
    return this.op(call, 'read', input, async () => (await import('./init.js')).init);
  }

  claim(call: StateCall, input: ClaimInput): Promise<ClaimResult> {
    return this.op(call, 'write', input, async () => (await import('./claim.js')).claim);
  }

  start(call: StateCall, input: OwnerInput): Promise<StartResult> {
    return this.op(call, 'write', input, async () => (await import('./start.js')).start);
  }

  heartbeat(call: StateCall, input: HeartbeatInput): Promise<HeartbeatResult> {
    return this.op(call, 'write', input, async () => (await import('./heartbeat.js')).heartbeat);
  }

  update(call: StateCall, input: UpdateInput): Promise<UpdateResult> {
    return this.op(call, 'write', input, async () => (await import('./update.js')).update);
  }

  artifact(call: StateCall, input: ArtifactInput): Promise<ArtifactResult> {
    return this.op(call, 'write', input, async () => (await import('./artifact.js')).artifact);
  }

  /** The ledger (docs/state.md §2): what one agent run of the owner's attempt used, fenced like `artifact`. */
  recordUsage(call: StateCall, input: UsageInput): Promise<UsageResult> {
    return this.op(call, 'write', input, async () => (await import('./usage.js')).recordUsage);
  }

  complete(call: StateCall, input: CompleteInput): Promise<CompleteResult> {
    return this.op(call, 'write', input, async () => (await import('./complete.js')).complete);
  }

  release(call: StateCall, input: OwnerInput): Promise<ReleaseResult> {
    return this.op(call, 'write', input, async () => (await import('./release.js')).release);
  }

  fail(call: StateCall, input: FailInput): Promise<FailResult> {
    return this.op(call, 'write', input, async () => (await import('./release.js')).fail);
  }

  /** The owner's claim ends in needs_human, its commit kept (docs/state.md §3.11). */
  escalate(call: StateCall, input: EscalateInput): Promise<EscalateResult> {
    return this.op(call, 'write', input, async () => (await import('./supervision.js')).escalate);
  }

  /** A person's answer to a needs_human step (docs/state.md §3.11). */
  decide(call: StateCall, input: DecideInput): Promise<DecideResult> {
    return this.op(call, 'write', input, async () => (await import('./supervision.js')).decide);
  }

  reset(call: StateCall, input: ResetInput): Promise<ResetResult> {
    return this.op(call, 'write', input, async () => (await import('./reset.js')).reset);
  }

  reconcile(call: StateCall, input: ReconcileInput): Promise<ReconcileResult> {
    return this.op(call, 'write', input, async () => (await import('./reconcile.js')).reconcile);
  }

  prune(call: StateCall, input: PruneInput): Promise<{ pruned: string[]; dry_run: boolean }> {
    return this.op(call, 'write', input, async () => (await import('./prune.js')).prune);
  }

  show(call: StateCall, input: ShowInput): Promise<ShowResult> {
    return this.op(call, 'read', input, async () => (await import('./show.js')).show);
  }

  ready(call: StateCall, input: ReadyInput): Promise<Categories> {
    return this.op(call, 'read', input, async () => (await import('./ready.js')).ready);
  }

  log(call: StateCall, input: LogInput): Promise<LogResult> {
    return this.op(call, 'read', input, async () => (await import('./log.js')).log);
  }

  list(call: StateCall): Promise<{ plans: ListedPlan[] }> {
    return this.op(call, 'read', {}, async () => (await import('./list.js')).list);
  }

  graph(call: StateCall, input: { plan: string; format: GraphFormat }): Promise<GraphResult> {
    return this.op(call, 'read', input, async () => (await import('./graph.js')).graph);
  }

  /** A top-level step's artifacts and its substeps', their content cut (the board's step detail). */
  artifacts(call: StateCall, input: ArtifactsInput): Promise<{ artifacts: ListedArtifact[] }> {
    return this.op(call, 'read', input, async () => (await import('./artifacts.js')).artifacts);
  }

  /** `state export`: a plan's rows and events as one document (docs/state.md §8). */
  exportPlan(call: StateCall, input: ExportInput): Promise<StateExportDocument> {
    return this.op(call, 'read', input, async () => (await import('./export.js')).exportPlan);
  }

  /** `state import`: a document's rows into this store, in one transaction (it upgrades to a writer itself, after validating the document). */
  importPlan(call: StateCall, input: ImportInput): Promise<ImportResult> {
    return this.op(call, 'read', input, async () => (await import('./export.js')).importPlan);
  }

  /** The hashes `state init` stored of a plan: what a dry run compares with the plan it previews. */
  storedPlan(call: StateCall, input: { plan: string }): Promise<StoredPlan> {
    return this.op(call, 'read', input, async () => (await import('./stored-plan.js')).storedPlan);
  }

  /** The steps whose human decision a re-initialisation from a parsed plan keeps: what a dry run previews. */
  reinitKeeps(call: StateCall, input: { plan: string; parsed: ParsedPlan }): Promise<{ kept_decisions: string[] }> {
    return this.op(call, 'read', input, async () => (await import('./stored-plan.js')).reinitKeeps);
  }

  /** The plan's usage totals (docs/state.md §2): what `run`'s budget compares. */
  usageTotals(call: StateCall, input: { plan: string }): Promise<UsageTotals> {
    return this.op(call, 'read', input, async () => (await import('./usage.js')).usageTotals);
  }

  /** A top-level step's progress through the state, as a signature and its newest time (the run's watchdog). */
  stepActivity(
    call: StateCall,
    input: { plan: string; step: string },
  ): Promise<{ signature: string; last_at: string | null }> {
    return this.op(call, 'read', input, async () => (await import('./usage.js')).stepActivity);
  }

  /** Where the plan integrates (docs/state.md §8.4): the recorded target, or null. */
  integrationTarget(call: StateCall, input: { plan: string }): Promise<IntegrationTarget | null> {
    return this.op(call, 'read', input, async () => (await import('./integration-target.js')).integrationTarget);
  }

  /** IntegrationTargetMismatch when the plan integrates elsewhere than `input` would (reads only). */
  checkIntegrationTarget(call: StateCall, input: TargetInput): Promise<TargetResult> {
    return this.op(call, 'read', input, async () => (await import('./integration-target.js')).checkIntegrationTarget);
  }

  /** Record where the plan integrates at its first integration (or a move); a different target refuses. */
  recordIntegrationTarget(call: StateCall, input: TargetInput): Promise<TargetResult> {
    return this.op(call, 'write', input, async () => (await import('./integration-target.js')).recordIntegrationTarget);
  }

  /** The flags of the plan's last run that ended, and when (docs/state.md §2); null when none is recorded. */
  lastRun(call: StateCall, input: { plan: string }): Promise<LastRun | null> {
    return this.op(call, 'read', input, async () => (await import('./last-run.js')).lastRun);
  }

  /** Records the flags of a run of the plan that ended, replacing the last one's (docs/run.md §1.2). */
  recordLastRun(call: StateCall, input: { plan: string; run_flags: string[] }): Promise<LastRun> {
    return this.op(call, 'write', input, async () => (await import('./last-run.js')).recordLastRun);
  }

  /** Top-level steps held (claimed or in progress, live or expired) by `worktree`, in every plan. */
  claimsHeldBy(call: StateCall, input: { worktree: string }): Promise<HeldClaim[]> {
    return this.op(call, 'read', input, async () => {
      const { claimsHeldBy } = await import('./bridge.js');
      return (ctx: StateContext, i: { worktree: string }) => claimsHeldBy(ctx, i.worktree);
    });
  }

  /** `worktree remove --force`: ends `worktree`'s claim on a top-level step as an admin action. */
  adminRelease(
    call: StateCall,
    input: { plan: string; step: string; worktree: string },
  ): Promise<{ released: boolean }> {
    return this.op(call, 'write', input, async () => (await import('./bridge.js')).adminRelease);
  }

  /** The error strict `complete` would raise now, or null (a completion run and rolled back). */
  completionBlocker(call: StateCall, input: Omit<CompleteInput, 'force' | 'dry_run'>): Promise<TugError | null> {
    return this.op(call, 'write', input, async () => (await import('./bridge.js')).completionBlocker);
  }

  /** The earlier failed attempts of a step, oldest first, with their reasons (the step brief's). */
  previousFailures(call: StateCall, input: { plan: string; step: string }): Promise<FailedAttempt[]> {
    return this.op(call, 'read', input, async () => (await import('./bridge.js')).previousFailures);
  }

  /** `Tug-Refactor` trailer values of a step's applied refactor rows (commit messages). */
  refactorTrailers(call: StateCall, input: { plan: string; step: string; worktree: string }): Promise<string[]> {
    return this.op(call, 'read', input, async () => {
      const { refactorRows, refactorTrailers } = await import('./refactors.js');
      return async (ctx: StateContext, i: { plan: string; step: string; worktree: string }) =>
        refactorTrailers(await refactorRows(ctx, i));
    });
  }

  /**
   * The step's refactor rows neither applied nor skipped, in ordinal order (read-only, no ownership):
   * `tugcode commit` refuses before committing while any is left (docs/git.md §4).
   */
  openRefactors(
    call: StateCall,
    input: { plan: string; step: string; worktree: string },
  ): Promise<{ ordinal: number; op_text: string; status: string }[]> {
    return this.op(call, 'read', input, async () => {
      const { refactorRows } = await import('./refactors.js');
      const { REFACTOR_DONE } = await import('./status.js');
      return async (ctx: StateContext, i: { plan: string; step: string; worktree: string }) =>
        (await refactorRows(ctx, i))
          .filter((r) => !REFACTOR_DONE.has(r.status))
          .map((r) => ({ ordinal: r.ordinal, op_text: r.op_text, status: r.status }));
    });
  }

  /** `refactor skip`: an open or failed refactor row of the owner's step marked skipped. */
  skipRefactor(call: StateCall, input: SkipInput): Promise<SkipResult> {
    return this.op(call, 'write', input, async () => (await import('./refactors.js')).skipRefactor);
  }
}

/** The library context of one call: the store's settings, the call's own parts, and the open database. */
export function callContext(
  o: {
    repoRoot: string;
    config: StateConfig;
    env: NodeJS.ProcessEnv;
    workTreeHolding?: ((abs: string) => string | null) | undefined;
  },
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
    workTreeHolding: o.workTreeHolding,
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
  /** The work tree of the repository holding an absolute path (src/plan/resolve.ts `workTreeHolding`). */
  workTreeHolding?: (abs: string) => string | null;
}

/** The embedded store: one better-sqlite3 connection, opened on first use and kept until close(). */
export class SqliteStateStore extends StateStore {
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
    super();
    checkStateConfig(o.config);
    this.overridden = Boolean(o.dbPath ?? o.env.TUGCODE_STATE_DB);
    this.dbPath = o.dbPath ?? stateDbPath(o.repoRoot, o.env);
  }

  /**
   * The connection for `mode`, taken for one call (`giveBack` returns it): a writer serves reads too; a
   * reader is replaced by a writer when needed. Calls run at once (the MCP server serves them concurrently),
   * so opening is serialized, and a replaced connection is closed only when its last call is done: closing
   * it under a call still reading would fail that call as an InternalError.
   */
  private acquire(mode: Mode): Promise<Database | null> {
    const next = this.opening.then(async () => {
      const db = await this.open(mode);
      if (db) this.users.set(db, (this.users.get(db) ?? 0) + 1);
      return db;
    });
    this.opening = next.catch(() => undefined);
    return next;
  }

  private async giveBack(db: Database | null): Promise<void> {
    if (!db) return;
    const left = (this.users.get(db) ?? 1) - 1;
    if (left > 0) return void this.users.set(db, left);
    this.users.delete(db);
    if (db !== this.db && this.retired.delete(db)) await db.close();
  }

  /** Stops handing `this.db` out; closes it now unless a call still uses it (then `giveBack` does). */
  private async retire(): Promise<void> {
    const db = this.db;
    this.db = null;
    if (!db) return;
    if (this.users.has(db)) this.retired.add(db);
    else await db.close();
  }

  private opening: Promise<unknown> = Promise.resolve();
  private readonly users = new Map<Database, number>();
  private readonly retired = new Set<Database>();

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
      await this.retire();
      this.db = opened;
    }
    return opened;
  }

  async withContext<T>(call: StateCall, mode: Mode, fn: (ctx: StateContext) => Promise<T> | T): Promise<T> {
    const given = await this.acquire(mode);
    const ctx = callContext(this.o, call, { store: given, clock: this.o.clock, dbPath: this.dbPath });
    try {
      return await fn(ctx);
    } catch (e) {
      // TUGCODE_STATE_DB names another file: a message saying "state.db" names it instead (docs/state.md §1).
      throw this.overridden ? inStore(e, this.dbPath) : e;
    } finally {
      await this.giveBack(given);
      // The operation upgraded its context to a writer (state init): keep that connection.
      if (ctx.store && ctx.store !== given && ctx.store !== this.db) {
        await this.retire();
        this.db = ctx.store;
      }
    }
  }

  async integrationLock(_plan: string, timeoutMs = 60_000): Promise<() => Promise<void>> {
    const { lockIntegrationFile } = await import('../util/integration-lock.js');
    return lockIntegrationFile(this.o.repoRoot, timeoutMs);
  }

  async close(): Promise<void> {
    const db = this.db;
    this.db = null;
    await db?.close();
    for (const r of this.retired) await r.close();
    this.retired.clear();
  }
}
