/**
 * `tugcode run <plan>` (docs/run.md §1): N workers, each in its own worktree, coordinated only through the
 * state store, until the plan is done. One front door over the same operations as the CLI: the driver
 * never spawns the tugcode CLI, and nothing a worker does blocks another worker's heartbeat (git started
 * from the run's git thread, children through execa, SQLite lock waits in short slices).
 */
import { existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pgAddress, TugError, toTugError } from '../contract/errors.js';
import { runBudgets } from '../contract/usage.js';
import { reviewRefName } from '../contract/layout.js';
import type { FlowCtx } from '../gitflow/flow-context.js';
import type { Call, OpsContext } from '../ops/context.js';
import {
  newTally,
  SIGNAL_STOP,
  stateCallIn,
  timed,
  staleLockRemoved,
  tracerOf,
  treeSwitchedBack,
  type EventInput,
  type RunCtx,
  type RunSetup,
  type RunTally,
} from './context.js';
import {
  ensureIntegrationBranch,
  initState,
  integrationExists,
  preflight,
  resolvePrograms,
  settled,
  type Prepared,
} from './preflight.js';
import type { RunEvent, RunSummary } from './types.js';
import { endOrphan, pgidFile } from './orphans.js';
import { leftoverTrees, removeTrees, resetTree, type WorkerTree } from './worktrees.js';
import { reconcileFromIntegration, type MadeTree } from './worker.js';
import type { TargetInput } from '../state/integration-target.js';
import type { GitRunner } from '../git/exec.js';
import type { StateCall } from '../state/store.js';

export interface RunInput {
  plan: string;
  workers?: number | undefined;
  implementer?: string | undefined;
  /** An agent preset (`claude`, `codex`); exclusive with `implementer`. */
  agent?: string | undefined;
  base?: string | undefined;
  lease_seconds?: number | undefined;
  heartbeat_seconds?: number | undefined;
  step_timeout_seconds?: number | undefined;
  max_attempts?: number | undefined;
  no_checkpoints?: boolean | undefined;
  keep_worktrees?: boolean | undefined;
  merge?: boolean | undefined;
  /** A git remote holding the integration branch, shared by hosts (default: config run.remote; '' = local). */
  remote?: string | undefined;
  /** Integrate where this run does even when the plan's recorded target is elsewhere (docs/run.md §1.11). */
  move_integration?: boolean | undefined;
  /** The reviewer command (docs/run.md §6); exclusive with `review_agent`. */
  reviewer?: string | undefined;
  /** An agent reviewer preset (`claude`, `codex`), read-only. */
  review_agent?: string | undefined;
  /** REVISE verdicts per attempt before it fails ReviewRejected (default: config run.review_rounds). */
  review_rounds?: number | undefined;
  /** The command that merges a conflict of the integration rebase (default: config run.resolver, else the implementer). */
  resolver?: string | undefined;
  /** Resolver runs per attempt (default: config run.resolve_rounds); 0: never resolve. */
  resolve_rounds?: number | undefined;
  /** Stop claiming once the plan's cost reaches this (default: config run.budget_usd; 0 = none). */
  budget_usd?: number | undefined;
  /** Stop claiming once the plan's tokens reach this (default: config run.budget_tokens; 0 = none). */
  budget_tokens?: number | undefined;
  /** An implementer silent this long is Stalled (default: config run.stall_seconds). */
  stall_seconds?: number | undefined;
}

export interface RunHooks {
  onEvent(e: RunEvent): void;
  /** Aborting stops the run: no new claims, children killed, held claims released. */
  signal?: AbortSignal | undefined;
  /** Called once the plan is checked and the lock held, with what the renderer needs. */
  onStart?(info: {
    plan_path: string;
    steps_total: number;
    steps_done: number;
    workers: string[];
    /** The epoch ms of a worker's implementer's last activity, while one runs (the live view). */
    last_activity: (worker: string) => number | undefined;
  }): void;
  /** The opt-in timing trace: every timed span of the workers' steps (off when absent). */
  trace?: ((span: import('./context.js').TraceSpan) => void) | undefined;
  /**
   * The files the run's own output goes to (`tugcode run --json > out.jsonl` in the repository): they grow
   * while agents run, and are never an agent's outside write (docs/agents.md §1.6).
   */
  ownOutput?: readonly import('./context.js').FileId[] | undefined;
}

/**
 * Check the plan and resolve what a run (or a dry run) needs, changing nothing: `input` comes back with its
 * commands' programs absolute, as `flow.config.run` does (docs/run.md §2). `preview` (a dry run, docs/run.md
 * §1.10): a plan not committed is read from the main checkout, `prep.uncommitted` saying so.
 */
export async function prepareRun(
  ctx: OpsContext,
  input: RunInput,
  call: Call,
  tr?: import('./context.js').TraceFn,
  o: { preview?: boolean } = {},
): Promise<{ flow: FlowCtx; prep: Prepared; input: RunInput }> {
  const { flowOf } = await import('../ops/git.js');
  const flow = await timed(tr, 'run.flow', () => flowOf(ctx, call));
  const { gitRunner } = await import('../git/exec.js');
  const prep = await timed(tr, 'run.check', () =>
    preflight(flow, gitRunner(ctx.env), input.plan, input.base, { preview: o.preview }),
  );
  const env = { cwd: ctx.cwd, repoRoot: flow.repo.mainRoot, env: ctx.env };
  const programs = await timed(tr, 'run.programs', () => resolvePrograms(input, flow.config.run, env));
  flow.config.run = programs.run;
  return { flow, prep, input: programs.input };
}

/** What the state says of a plan for the dry run's schedule (docs/run.md §1.10). */
export interface PlanProgress {
  /** Top-level steps completed: left out of the schedule. */
  completed: Set<string>;
  /** Steps failed at their attempt cap, with the reason the run's summary gives: the run claims none. */
  failed_steps: { step_anchor: string; reason: string }[];
  /** Steps behind a failed step, and why, as the run's summary says it. */
  blocked_steps: string[];
  blocked_reasons: NonNullable<RunSummary['blocked_reasons']>;
  /** Steps a reviewer escalated (docs/run.md §6.3), as the run's summary lists them: the run claims none. */
  needs_human: NonNullable<RunSummary['needs_human']>;
  /** Steps behind a step waiting for a human (and no failed one), and why: they wait for the decision. */
  waiting_steps: string[];
  waiting_reasons: NonNullable<RunSummary['blocked_reasons']>;
  /** Top-level steps a human approved, with their kept commit: the run integrates it, no implementer (§6.3). */
  approved: Map<string, string>;
  /**
   * The plan's structure differs from the one the state was initialised from: the real run re-initialises
   * it (docs/run.md §1.1 item 1), so the failed steps and those waiting for a human are pending again.
   */
  structure_changed: boolean;
}

/**
 * The state of the plan as a dry run previews it: read only, no state.db is created; a plan not
 * initialised yet has none of it.
 */
export async function planProgress(ctx: OpsContext, prep: Prepared, call: Call): Promise<PlanProgress> {
  const none = {
    completed: new Set<string>(),
    failed_steps: [],
    blocked_steps: [],
    blocked_reasons: [],
    needs_human: [],
    waiting_steps: [],
    waiting_reasons: [],
    approved: new Map<string, string>(),
    structure_changed: false,
  };
  try {
    const { stateReady, stateReinitKeeps, stateShow, stateStoredPlan } = await import('../ops/state-read.js');
    let cat = await stateReady(ctx, { plan: prep.planPath }, call);
    // As `state init --force` would (docs/state.md §4): completed steps kept, and the steps whose person's
    // part it keeps (§3.11); every other one pending again.
    const stored = await stateStoredPlan(ctx, { plan: prep.planPath }, call);
    const structure_changed = stored.structure_hash !== prep.plan.structure_hash;
    const steps = (await stateShow(ctx, { plan: prep.planPath, items: 'none' }, call)).plans[0]?.steps ?? [];
    const kept = structure_changed
      ? new Set((await stateReinitKeeps(ctx, { plan: prep.planPath, parsed: prep.plan }, call)).kept_decisions)
      : null;
    // A step a human approved runs no implementer: the run integrates its kept commit (docs/run.md §6.3).
    const approved = new Map(
      steps
        .filter((s) => s.parent_anchor === null && s.status !== 'completed' && s.human_decision === 'approved')
        .filter((s) => s.review_commit !== null && (kept === null || kept.has(s.anchor)))
        .map((s) => [s.anchor, s.review_commit!] as const),
    );
    if (kept) {
      const waiting = cat.needs_human_steps.filter((a) => kept.has(a));
      if (waiting.length === 0)
        return { ...none, completed: new Set(cat.completed_steps), approved, structure_changed };
      cat = { ...cat, failed_steps: [], needs_human_steps: waiting };
    }
    const reason = (a: string, or: string) => steps.find((s) => s.anchor === a)?.fail_reason ?? or;
    const failed_steps = cat.failed_steps.map((a) => ({ step_anchor: a, reason: reason(a, 'failed') }));
    // As the run's summary lists a step that waited before the run started (summarize below).
    const needs_human = cat.needs_human_steps.map((a) => ({
      step_anchor: a,
      review_ref: reviewRefName(prep.slug, a),
      reason: reason(a, 'waiting for a human'),
    }));
    return {
      completed: new Set(cat.completed_steps),
      failed_steps,
      needs_human,
      ...blockedSteps(cat, steps),
      approved,
      structure_changed,
    };
  } catch (e) {
    if (e instanceof TugError) return none;
    throw e;
  }
}

/** The dry run's answer to "would the run integrate where the plan does?": IntegrationTargetMismatch if not. */
export async function checkRunTarget(ctx: OpsContext, flow: FlowCtx, prep: Prepared, input: RunInput, call: Call) {
  const target = await runTarget({ flow, prep, ops: ctx }, input);
  const { gitRunner } = await import('../git/exec.js');
  await refuseTarget(gitRunner(ctx.env), flow, stateCallIn({ call }, flow.repo.mainRoot), target);
}

/**
 * Where the plan integrates (docs/run.md §1.11), refused as the run refuses it, for the run and its dry run:
 * an unknown remote first (InvalidArgument: it is no place to integrate at all), then a target other than
 * the one the plan integrates into.
 */
async function refuseTarget(g: GitRunner, flow: FlowCtx, call: StateCall, target: TargetInput): Promise<void> {
  if (target.remote) await (await import('../gitflow/remote.js')).requireRemote(g, flow.repo.mainRoot, target.remote);
  await flow.store.checkIntegrationTarget(call, target);
}

export async function runPlan(ctx: OpsContext, input: RunInput, call: Call, hooks: RunHooks): Promise<RunSummary> {
  const t0 = Date.now();
  // The run's git children start from a thread of their own (git-thread.ts): starting one blocks the
  // starting thread for milliseconds, which on the main thread every other worker would wait out.
  const endGitThread = (await import('../git/git-thread.js')).useGitThread(ctx.env);
  try {
    return await runPlanned(ctx, input, call, hooks, t0);
  } finally {
    await endGitThread();
  }
}

async function runPlanned(
  ctx: OpsContext,
  input: RunInput,
  call: Call,
  hooks: RunHooks,
  t0: number,
): Promise<RunSummary> {
  const tr = tracerOf(hooks, '', '');
  const { gitRunner } = await import('../git/exec.js');
  const prepared = await timed(tr, 'run.preflight', () => prepareRun(ctx, input, call, tr));
  const { flow, prep } = prepared;
  input = prepared.input;
  const g = gitRunner(ctx.env);
  const config = flow.config;
  const agents = await import('./agents.js');
  const impl = agents.resolveImplementer(input, config.run);
  const review = agents.resolveReviewer(input, config.run);
  if (input.max_attempts !== undefined) config.state = { ...config.state, max_attempts: input.max_attempts };
  const workers = input.workers ?? config.run.workers;
  // `--merge` would refuse a dirty checkout of the base branch at the end: say so before any work.
  if (input.merge) await (await import('../gitflow/merge.js')).cleanHolder(g, flow.repo, prep.base);
  const { acquireRunLock } = await import('./lock.js');
  // The hints of a stopped run repeat its flags (docs/run.md §1.2), in the summary notify sees too; the lock
  // records them, so what reports this run dead (status, doctor, the board) can say how to run it again.
  const { runFlags, withRunFlags } = await import('./run-flags.js');
  const flags = runFlags(input, ctx.cwd, ctx.dir);
  const lock = await timed(tr, 'run.lock', () =>
    acquireRunLock(flow.repo.mainRoot, prep.slug, prep.planPath, ctx.clock.now(), { run_flags: flags }),
  );
  // `[run] notify` (docs/run.md §7.4): it sees every event the run emits, and the run's end.
  const notifier = config.run.notify
    ? (await import('./notify.js')).startNotifier({
        command: config.run.notify,
        cwd: flow.repo.mainRoot,
        env: ctx.env,
        planPath: prep.planPath,
        logDir: (await import('../contract/layout.js')).runLogDir(flow.repo.mainRoot, prep.slug),
        warn: (code, message) => {
          call.warnings.add(code, message);
          hooks.onEvent({ type: 'warning', at: ctx.clock.now(), code, message });
        },
      })
    : null;
  const finished = (r: Partial<RunSummary>) =>
    notifier?.finish({ type: 'run_finished', at: ctx.clock.now(), plan_path: prep.planPath, ...r });
  // Whatever fails after this point, the run lock is released (a failed start must not block the next run).
  // A release that fails is a warning: it must not replace the run's own summary or error.
  try {
    const o = {
      t0,
      flow,
      prep,
      g,
      config,
      impl,
      review,
      workers,
      lock: lock.signal,
      tookOver: lock.tookOver,
      recordWorkers: (n: number) => lock.recordWorkers(n),
      notifier,
    };
    const summary = withRunFlags(await runLocked(ctx, input, call, hooks, o), flags);
    await rememberFlags(flow, prep.planPath, call, flags);
    await finished(summary);
    return summary;
  } catch (e) {
    await finished({ status: 'error', error: toTugError(e).toJSON() });
    throw e;
  } finally {
    await lock.release().catch((e: unknown) => {
      const err = toTugError(e);
      call.warnings.add(err.code, err.message, err.details);
    });
  }
}

/**
 * The plan's state keeps the flags of a run that ended with a summary (done, failed, stopped, interrupted),
 * so what suggests running it again once the lock is gone repeats them (docs/run.md §1.2, docs/state.md
 * §2). A run refused before it began (a thrown error) changes nothing; a write that fails is a warning.
 */
async function rememberFlags(flow: FlowCtx, planPath: string, call: Call, flags: string[]): Promise<void> {
  await flow.store
    .recordLastRun(stateCallIn({ call }, flow.repo.mainRoot), { plan: planPath, run_flags: flags })
    .catch((e: unknown) => {
      const err = toTugError(e);
      call.warnings.add(err.code, `the run's flags were not recorded: ${err.message}`, err.details);
    });
}

async function runLocked(
  ctx: OpsContext,
  input: RunInput,
  call: Call,
  hooks: RunHooks,
  o: {
    t0: number;
    flow: FlowCtx;
    prep: Prepared;
    g: import('../git/exec.js').GitRunner;
    config: FlowCtx['config'];
    impl: Awaited<ReturnType<(typeof import('./agents.js'))['resolveImplementer']>>;
    review: Awaited<ReturnType<(typeof import('./agents.js'))['resolveReviewer']>>;
    workers: number;
    /** Aborted when another process took the run lock over: this run stops as a fatal RunInProgress. */
    lock: AbortSignal;
    tookOver: import('./lock.js').RunLock['tookOver'];
    recordWorkers: (workers: number) => void;
    notifier: import('./notify.js').Notifier | null;
  },
): Promise<RunSummary> {
  const { t0, flow, prep, config, workers } = o;
  const stop = new AbortController();
  const onAbort = () => stop.abort(SIGNAL_STOP);
  hooks.signal?.addEventListener('abort', onAbort, { once: true });
  if (hooks.signal?.aborted) stop.abort(SIGNAL_STOP); // a signal that came during the preflight: no listener fires
  const tally = newTally();
  const onLockLost = () => {
    tally.fatal ??= new TugError('RunInProgress', { plan_path: prep.planPath, reason: 'this run lost its run lock' });
    stop.abort();
  };
  o.lock.addEventListener('abort', onLockLost, { once: true });
  // Every event of the run, stamped, to the renderer and to `[run] notify`.
  const emit = (e: EventInput) => {
    const ev = { ...e, at: ctx.clock.now() } as RunEvent;
    hooks.onEvent(ev);
    o.notifier?.event(ev);
  };
  const setup: RunSetup = {
    ops: ctx,
    call,
    flow,
    g: o.g,
    store: flow.store,
    prep,
    opts: {
      ...o.impl,
      heartbeatMs: (input.heartbeat_seconds ?? config.run.heartbeat_seconds) * 1000,
      stepTimeoutMs: (input.step_timeout_seconds ?? config.run.step_timeout_seconds) * 1000,
      leaseSeconds: input.lease_seconds,
      checkpoints: !input.no_checkpoints && config.run.run_checkpoints,
      setupCommand: config.run.setup_command,
      maxAttempts: config.state.max_attempts,
      ...o.review,
      reviewRounds: input.review_rounds ?? config.run.review_rounds,
      resolver: input.resolver || config.run.resolver || null,
      resolveRounds: input.resolve_rounds ?? config.run.resolve_rounds,
      ...runBudgets(input, config.run),
      stallMs: (input.stall_seconds ?? config.run.stall_seconds) * 1000,
      prices: config.run.prices,
    },
    stop,
    emit,
    warn: (code, message, details) => {
      call.warnings.add(code, message, details);
      emit({ type: 'warning', code, message });
    },
    changed: new EventTarget(),
    trace: hooks.trace,
    ownOutput: hooks.ownOutput ?? [],
    tookOver: o.tookOver,
  };
  // A SIGINT/SIGTERM also ends the store's retries of a lost PostgreSQL connection (the stop is not held up).
  if (hooks.signal) setup.store.stopOn?.(hooks.signal);
  // An outage the store rides out (up to its budget) is said as it starts and as it ends, never silently: the
  // run would look hung (docs/state.md §8.1).
  let where = 'PostgreSQL';
  setup.store.watchOutage?.({
    lost: (e, budgetMs) => {
      const d = e.details;
      where = `PostgreSQL at ${pgAddress(String(d.host ?? '?'), String(d.port ?? '5432'))} (database ${String(d.database ?? '?')})`;
      setup.warn(
        'DatabaseUnavailable',
        `${where} is unreachable (${String(d.reason ?? 'no connection')}): the run waits for it, up to ` +
          `${Math.round(budgetMs / 1000)} s`,
        { ...d, retry_ms: budgetMs },
      );
    },
    back: (ms) =>
      setup.warn(
        'DatabaseUnavailable',
        `${where} is back after ${Math.max(1, Math.round(ms / 1000))} s: the run goes on`,
        {
          back: true,
          outage_ms: Math.round(ms),
        },
      ),
  });
  let results: { worker: string; busy_ms: number }[] = [];
  let released: Interrupted[] = [];
  let rc: RunCtx;
  let started: Awaited<ReturnType<typeof startRun>>;
  // A child that left processes outside its group (a new session): they are ended, and the run says so.
  const { onLeftRunning, leftWords } = await import('./child.js');
  const unlisten = onLeftRunning((left, log) =>
    setup.warn(
      'ProcessesLeftRunning',
      `ended ${left.length} process(es) left running outside the process group of the command logged in ` +
        `${relative(flow.repo.mainRoot, log)}: ${leftWords(left)}`,
      { processes: left, log: relative(flow.repo.mainRoot, log) },
    ),
  );
  try {
    started = await startRun(setup, tally, {
      target: await runTarget(setup, input),
      workers,
      recordWorkers: o.recordWorkers,
    });
    rc = started.rc;
    results = await runWorkers(rc, started.trees, hooks, workers);
  } finally {
    unlisten();
    hooks.signal?.removeEventListener('abort', onAbort);
    o.lock.removeEventListener('abort', onLockLost);
    released = await releaseHeld(setup, tally);
  }
  const tr = tracerOf(rc, '', '');
  await timed(tr, 'run.reconcile', () => reconcileFromIntegration(rc));
  const summary = await timed(tr, 'run.summary', () => summarize(rc, results, Date.now() - t0, released));
  await autoMaintenance(rc);
  // A worker tree git could not make (its post-checkout hook refused, worktrees.ts undid that tree): the run
  // never got going, and like a failed start it leaves nothing behind (a failed command changes nothing).
  if (summary.status === 'error') await undoFailedTrees(rc, started);
  if (summary.status === 'ok' && !input.keep_worktrees) await removeWorkerTrees(rc);
  // A run with nothing to do (a plan done and merged: merge deleted its branch) leaves nothing behind: the
  // integration branch and worker trees it made, with nothing on them, are removed again (docs/run.md §1.1
  // item 6). Nothing is left for `--merge` either.
  if (summary.status === 'ok' && started.madeBranch && rc.tally.completed.length === 0) {
    const { refTip } = await import('../git/ref-files.js');
    const tip = await refTip(rc.g, flow.repo.commonDir, flow.repo.mainRoot, prep.integration);
    if (tip === rc.startTip) {
      await undoStart(rc, await Promise.allSettled(started.trees), { removeBranch: true });
      return { ...summary, nothing_to_merge: true };
    }
  }
  if (summary.status === 'ok' && input.merge) {
    const { mergePlan } = await import('../gitflow/merge.js');
    try {
      const keepWorktrees = input.keep_worktrees;
      await mergePlan(flow, { plan: prep.planPath, into: prep.base, dryRun: false, force: false, keepWorktrees });
    } catch (e) {
      // The steps are done and integrated: the summary keeps them, with the merge's error.
      return { ...summary, status: 'error', error: toTugError(e).toJSON() };
    }
  }
  return summary;
}

/**
 * Everything before the workers start: the remote, the integration branch, the workers' trees (git makes
 * them and reads the notes config while SQLite initialises the state), an earlier run's leftovers adopted,
 * and the drift watch. A failed start leaves nothing of this run behind.
 */
async function startRun(
  s: RunSetup,
  tally: RunTally,
  o: { target: TargetInput; workers: number; recordWorkers: (workers: number) => void },
): Promise<{ rc: RunCtx; trees: Promise<MadeTree>[]; madeBranch: boolean }> {
  const { flow, g, prep } = s;
  const tr = tracerOf(s, '', '');
  // Locks a killed git left in the common directory would fail every git below (docs/run.md §1.6).
  const { clearStaleRepoLocks } = await import('./stale-locks.js');
  const onRemote = o.target.remote ? { name: o.target.remote, base: prep.base } : undefined;
  for (const lock of clearStaleRepoLocks(flow.repo.commonDir, prep.slug, onRemote)) staleLockRemoved(s, lock);
  // Where the plan integrates (docs/run.md §1.11): a run that would integrate elsewhere is refused here,
  // before any branch, tree or row changes; the target is recorded once the plan's rows exist.
  const stateCall = stateCallIn(s, flow.repo.mainRoot);
  const remoteName = o.target.remote;
  await timed(tr, 'run.target', () => refuseTarget(g, flow, stateCall, o.target));
  // Before the first claim, with --remote or not: another machine claiming as this clone's owners (one host
  // name by mistake, the clone at one path) is refused here, not found out by doing every step twice, or, run
  // locally, by adopting the other's claims as leftovers and integrating into two clones (docs/state.md §8.4).
  await s.store.holdRunIdentity?.(prep.planPath);
  const remote = remoteName ? await (await import('./remote.js')).openRemote(s, remoteName) : undefined;
  const existed = await integrationExists(flow, g, prep);
  // How many workers the plan can keep busy, read while the leftovers are listed (before the state's init).
  const width = settled(workersOfRun(s, stateCall, o.workers));
  // An earlier run's worker trees, listed before this run makes any.
  const leftovers = await leftoverTrees(g, flow.repo, prep.slug);
  const workers = (await width)();
  // The lock was taken before this was known: `status` names the workers started, not those asked for.
  o.recordWorkers(workers);
  const init = () => timed(tr, 'run.init', () => initState(flow, prep, { integrationExisted: existed, warn: s.warn }));
  // A branch this run is about to make holds nothing of the plan's: the state's init reads nothing of it and
  // runs while git makes it. An existing one is reconciled from once it caught up with the base.
  const early = existed || remote ? undefined : settled(init());
  let tip: string;
  try {
    tip = remote ? remote.tip() : await timed(tr, 'run.integration', () => ensureIntegrationBranch(flow, g, prep));
  } catch (e) {
    await early; // nothing of this run's still running once the lock is released
    throw e;
  }
  // The settle check's memory of the branch (history.ts), scanned while the trees are made.
  const history = remote ? undefined : (await import('./history.js')).stepHistory(g, flow.repo, prep.integration, tip);
  const { makeWorkerTree } = await import('./worker.js');
  const trees = Array.from({ length: workers }, (_, i) => makeWorkerTree(s, i + 1, tip));
  const gitConfig = runGitConfig(s);
  const gitSide = Promise.allSettled([...trees, gitConfig]); // each is awaited below; none is left unobserved
  let config: RunGitConfig;
  try {
    if (early) (await early)();
    else await init();
    // Decided in the transaction: of two hosts starting at once with different targets, one is refused.
    await s.store.recordIntegrationTarget(stateCall, o.target);
    config = await gitConfig;
  } catch (e) {
    // No git still writing once the run lock is released, and nothing of this run's left behind: the
    // worker trees and the integration branch it made are removed again (a failed command changes nothing).
    const made = await gitSide;
    await undoStart(s, made.slice(0, workers) as PromiseSettledResult<MadeTree>[], {
      removeBranch: !existed && !remote,
    });
    throw e;
  }
  // A killed run's claims kept its committed-but-not-completed steps out of the start-up reconcile (a
  // live lease is skipped): once adoption released them, reconcile again.
  if (await timed(tr, 'run.adopt', () => adoptLeftovers(s, tip, leftovers)))
    await reconcileFromIntegration({ ...s, remote });
  const drift = await timed(tr, 'run.drift', async () => (await import('./drift.js')).watchDrift(s));
  // Where the run leaves the integration branch from now on (integration-tips.ts): read after the adoption.
  const { IntegrationTips } = await import('./integration-tips.js');
  const { refTip } = await import('../git/ref-files.js');
  const integrationTips = remote
    ? undefined
    : new IntegrationTips((await refTip(g, flow.repo.commonDir, flow.repo.mainRoot, prep.integration)) ?? tip);
  const rc = { ...s, startTip: tip, remote, history, integrationTips, ...config, drift, tally };
  return { rc, trees, madeBranch: !existed && !remote };
}

/**
 * The workers the run starts (schedule.ts workersToStart) on the steps the state has completed. A worker more
 * would never claim a step, yet cost its worktree. Read before the start-up init and reconcile, which can only complete more steps: the bound
 * stays an upper one. A plan without state yet has nothing completed.
 */
async function workersOfRun(s: RunSetup, call: StateCall, requested: number): Promise<number> {
  if (requested <= 1) return requested;
  const done = await s.store.ready(call, { plan: s.prep.planPath }).then(
    (c) => new Set(c.completed_steps),
    (e: unknown) => {
      if (e instanceof TugError) return new Set<string>();
      throw e;
    },
  );
  return (await import('./schedule.js')).workersToStart(s.prep.plan, requested, done);
}

/**
 * Where this run integrates, as the state records plans' targets (docs/run.md §1.11): `--remote`, else
 * `[run] remote`, else the clone's own branch (the main checkout names the clone); with what the refusal's
 * hint repeats (the run's flags, and whether the remote came from the config).
 */
export async function runTarget(s: Pick<RunSetup, 'flow' | 'prep' | 'ops'>, input: RunInput): Promise<TargetInput> {
  const { runFlags } = await import('./run-flags.js');
  const remote = input.remote ?? s.flow.config.run.remote;
  return {
    plan: s.prep.planPath,
    remote: remote || null,
    worktree: s.flow.repo.mainRoot,
    move: Boolean(input.move_integration),
    details: {
      command: 'run',
      integration_branch: s.prep.integration,
      remote_from: input.remote !== undefined ? 'flag' : s.flow.config.run.remote ? 'config' : 'none',
      run_flags: runFlags(input, s.ops.cwd, s.ops.dir),
    },
  };
}

type RunGitConfig = Pick<RunCtx, 'notesRewrite' | 'trailersUnconfigured'>;

/**
 * What the run needs of git's configuration, in one `git config` process: whether a rebase copies notes
 * (`notes.rewriteRef`, or GIT_NOTES_REWRITE_REF), and whether any `trailer.*` setting is there.
 */
async function runGitConfig(s: RunSetup): Promise<RunGitConfig> {
  const r = await s.g.tryRun(
    ['config', '-z', '--get-regexp', '^(notes\\.rewriteref|trailer\\..*)$'],
    s.flow.repo.mainRoot,
  );
  // `-z`: each entry is `<key>\n<value>\0` (`<key>\0` for a key without a value).
  const entries = r.stdout
    .split('\0')
    .filter(Boolean)
    .map((e) => {
      const nl = e.indexOf('\n');
      return nl < 0 ? { key: e, value: '' } : { key: e.slice(0, nl), value: e.slice(nl + 1) };
    });
  const notes = entries.filter((e) => e.key === 'notes.rewriteref').map((e) => e.value);
  return {
    notesRewrite: Boolean(s.ops.env.GIT_NOTES_REWRITE_REF) || notes.join('\n').trim() !== '',
    trailersUnconfigured: r.status <= 1 && !entries.some((e) => e.key.startsWith('trailer.')),
  };
}

/** Announces the run, then runs its workers until the plan has nothing left for them (or the run stops). */
async function runWorkers(
  rc: RunCtx,
  trees: Promise<MadeTree>[],
  hooks: RunHooks,
  requested: number,
): Promise<{ worker: string; busy_ms: number }[]> {
  const { prep } = rc;
  const tr = tracerOf(rc, '', '');
  const names = trees.map((_, i) => `w${i + 1}`);
  const before = await timed(tr, 'run.ready', () =>
    rc.store.ready(stateCallIn(rc, rc.flow.repo.mainRoot), { plan: prep.planPath }),
  );
  hooks.onStart?.({
    plan_path: prep.planPath,
    steps_total: before.all_steps.length,
    steps_done: before.completed_steps.length,
    workers: names,
    last_activity: (w) => rc.tally.ledger.activity.get(w)?.at,
  });
  rc.emit({
    type: 'run_started',
    plan_path: prep.planPath,
    integration_branch: prep.integration,
    base_branch: prep.base,
    workers: trees.length,
    // Fewer than asked for: the plan can keep no more busy (docs/run.md §1 item 3).
    ...(trees.length < requested ? { workers_requested: requested } : {}),
    ...(rc.remote ? { remote: rc.remote.name } : {}),
  });
  // A run that died held the lock and claims this run took over (docs/run.md §1 item 3): never silently.
  if (rc.tookOver) {
    const t = rc.tookOver;
    rc.warn(
      'DeadRunTakenOver',
      `run pid ${t.pid} on ${t.host} (started ${t.started_at}) ` +
        (t.dead ? 'died' : 'stopped refreshing its lock') +
        '; its lock and claims were taken over',
      { pid: t.pid, host: t.host, started_at: t.started_at, dead: t.dead },
    );
  }
  // No implementer is allowed (docs/run.md §2), but never silent: each step is then its refactors and checkpoints.
  // A plan with every step completed has no step to say it of.
  if (!rc.opts.implementer && !rc.opts.agent && before.completed_steps.length < before.all_steps.length) {
    const { NO_IMPLEMENTER } = await import('./implementer.js');
    rc.warn(NO_IMPLEMENTER.code, NO_IMPLEMENTER.message);
  }
  // The plan's spend so far and what a budget cannot see (docs/run.md §7.2), before the first claim.
  await (await import('./ledger.js')).startLedger(rc);
  const { runWorker } = await import('./worker.js');
  return Promise.all(
    names.map((worker, i) =>
      runWorker(rc, i + 1, trees[i]!).catch((e: unknown) => {
        rc.tally.fatal ??= e;
        rc.stop.abort();
        return { worker, busy_ms: 0 };
      }),
    ),
  );
}

/**
 * When a worker's tree could not be made and no step completed: the trees this run made, and the integration
 * branch it made while nothing moved it, removed as undoStart removes them after a failed start.
 */
async function undoFailedTrees(rc: RunCtx, started: { trees: Promise<MadeTree>[]; madeBranch: boolean }) {
  const made = await Promise.allSettled(started.trees);
  if (!made.some((t) => t.status === 'rejected') || rc.tally.completed.length > 0) return;
  const { refTip } = await import('../git/ref-files.js');
  const tip = started.madeBranch
    ? await refTip(rc.g, rc.flow.repo.commonDir, rc.flow.repo.mainRoot, rc.prep.integration)
    : null;
  await undoStart(rc, made, { removeBranch: started.madeBranch && tip === rc.startTip });
}

/** Removes the worker trees this run created and, with `removeBranch`, the integration branch it created. */
async function undoStart(
  rc: RunSetup,
  trees: PromiseSettledResult<MadeTree>[],
  o: { removeBranch: boolean },
): Promise<void> {
  const root = rc.flow.repo.mainRoot;
  const made = trees.flatMap((t) => (t.status === 'fulfilled' && t.value.created ? [t.value.tree] : []));
  await removeTrees(rc.g, root, made);
  // Made from the base a moment ago, nothing integrated since: `branch -D` also drops its tugplan config.
  if (o.removeBranch) await rc.g.tryRun(['branch', '-D', rc.prep.integration], root);
}

/**
 * Worker worktrees of an earlier run: their claims released, their trees reset to the integration tip.
 * Returns whether a claim was released.
 */
async function adoptLeftovers(rc: RunSetup, tip: string, leftovers: WorkerTree[]): Promise<boolean> {
  let released = false;
  for (const t of leftovers) {
    // An implementer a killed run left behind must not write into the tree we are about to reuse.
    endOrphan(pgidFile(rc.flow.repo.mainRoot, rc.prep.slug, t.worker), t.path);
    const sc = stateCallIn(rc, t.path);
    for (const h of await rc.store.claimsHeldBy(sc, { worktree: t.path })) {
      if (h.plan_path !== rc.prep.planPath) continue;
      // What the killed run's agents reported and it never recorded (docs/run.md §7.1), while the claim is held.
      await (await import('./ledger.js')).recordLeftUsage(rc, t.path, h);
      const r = await rc.store
        .release(sc, { plan: h.plan_path, step: h.step_anchor, worktree: t.path })
        .catch(() => null);
      released ||= r?.released === true;
    }
    await resetTree(
      rc.g,
      t,
      tip,
      undefined,
      (lock) => staleLockRemoved(rc, lock),
      (from) => treeSwitchedBack(rc, t, from),
    );
  }
  return released;
}

/** Hands back the claims the workers still hold (a stop, a fatal error); returns their steps, and whether each went back. */
async function releaseHeld(rc: RunSetup, tally: RunTally): Promise<Interrupted[]> {
  const out: Interrupted[] = [];
  for (const [, h] of tally.held) {
    const released = await rc.store
      .release(stateCallIn(rc, h.worktree), {
        plan: rc.prep.planPath,
        step: h.step,
        worktree: h.worktree,
        attempt: h.attempt,
      })
      .then(
        () => true,
        () => false,
      );
    out.push({ step_anchor: h.step, released });
  }
  tally.held.clear();
  return out;
}

type Interrupted = NonNullable<RunSummary['interrupted_steps']>[number];

async function summarize(
  rc: RunCtx,
  results: { worker: string; busy_ms: number }[],
  wall_ms: number,
  released: Interrupted[],
): Promise<RunSummary> {
  const sc = stateCallIn(rc, rc.flow.repo.mainRoot);
  const cat = await rc.store.ready(sc, { plan: rc.prep.planPath });
  const show = await rc.store.show(sc, { plan: rc.prep.planPath, items: 'none' });
  const steps = show.plans[0]?.steps ?? [];
  const { implementerLogs } = await import('./step.js');
  const failed_steps = cat.failed_steps.map((a) => {
    // Where its output went (docs/run.md §1.1 item 6): the reason is only the tail's gist. Every attempt's
    // implementer logs, or, when a reviewer or resolver failed its last attempt, the files that attempt's
    // attempt_failed named (the implementer's run succeeded then; the failure is in theirs).
    const logs = rc.tally.failedLogs.get(a) ?? implementerLogs(rc, a);
    return {
      step_anchor: a,
      reason: steps.find((s) => s.anchor === a)?.fail_reason ?? 'failed',
      ...(logs.length ? { logs } : {}),
    };
  });
  const { blocked_steps, blocked_reasons, waiting_steps, waiting_reasons } = blockedSteps(cat, steps);
  // Review rounds of this run (with a reviewer) and the steps waiting for a human (docs/run.md §6).
  // A step that waited for a human before this run started is listed too: its decision is still to make.
  const needs_human = cat.needs_human_steps.map((a) => ({
    step_anchor: a,
    ...(rc.tally.needsHuman.get(a) ?? {
      review_ref: reviewRefName(rc.prep.slug, a),
      reason: steps.find((s) => s.anchor === a)?.fail_reason ?? 'waiting for a human',
    }),
  }));
  const reviewed = rc.opts.reviewer !== null || rc.opts.reviewAgent !== null;
  const plan_steps = steps
    .filter((s) => s.parent_anchor === null)
    .sort((a, b) => a.step_index - b.step_index)
    .map((s) => s.anchor);
  const done = cat.all_steps.length === cat.completed_steps.length;
  // Completed, not by this run: before it, or by another host while it ran (picked up by reconcile).
  const completed = new Set(cat.completed_steps);
  const ours = new Set(rc.tally.completed);
  // A step completed behind the driver's back while it held it is named apart (docs/agents.md §1.7).
  const outside = new Set(rc.tally.completedOutside.map((c) => c.step_anchor));
  const already_completed = plan_steps.filter((a) => completed.has(a) && !ours.has(a) && !outside.has(a));
  // What the run left unsettled because it stopped claiming early: every other list leaves these out.
  const settled = new Set([
    ...completed,
    ...cat.failed_steps,
    ...blocked_steps,
    ...cat.needs_human_steps,
    ...waiting_steps,
    ...released.map((r) => r.step_anchor),
  ]);
  const not_run_steps = plan_steps.filter((a) => !settled.has(a));
  // Not run because an owner outside the run held them: who, and until when (docs/run.md §1.4).
  const { heldElsewhereOf } = await import('./held.js');
  const held_steps = heldElsewhereOf(rc, steps, not_run_steps);
  const base = {
    steps_completed: [...rc.tally.completed],
    failed_steps,
    blocked_steps,
    ...(blocked_reasons.length ? { blocked_reasons } : {}),
    ...(released.length ? { interrupted_steps: released } : {}),
    commits: [...rc.tally.commits],
    wall_ms,
    workers: results,
    plan_steps,
    plan_done: done,
    ...(already_completed.length ? { already_completed } : {}),
    ...(reviewed ? { review_rounds: [...rc.tally.reviews].map(([step_anchor, r]) => ({ step_anchor, ...r })) } : {}),
    ...(needs_human.length ? { needs_human } : {}),
    ...(rc.tally.humanApproved.size
      ? { human_approved: [...rc.tally.humanApproved].filter((a) => rc.tally.completed.includes(a)) }
      : {}),
    // Behind a step waiting for a human, and no failed one: the dry run lists them the same (docs/run.md §1.10).
    ...(waiting_steps.length ? { waiting_steps, waiting_reasons } : {}),
    ...(not_run_steps.length ? { not_run_steps } : {}),
    ...(held_steps.length ? { held_steps } : {}),
    ...(rc.tally.completedOutside.length ? { completed_outside: [...rc.tally.completedOutside] } : {}),
    ...(rc.tally.resolved.length ? { conflicts_resolved: [...rc.tally.resolved] } : {}),
    usage: rc.tally.ledger.run,
    plan_usage: await rc.store.usageTotals(sc, { plan: rc.prep.planPath }),
  };
  let err: TugError | null = null;
  // Steps waiting for a human beside a spent budget or a stop: their hints name the decision first.
  const waitingForHuman = needs_human.length ? { needs_human_steps: needs_human.map((n) => n.step_anchor) } : {};
  // A budget reached by the plan's last step stopped nothing: the plan is done.
  const spentButDone = done && rc.tally.fatal instanceof TugError && rc.tally.fatal.code === 'BudgetExhausted';
  let fatal = spentButDone ? null : rc.tally.fatal;
  // The steps running when the budget was reached finished and counted: the error names the plan's totals
  // as `state show` gives them now, and those the budget was judged by (docs/run.md §7.2).
  if (fatal instanceof TugError && fatal.code === 'BudgetExhausted')
    fatal = new TugError('BudgetExhausted', {
      ...fatal.details,
      usage: base.plan_usage,
      reached_at: fatal.details.usage,
      ...waitingForHuman,
      // Integrated after the budget was spent, costing nothing (docs/run.md §7.2): the message names them.
      ...(base.human_approved?.length ? { approved_steps: base.human_approved } : {}),
    });
  if (fatal) err = fatal instanceof TugError ? fatal : new TugError('InternalError', { reason: String(fatal) });
  else if (rc.stop.signal.aborted && !done)
    err = new TugError('Interrupted', {
      plan_path: rc.prep.planPath,
      released_steps: released.map((r) => r.step_anchor),
      ...waitingForHuman,
    });
  else if (!done && needs_human.length)
    err = new TugError('NeedsHuman', { plan_path: rc.prep.planPath, steps: needs_human, failed_steps, blocked_steps });
  else if (!done)
    err = new TugError('PlanIncomplete', {
      plan_path: rc.prep.planPath,
      reason: `${failed_steps.length} failed, ${blocked_steps.length} blocked`,
      failed_steps,
      blocked_steps,
    });
  return err ? { status: 'error', ...base, error: err.toJSON() } : { status: 'ok', ...base };
}

/**
 * Blocked means blocked by a failed step (docs/run.md §1 item 4.9): a step merely waiting on unfinished ones
 * (an interrupted run) is not. Each comes with why: the failed steps (and steps waiting for a human) behind
 * it, and its unfinished dependencies (lifted, as claims see them: `blocked_by` of state show) with theirs.
 */
function blockedSteps(
  cat: { blocked_steps: string[]; failed_steps: string[]; needs_human_steps: string[] },
  steps: { anchor: string; status: string; blocked_by: string[] }[],
): {
  blocked_steps: string[];
  blocked_reasons: NonNullable<RunSummary['blocked_reasons']>;
  waiting_steps: string[];
  waiting_reasons: NonNullable<RunSummary['blocked_reasons']>;
} {
  const failed = new Set(cat.failed_steps);
  const human = new Set(cat.needs_human_steps);
  const stuck = (a: string) => failed.has(a) || human.has(a);
  const waitsOn = new Map(steps.map((s) => [s.anchor, s.blocked_by]));
  const status = new Map(steps.map((s) => [s.anchor, s.status]));
  // The stuck steps behind `a`, in the order its dependencies lead to them.
  const roots = (a: string, seen = new Set<string>()): string[] => {
    const out: string[] = [];
    for (const d of waitsOn.get(a) ?? []) {
      if (seen.has(d)) continue;
      seen.add(d);
      if (stuck(d)) out.push(d);
      else out.push(...roots(d, seen));
    }
    return out;
  };
  const blocked_steps = cat.blocked_steps.filter((a) => roots(a).some((r) => failed.has(r)));
  const blocked = new Set(blocked_steps);
  const rootText = (r: string) => `${r} ${failed.has(r) ? 'failed' : 'waits for a human'}`;
  const depText = (d: string) => {
    if (failed.has(d)) return `${d} (failed)`;
    if (human.has(d)) return `${d} (waits for a human)`;
    if (blocked.has(d)) return `${d} (blocked: ${roots(d).map(rootText).join(', ')})`;
    return `${d} (${status.get(d) ?? 'not done'})`;
  };
  const why = (a: string) => ({
    step_anchor: a,
    blocked_by: roots(a),
    reason: `waits on ${(waitsOn.get(a) ?? []).map(depText).join(', ')}`,
  });
  // Not blocked, but held all the same until a person decides (docs/run.md §6.3): the dry run lists them.
  const waiting_steps = cat.blocked_steps.filter((a) => !blocked.has(a) && roots(a).some((r) => human.has(r)));
  return {
    blocked_steps,
    blocked_reasons: blocked_steps.map(why),
    waiting_steps,
    waiting_reasons: waiting_steps.map(why),
  };
}

/**
 * The workers' commits skip git's auto maintenance (one more process after each); it runs here once
 * instead, unless the repository turned it off (`maintenance.auto`, which each commit would have honoured).
 */
async function autoMaintenance(rc: RunCtx): Promise<void> {
  const root = rc.flow.repo.mainRoot;
  const on = await rc.g.tryRun(['config', '--type=bool', '--get', 'maintenance.auto'], root).catch(() => null);
  if (!on || on.stdout.trim() === 'false') return;
  await rc.g.tryRun(['maintenance', 'run', '--auto', '--quiet'], root).catch(() => undefined);
}

async function removeWorkerTrees(rc: RunCtx): Promise<void> {
  const trees = await leftoverTrees(rc.g, rc.flow.repo, rc.prep.slug, { foreign: 'skip' });
  // A tree a killed `git worktree add` left locked ('initializing', adopted since): `remove --force` keeps a
  // locked tree, and it would stay behind for good (docs/run.md §1.6).
  const { adminDirOf } = await import('../git/dot-git.js');
  for (const t of trees) {
    const admin = adminDirOf(t.path);
    if (admin && existsSync(join(admin, 'locked')))
      await rc.g.tryRun(['worktree', 'unlock', t.path], rc.flow.repo.mainRoot);
  }
  await removeTrees(rc.g, rc.flow.repo.mainRoot, trees);
}
