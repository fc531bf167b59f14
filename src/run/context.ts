/**
 * What every worker of one run shares (docs/run.md §1): the setup fixed before the workers start (contexts,
 * plan, options, the stop), what the start settled (tip, remote, drift watch), and the tallies they keep.
 */
import { workerOfBranch } from '../contract/layout.js';
import type { GitRunner } from '../git/exec.js';
import type { TraceFn } from '../git/trace.js';
import type { FlowCtx } from '../gitflow/flow-context.js';
import type { Call, OpsContext } from '../ops/context.js';
import { stateCall, type StateCall, type StateStore } from '../state/store.js';
import type { DriftWatch } from './drift.js';
import type { StepHistory } from './history.js';
import type { IntegrationTips } from './integration-tips.js';
import type { Prepared } from './preflight.js';
import type { RemoteRun } from './remote.js';
import type { RunEvent } from './types.js';
import * as usageMath from '../contract/usage.js';
import type { WarningSinkCode } from '../contract/warnings.js';

export { timed, type TraceFn } from '../git/trace.js';

/** An event without its `at` (the run stamps it). */
export type EventInput = RunEvent extends infer E ? (E extends RunEvent ? Omit<E, 'at'> : never) : never;

export interface RunOptions {
  implementer: string | null;
  /** An agent implementer preset (docs/run.md §2.1); set, it replaces `implementer`. */
  agent: import('./agents.js').AgentName | null;
  heartbeatMs: number;
  stepTimeoutMs: number;
  leaseSeconds: number | undefined;
  checkpoints: boolean;
  setupCommand: string[];
  maxAttempts: number;
  /** The reviewer command (docs/run.md §6); null with `reviewAgent` null: no review gate. */
  reviewer: string | null;
  /** An agent reviewer preset, read-only; set, it replaces `reviewer`. */
  reviewAgent: import('./agents.js').AgentName | null;
  /** REVISE verdicts per attempt before it fails ReviewRejected. */
  reviewRounds: number;
  /** `run.resolver`: the command that merges a conflict of the integration rebase (null: the implementer). */
  resolver: string | null;
  /** Resolver runs per attempt (docs/run.md §1.9); 0: a conflict fails the attempt at once. */
  resolveRounds: number;
  /** `--budget-usd` / `[run] budget_usd`: null for none (docs/run.md §7.2). */
  budgetUsd: number | null;
  /** `--budget-tokens` / `[run] budget_tokens`: null for none. */
  budgetTokens: number | null;
  /** `--stall-seconds` / `[run] stall_seconds`, in ms (docs/run.md §7.3). */
  stallMs: number;
  /** `[run.prices]`: the cost of a report that has tokens but no cost. */
  prices: import('../contract/usage.js').Prices;
}

/**
 * One timed span of the opt-in timing trace (the CLI turns it on; core code only hands spans to it):
 * `name` is a phase or a sub-phase (`commit.status`, `integrate.lock`, …), `start` the epoch ms it began.
 */
/** A file's identity (device and inode), whatever path names it. */
export interface FileId {
  dev: number;
  ino: number;
}

export interface TraceSpan {
  worker: string;
  step: string;
  name: string;
  start: number;
  ms: number;
}

export interface Held {
  step: string;
  attempt: number;
  worktree: string;
}

/** The abort reason of `stop` on SIGINT/SIGTERM: only then does a worker stop with reason `signal`. */
export const SIGNAL_STOP = 'signal';

/** What a run fixes before its workers start, and never changes. */
export interface RunSetup {
  readonly ops: OpsContext;
  /** The run's call (`run`): its event command and the warnings of its summary. */
  readonly call: Call;
  /** The git flows' context: the same repository, config and store as `ops`. */
  readonly flow: FlowCtx;
  readonly g: GitRunner;
  /** The process's state store (`flow.store`): every state call of the run goes through its named methods. */
  readonly store: StateStore;
  readonly prep: Prepared;
  readonly opts: RunOptions;
  /**
   * Aborted on SIGINT/SIGTERM (with the reason SIGNAL_STOP) or a fatal error: workers stop claiming and kill
   * their children.
   */
  readonly stop: AbortController;
  emit(e: EventInput): void;
  /** Something the run noticed and handled: a `warning` event and one of the run's warnings (stderr). */
  warn(code: WarningSinkCode, message: string, details?: Record<string, unknown>): void;
  /** Fires when a step completed or an attempt ended: waiting workers claim again at once. */
  readonly changed: EventTarget;
  /** The opt-in timing trace (RunHooks.trace), if any. */
  readonly trace?: ((span: TraceSpan) => void) | undefined;
  /** The files the run's own output goes to (RunHooks.ownOutput): never an outside write. */
  readonly ownOutput: readonly FileId[];
  /** The holder of the run lock this run took over (a run that died), said once the run started. */
  readonly tookOver?: import('./lock.js').RunLock['tookOver'] | undefined;
}

/** What the workers change as they go; the summary reads it at the end. */
export interface RunTally {
  /** Claims held right now, by worker (released on a signal). */
  held: Map<string, Held>;
  completed: string[];
  commits: string[];
  /** A fatal error that ended the run (PlanDrift, …). */
  fatal: unknown;
  /** The plan drifted: no worker claims again; steps in flight finish (docs/run.md §1 item 4.1). */
  draining: boolean;
  /**
   * Draining only because a budget is spent (docs/run.md §7.2): the steps a human approved still integrate,
   * which costs nothing (no implementer, no reviewer). Any other reason to drain turns it off.
   */
  approvedOnly: boolean;
  /** Steps reviewed by this run: rounds and last verdict (docs/run.md §6). */
  reviews: Map<string, { rounds: number; verdict: import('./types.js').Verdict }>;
  /** Steps whose commit a human approved (`state decide --approve`) that this run integrated as it was kept. */
  humanApproved: Set<string>;
  /** Steps this run escalated to a human: the kept commit's ref and the reviewer's reason (docs/run.md §6.3). */
  needsHuman: Map<string, { review_ref: string; reason: string }>;
  /** Conflicts a resolver merged (docs/run.md §1.9), for the summary. */
  resolved: { step_anchor: string; files: string[]; round: number }[];
  /**
   * The logs of a step's last `attempt_failed` when a reviewer or resolver failed it (their own files, not
   * the implementer's): what the summary's `failed_steps` entry names then (docs/run.md §1.1 item 6).
   */
  failedLogs: Map<string, string[]>;
  /**
   * Steps completed behind the driver's back while a worker held them (docs/agents.md §1.7), in that order:
   * the summary names them, not as completed before the run.
   */
  completedOutside: NonNullable<import('./types.js').RunSummary['completed_outside']>;
  /** The ledger of this run (docs/run.md §7): its usage, the plan's, and each running step's last activity. */
  ledger: Ledger;
}

export interface Ledger {
  /** What this run's agent runs used. */
  run: import('../contract/usage.js').UsageTotals;
  /** The plan's totals in the state, refreshed after each report (a restarted run counts earlier spend). */
  plan: import('../contract/usage.js').UsageTotals;
  /** Set once a budget was reached: no new claims. */
  exhausted: boolean;
  /** A run that reported nothing was said once already. */
  silentWarned: boolean;
  /** Each busy worker's step and the epoch ms of its implementer's last activity (the live view). */
  activity: Map<string, { step: string; at: number }>;
}

export function newTally(): RunTally {
  const { emptyTotals } = usageMath;
  return {
    held: new Map(),
    completed: [],
    commits: [],
    fatal: null,
    draining: false,
    approvedOnly: false,
    reviews: new Map(),
    humanApproved: new Set(),
    needsHuman: new Map(),
    resolved: [],
    failedLogs: new Map(),
    completedOutside: [],
    ledger: { run: emptyTotals(), plan: emptyTotals(), exhausted: false, silentWarned: false, activity: new Map() },
  };
}

/** A started run: its setup, what its start settled, and the tallies. */
export interface RunCtx extends RunSetup {
  /** The integration tip when the workers started (where new worker worktrees branch from). */
  readonly startTip: string;
  /** Checked before each claim: the plan on the base branch keeps its structure. */
  readonly drift: DriftWatch;
  /**
   * Whether git would copy notes when a rebase rewrites a step's commit (notes.rewriteRef or
   * GIT_NOTES_REWRITE_REF set). Read once per run; when false the integration rebase skips the notes copy
   * process git otherwise starts after every rebase (it would copy nothing).
   */
  readonly notesRewrite: boolean;
  /** git has no `trailer.*` configuration: a step commit's one-line message gets its trailers without git. */
  readonly trailersUnconfigured: boolean;
  /** Set under `--remote`: the integration branch lives on that shared git remote (remote.ts). */
  readonly remote: RemoteRun | undefined;
  /** The steps the integration branch's history names, for the settle check (history.ts); not with `--remote`. */
  readonly history: StepHistory | undefined;
  /** The tips the run left on the local integration branch, for the outside-write check; not with `--remote`. */
  readonly integrationTips?: IntegrationTips | undefined;
  readonly tally: RunTally;
}

/** A TraceFn for one worker's step: a no-op when the run is not traced. */
export function tracerOf(rc: Pick<RunCtx, 'trace'>, worker: string, step: string): TraceFn | undefined {
  const out = rc.trace;
  if (!out) return undefined;
  return (name, start) => out({ worker, step, name, start, ms: Date.now() - start });
}

/** Wait up to `ms` for a change of the plan's state (or the run's stop). */
export function waitForChange(rc: Pick<RunSetup, 'changed' | 'stop'>, ms: number): Promise<void> {
  if (rc.stop.signal.aborted) return Promise.resolve();
  return new Promise((res) => {
    const done = () => {
      clearTimeout(t);
      rc.changed.removeEventListener('change', done);
      rc.stop.signal.removeEventListener('abort', done);
      res();
    };
    const t = setTimeout(done, ms);
    rc.changed.addEventListener('change', done, { once: true });
    rc.stop.signal.addEventListener('abort', done, { once: true });
  });
}

/** Waits `ms`, or less when the run stops; unlike waitForChange, another worker's progress does not end it. */
export function pause(rc: Pick<RunSetup, 'stop'>, ms: number): Promise<void> {
  if (rc.stop.signal.aborted) return Promise.resolve();
  return new Promise((res) => {
    const done = () => {
      clearTimeout(t);
      rc.stop.signal.removeEventListener('abort', done);
      res();
    };
    const t = setTimeout(done, ms);
    rc.stop.signal.addEventListener('abort', done, { once: true });
  });
}

export function announceChange(rc: Pick<RunSetup, 'changed'>): void {
  rc.changed.dispatchEvent(new Event('change'));
}

/** A state call of the run in `worktree` (a worker's, or the main checkout); plan paths are repo-relative. */
export function stateCallIn(rc: Pick<RunSetup, 'call'>, worktree: string): StateCall {
  return stateCall(rc.call, worktree);
}

/** The driver removed a stale `index.lock` in one of its own worker trees (worktrees.ts): say so. */
export function staleLockRemoved(rc: Pick<RunSetup, 'warn'>, lock: string): void {
  rc.warn('StaleIndexLock', `removed ${lock}, left by a git that is gone`);
}

/**
 * A worker tree an agent had switched to a branch of its own (or detached) was put back on its worker
 * branch (worktrees.ts resetTree, docs/run.md §1.1 items 3, 4.9): say so, naming the branch it left there.
 */
export function treeSwitchedBack(
  rc: Pick<RunSetup, 'warn' | 'prep'>,
  tree: { path: string; branch: string },
  from: string | null,
): void {
  // The agent's own branch may go; the base, the integration branch and the workers' are never for deleting.
  const ours =
    from !== null &&
    (from === rc.prep.base || from === rc.prep.integration || workerOfBranch(from, rc.prep.slug) !== null);
  rc.warn(
    'WorkerBranchRestored',
    `${tree.path} was on ${from === null ? 'a detached HEAD' : `branch ${from}`}, not its worker branch; ` +
      `put back on ${tree.branch}` +
      (from === null || ours ? '' : ` (branch ${from} is kept: delete it with git branch -D ${from} when not needed)`),
    { worktree_path: tree.path, branch: tree.branch, ...(from === null ? { detached: true } : { left_branch: from }) },
  );
}
