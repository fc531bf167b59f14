/**
 * One worker (docs/run.md §1 item 4): claim → reset to the integration tip → start → heartbeat → execute
 * (refactors, implementer, checkpoints, commit) → completion preconditions → integrate under the lock →
 * complete (substeps first, with their rebased hashes) → claim again, until the plan has nothing left.
 * Failures fail the attempt (`state fail` + the output tail as an artifact); a lost claim is dropped
 * without committing; a stop releases the claim.
 */
import { isClaimLost, TugError } from '../contract/errors.js';
import { stepTrailerGrep, trailersFormat, TUG_STEP, type TrailerCommit } from '../git/trailers.js';
import type { PlanStep } from '../plan/types.js';
import type { ReconcileInput } from '../state/index.js';
import {
  announceChange,
  pause,
  SIGNAL_STOP,
  stateCallIn,
  timed,
  tracerOf,
  waitForChange,
  type RunCtx,
  type RunSetup,
  staleLockRemoved,
  treeSwitchedBack,
} from './context.js';
import { completeRefused, failRefused, faultPoint } from './fault.js';
import { heldElsewhere } from './held.js';
import { integrationTip } from './refs.js';
import { startHeartbeat } from './heartbeat.js';
import { Aborted, executeStep, StepFailure, type StepRun } from './step.js';
import type { Integration } from './resolve.js';
import type { Phase } from './types.js';
import {
  ensureWorkerTree,
  linkDependencies,
  resetTree,
  brokenTree,
  workerTree,
  type TreeTurns,
  type WorkerTree,
} from './worktrees.js';

export interface WorkerResult {
  worker: string;
  busy_ms: number;
}

/** Reset to the integration tip, then the setup when the tree is `fresh` (just made) or a lockfile changed. */
async function prepareTree(
  rc: RunCtx,
  tree: WorkerTree,
  o: { fresh: boolean; step: string; attempt: number },
): Promise<void> {
  const head = tree.integratedHead;
  tree.integratedHead = undefined;
  const tip = rc.remote ? await rc.remote.sync() : await integrationTip(rc); // --remote: the step sees its deps
  const changed = await resetTree(
    rc.g,
    tree,
    tip,
    head ? { head, clean: true } : undefined,
    (lock) => staleLockRemoved(rc, lock),
    (from) => treeSwitchedBack(rc, tree, from),
  );
  tree.base = tip;
  if (!o.fresh && !changed) return;
  if (rc.opts.setupCommand.length === 0) {
    linkDependencies(rc.flow.repo.mainRoot, rc.flow.repo.commonDir, tree.path);
    return;
  }
  const [{ runChild }, { OutsideSpan }] = await Promise.all([import('./child.js'), import('./outside-check.js')]);
  // The setup runs the tree's code (its package scripts, which earlier steps' agents may have written) with
  // the driver's rights: inside the outside-write check, as an implementer (docs/agents.md §1.6).
  const span = await OutsideSpan.open(rc, tree);
  const logPath = (await import('./step.js')).logPathOf(rc, tree.worker, 0, 'setup');
  const out = await runChild({
    argv: rc.opts.setupCommand,
    cwd: tree.path,
    env: rc.ops.env,
    timeoutMs: rc.opts.stepTimeoutMs,
    logPath,
    signal: rc.stop.signal,
  });
  if (out.aborted) throw new Aborted();
  const by = `the setup command \`${rc.opts.setupCommand.join(' ')}\``;
  const failed = `run.setup_command failed in ${tree.path}: ${out.last_line}`;
  try {
    // Its output is a verification's, as a checkpoint's (docs/run.md §1.3).
    const who = { step: o.step, attempt: o.attempt, by, logs: [logPath], command: 'setup' as const };
    await span.close({ ...who, artifact: 'verification_report', endsRun: !out.ok }, out);
  } catch (e) {
    // A failed setup ends the run as ever, not as one failed attempt whose retry runs in a tree never set
    // up; what it changed outside is said in its reason (endsRun: the span left the run's error to this one).
    if (out.ok || !(e instanceof StepFailure)) throw e;
    throw new TugError('InvalidArgument', { reason: `${failed}; ${e.reason}` });
  }
  if (!out.ok) throw new TugError('InvalidArgument', { reason: failed });
}

/**
 * The turns of one run's worktree creations (worktrees.ts TreeTurns): the branch-config writes one at a time
 * ("could not lock config file" otherwise), the worktree adds one at a time ("failed to read
 * .git/worktrees/<w>/commondir" otherwise), but a config write beside another tree's add, so the last
 * worker's tree waits for the adds before it, not for every git call of them.
 */
const turnsOf = new WeakMap<RunSetup, TreeTurns>();
function treeTurns(rc: RunSetup): TreeTurns {
  let turns = turnsOf.get(rc);
  if (!turns) {
    const lane = () => {
      let last: Promise<unknown> = Promise.resolve();
      return <T>(fn: () => Promise<T>): Promise<T> => {
        const p = last.then(fn, fn);
        last = p.catch(() => undefined);
        return p;
      };
    };
    const config = lane();
    const add = lane();
    turns = { config, add };
    turnsOf.set(rc, turns);
  }
  return turns;
}

export type MadeTree = Awaited<ReturnType<typeof workerTree>>;

/** Worker k's tree at the run's start tip `tip` (made, or an earlier run's), in its turns (treeTurns). */
export function makeWorkerTree(rc: RunSetup, k: number, tip: string): Promise<MadeTree> {
  return workerTree(rc.g, rc.flow.repo, rc.prep.slug, rc.prep.planPath, rc.prep.base, k, tip, treeTurns(rc));
}

/** Losses of the same step in a row after which the run stops claiming (ClaimLostRepeatedly). */
export const LOSS_LIMIT = 5;
/** The wait after the first loss of a step; it doubles with each loss in a row, up to the max. */
const LOSS_BACKOFF_MS = 200;
const LOSS_BACKOFF_MAX_MS = 5000;

/** How a claimed step ended: settled (completed, failed, lost: then the refusal) or still held. */
interface Outcome {
  settled: boolean;
  lost?: TugError;
}

/** `state reconcile --ref tugplan/<slug>`: settles completions refused after a fast-forward. */
export async function reconcileFromIntegration(
  rc: RunSetup & Pick<RunCtx, 'remote'> & Partial<Pick<RunCtx, 'integrationTips'>>,
  listed?: { commits: TrailerCommit[]; scanned: number },
  mine?: Pick<ReconcileInput, 'held' | 'worktree'>,
) {
  const { readTrailerCommits } = await import('../git/log.js');
  // Once the workers started, from where the run left the branch: a tip moved outside the run
  // (OutsideWrite, docs/agents.md §1.6) completes nothing (`tugcode state reconcile` reads it when wanted).
  const ref = rc.remote
    ? await rc.remote.syncRef()
    : (rc.integrationTips?.latest() ?? `refs/heads/${rc.prep.integration}`);
  const { commits, scanned } = listed ?? (await readTrailerCommits(rc.g, rc.flow.repo.mainRoot, [ref]));
  return await rc.store.reconcile(stateCallIn(rc, rc.flow.repo.mainRoot), {
    plan: rc.prep.planPath,
    commits,
    scanned_commits: scanned,
    ...mine,
  });
}

/**
 * A claimed step whose own commit (`Tug-Step: <step>`, `Tug-Plan: <plan>`) is on the local integration
 * branch already: the claim is handed back and the step completed by reconcile from that commit (its
 * substeps from theirs). Returns whether so. The run's memory of the branch (history.ts) answers when no
 * commit names the step; otherwise one `git log --grep`, and the trailers are read only on a hit.
 */
async function settleIntegrated(rc: RunCtx, W: string, step: PlanStep, attempt: number): Promise<boolean> {
  if (rc.history && !(await rc.history.mayName(step.anchor))) return false;
  const root = rc.flow.repo.mainRoot;
  // Where the run left the branch: a commit put there outside the run settles nothing (reconcileFromIntegration).
  const ref = rc.integrationTips?.latest() ?? `refs/heads/${rc.prep.integration}`;
  const hit = await rc.g.tryRun(
    ['log', '-1', '--format=%H', '-E', `--grep=${stepTrailerGrep(step.anchor)}`, ref],
    root,
  );
  if (hit.status !== 0 || hit.stdout.trim() === '') return false;
  const { readTrailerCommits } = await import('../git/log.js');
  const listed = await readTrailerCommits(rc.g, root, [ref]);
  const mine = (c: TrailerCommit) => c.steps.includes(step.anchor) && c.plans.includes(rc.prep.planPath);
  if (!listed.commits.some(mine)) return false;
  // Reconcile skips a step under a live claim: ours is handed back in its transaction.
  await reconcileFromIntegration(rc, listed, { held: { step: step.anchor, attempt }, worktree: W });
  return true;
}

/** Worker k until the plan has nothing left for it; `tree0` is its tree, from makeWorkerTree. */
export async function runWorker(rc: RunCtx, k: number, tree0: Promise<MadeTree>): Promise<WorkerResult> {
  const worker = `w${k}`;
  let busy = 0;
  const made = await tree0;
  const tree = made.tree;
  let fresh = made.created;
  let backoff = 100;
  let losses = { step: '', count: 0 };
  const sc = stateCallIn(rc, tree.path);
  while (!rc.stop.signal.aborted && (!rc.tally.draining || rc.tally.approvedOnly)) {
    const tc = tracerOf(rc, worker, '');
    try {
      await timed(tc, 'drift', () => rc.drift.check());
    } catch (e) {
      if (!(e instanceof TugError && e.code === 'PlanDrift')) throw e;
      // The run stops claiming; the other workers finish the steps they hold, then stop (PlanDrift at the end).
      rc.tally.fatal ??= e;
      rc.tally.draining = true;
      rc.tally.approvedOnly = false;
      announceChange(rc);
      break;
    }
    // A tree removed or broken during the last step (its attempt failed WorktreeBroken) is made again first.
    if (await ensureWorkerTree(rc.g, rc.flow.repo, rc.prep, tree, () => integrationTip(rc))) fresh = true;
    // A spent budget claims only the steps a human approved, which cost nothing to integrate (docs/run.md §7.2).
    const approvedOnly = rc.tally.draining;
    const r = approvedOnly
      ? await claimApproved(rc, sc, tree.path)
      : await timed(tc, 'claim', () =>
          rc.store.claim(sc, {
            plan: rc.prep.planPath,
            worktree: tree.path,
            lease_seconds: rc.opts.leaseSeconds,
          }),
        );
    if (r === null) break;
    if (!r.claimed && approvedOnly) {
      // An approved step behind one this run still holds: that step may finish and let it go.
      if (rc.tally.held.size === 0) break;
      await waitForChange(rc, backoff);
      backoff = Math.min(2000, backoff * 2);
      continue;
    }
    if (!r.claimed) {
      if (r.all_completed || r.claimed_steps.length === 0) break;
      // Whom it waits on when that is no worker of this run, and until when (docs/run.md §1.4).
      const mine = new Set([...rc.tally.held.values()].map((h) => h.step));
      const held_by = await heldElsewhere(
        rc,
        r.claimed_steps.filter((a) => !mine.has(a)),
      );
      rc.emit({
        type: 'waiting',
        worker,
        claimed_steps: r.claimed_steps,
        ...(r.touches_held ? { touches_held: r.touches_held } : {}),
        ...(held_by.length ? { held_by } : {}),
      });
      await waitForChange(rc, backoff);
      backoff = Math.min(2000, backoff * 2);
      continue;
    }
    backoff = 100;
    const t0 = Date.now();
    const step = rc.prep.plan.steps.find((s) => s.anchor === r.step_anchor)!;
    rc.emit({
      type: 'claimed',
      worker,
      step_anchor: r.step_anchor,
      attempt: r.attempt,
      resumed: r.resumed,
      reclaimed_from_expired: r.reclaimed_from_expired,
      failures: r.failures,
      max_attempts: rc.opts.maxAttempts,
    });
    // A step whose commit is on the integration branch already is settled from it, never implemented again:
    // a host that died after pushing it (--remote), or a claim ended between the fast-forward and
    // `complete` (an outside `state reset --force`). With --remote, any claim after an earlier attempt:
    // one taken over from an expired lease, and one a restarted host handed back when it adopted its tree
    // (docs/run.md §1.5), before its start-up reconcile settled the step it had pushed.
    const integrated = rc.remote
      ? (r.reclaimed_from_expired || r.attempt > 1) &&
        (await rc.remote.settleIntegrated(tree.path, r.step_anchor, r.attempt))
      : await timed(tc, 'settle', () => settleIntegrated(rc, tree.path, step, r.attempt));
    if (integrated) {
      announceChange(rc);
      continue;
    }
    rc.tally.held.set(worker, { step: r.step_anchor, attempt: r.attempt, worktree: tree.path });
    let outcome: Outcome = { settled: false };
    try {
      outcome = await runClaimed(rc, tree, {
        step,
        attempt: r.attempt,
        fresh,
        approved: r.human_decision === 'approved' ? r.review_commit : null,
        humanNotes: r.human_notes,
      });
    } finally {
      // A claim left held (a stop, a fatal error) stays in the tally: the run releases it at its end.
      if (outcome.settled) rc.tally.held.delete(worker);
      fresh = false;
      busy += Date.now() - t0;
      announceChange(rc);
    }
    // The driver never spins on one step: each loss in a row waits longer, and past LOSS_LIMIT the run stops
    // claiming with the step and the refusal named (docs/run.md §1.4).
    if (!outcome.lost) {
      losses = { step: '', count: 0 };
      continue;
    }
    losses = { step: step.anchor, count: losses.step === step.anchor ? losses.count + 1 : 1 };
    if (losses.count >= LOSS_LIMIT) {
      rc.tally.fatal ??= new TugError('ClaimLostRepeatedly', {
        plan_path: rc.prep.planPath,
        step_anchor: step.anchor,
        worker,
        losses: losses.count,
        refusal_code: outcome.lost.code,
        refusal: outcome.lost.message,
      });
      rc.tally.draining = true;
      rc.tally.approvedOnly = false;
      announceChange(rc);
      break;
    }
    await pause(rc, Math.min(LOSS_BACKOFF_MAX_MS, LOSS_BACKOFF_MS * 2 ** (losses.count - 1)));
  }
  // `signal` only for SIGINT/SIGTERM: a worker stopped by another's fatal error (or a lost run lock) is done.
  const signalled = rc.stop.signal.aborted && rc.stop.signal.reason === SIGNAL_STOP;
  rc.emit({ type: 'worker_stopped', worker, reason: signalled ? 'signal' : 'done' });
  return { worker, busy_ms: busy };
}

/**
 * Once a budget is spent (docs/run.md §7.2): a claim of a step a human approved, ready now; not claimed when
 * one is approved but not ready; null when no step waits approved.
 */
async function claimApproved(
  rc: RunCtx,
  sc: ReturnType<typeof stateCallIn>,
  worktree: string,
): Promise<Awaited<ReturnType<RunCtx['store']['claim']>> | null> {
  const shown = await rc.store.show(sc, { plan: rc.prep.planPath, items: 'none' });
  const approved = (shown.plans[0]?.steps ?? []).filter(
    (s) =>
      s.parent_anchor === null && s.status === 'pending' && s.human_decision === 'approved' && s.review_commit !== null,
  );
  let last: Awaited<ReturnType<RunCtx['store']['claim']>> | null = null;
  for (const s of approved) {
    last = await rc.store.claim(sc, {
      plan: rc.prep.planPath,
      worktree,
      lease_seconds: rc.opts.leaseSeconds,
      step: s.anchor,
    });
    if (last.claimed) return last;
  }
  return last;
}

/** Runs one claimed step (`fresh`: in a tree just made); says whether the claim is settled, not still held. */
async function runClaimed(
  rc: RunCtx,
  tree: WorkerTree,
  claim: {
    step: PlanStep;
    attempt: number;
    fresh: boolean;
    /** The kept commit a human approved (docs/run.md §6.3): integrated as it is. */
    approved?: string | null;
    humanNotes?: string | null;
  },
): Promise<Outcome> {
  const { step, attempt } = claim;
  const worker = tree.worker;
  const W = tree.path;
  // The heartbeat runs from the claim on: a slow setup must not let the lease lapse, and a claim lost
  // during the reset, the setup or `start` is handled like any other lost claim.
  const beat = startHeartbeat(rc, W, step.anchor, attempt);
  // The step's time starts once the tree is reset and the step started (the setup has a timeout of its own).
  let deadline = Infinity;
  const x: StepRun = {
    rc,
    tree,
    sc: stateCallIn(rc, W),
    attempt,
    beat,
    left: () => Math.max(1000, deadline - Date.now()),
    phase: (p: Phase, unit?: string) => {
      x.unit = unit === step.anchor ? undefined : unit;
      rc.emit({
        type: 'phase',
        worker,
        step_anchor: step.anchor,
        phase: p,
        ...(x.unit ? { substep_anchor: x.unit } : {}),
      });
    },
    tr: tracerOf(rc, worker, step.anchor),
    humanNotes: claim.humanNotes ?? null,
  };
  const tr = x.tr;
  try {
    x.phase('reset');
    await timed(tr, 'reset', () => prepareTree(rc, tree, { fresh: claim.fresh, step: step.anchor, attempt }));
    if (beat.signal.aborted) throw new Aborted();
    await timed(tr, 'start', () =>
      rc.store.start(x.sc, { plan: rc.prep.planPath, step: step.anchor, worktree: W, attempt }),
    );
    deadline = Date.now() + rc.opts.stepTimeoutMs;
    const approved = claim.approved ?? null;
    const units = approved
      ? await timed(tr, 'approved', async () => (await import('./review.js')).resumeApproved(x, step, approved))
      : await executeStep(x, step);
    await timed(tr, 'preconditions', () => checkPreconditions(x, units));
    if (rc.opts.reviewer !== null || rc.opts.reviewAgent !== null) {
      // The review gate (docs/run.md §6): loaded only when a reviewer is configured. It runs before the
      // integration (not for a step a human approved) and again after any resolved conflict (§1.9).
      const { reviewGate } = await import('./review.js');
      const gated = async (): Promise<'integrate' | 'escalated'> => {
        const gate = await timed(tr, 'review', () => reviewGate(x, step));
        if (gate === 'revised') await timed(tr, 'preconditions', () => checkPreconditions(x, units));
        return gate === 'escalated' ? 'escalated' : 'integrate';
      };
      x.afterResolve = gated;
      if (!approved && (await gated()) === 'escalated') return { settled: true };
    }
    x.phase('integrate');
    const { integrateResolving } = await import('./resolve.js');
    const head = await timed(tr, 'integrate', () =>
      integrateResolving(x, units, (keep) => integrateStep(x, keep, units)),
    );
    if (head === 'escalated') return { settled: true };
    faultPoint(rc.ops.env, 'after-integrate', step.anchor);
    x.phase('complete');
    tree.integratedHead = head.after;
    const done = await timed(tr, 'complete', () => completeUnits(x, units, head));
    const hash = done.at(-1) ?? null;
    rc.tally.completed.push(step.anchor);
    rc.tally.commits.push(...done.filter((h): h is string => h !== null));
    rc.emit({ type: 'step_completed', worker, step_anchor: step.anchor, commit_hash: hash });
    if (approved) {
      // The kept commit is integrated: its review ref has done its job.
      const { reviewRefName } = await import('../contract/layout.js');
      await rc.g.tryRun(['update-ref', '-d', reviewRefName(rc.prep.slug, step.anchor)], rc.flow.repo.mainRoot);
    }
    return { settled: true };
  } catch (e) {
    tree.integratedHead = undefined;
    return await handleFailure(x, step, e);
  } finally {
    beat.stop();
  }
}

/** The strict completion checks of every unit, before integrating (a parent's substeps complete later). */
async function checkPreconditions(x: StepRun, units: PlanStep[]): Promise<void> {
  const { rc } = x;
  for (const u of units) {
    const blocker = await rc.store.completionBlocker(x.sc, {
      plan: rc.prep.planPath,
      step: u.anchor,
      worktree: x.tree.path,
      attempt: x.attempt,
    });
    if (!blocker || (blocker.code === 'SubstepsIncomplete' && u === units[units.length - 1])) continue;
    if (['ChecklistIncomplete', 'SubstepsIncomplete', 'RefactorsIncomplete'].includes(blocker.code))
      throw new StepFailure(blocker.code as 'ChecklistIncomplete', `${u.anchor}: ${blocker.message}`);
    throw blocker;
  }
}

/**
 * One integration of the step's commits (docs/run.md §1 item 4.7). `keep`: a conflict comes back as the
 * rebase left stopped, for the resolver (resolve.ts); otherwise it fails the attempt IntegrationConflict.
 */
async function integrateStep(x: StepRun, keep: boolean, units: PlanStep[]): Promise<Integration> {
  const { rc, beat } = x;
  const W = x.tree.path;
  const top = units[units.length - 1]!.anchor;
  const check = await import('./outside-check.js');
  // What the attempt brings names only its own steps (docs/agents.md §1.6), checked before anything moves.
  const onto = rc.integrationTips?.latest() ?? (await integrationTip(rc));
  const own = { worktree: W, onto, step: top, attempt: x.attempt, units: units.map((u) => u.anchor) };
  await check.checkOwnTrailers(rc, own);
  if (rc.remote) return rc.remote.integrate(W, beat, { keepConflict: keep });
  const [{ integrate }, { boundedGitRunner }] = await Promise.all([
    import('../gitflow/integrate.js'),
    import('../git/bounded.js'),
  ]);
  const before = await integrationTip(rc);
  const tips = rc.integrationTips;
  const integrating = integrate({
    // Under the lock: the branch must be where the run left it (a tip moved outside the run is never built
    // on), and each tip the run leaves is recorded (integration-tips.ts).
    expectTip: (tip) =>
      check.checkIntegrationTip(rc, { step: top, attempt: x.attempt, by: 'something outside the run', tip }),
    moved: (head) => tips?.record(head),
    git: rc.g,
    // The rebase's hooks count against the step's time too (docs/run.md §2), killed with their process group.
    rebaseGit: boundedGitRunner(rc.ops.env, { timeoutMs: x.left, signal: beat.signal }),
    repo: rc.flow.repo,
    worktree: W,
    integrationBranch: rc.prep.integration,
    heartbeat: () => beat.now(),
    trace: x.tr,
    notesRewrite: rc.notesRewrite,
    noVerify: rc.flow.config.run.no_verify,
    keepConflict: keep,
  });
  const r = await (tips ? tips.track(integrating) : integrating).catch((e: unknown) => {
    if (beat.signal.aborted) throw new Aborted();
    if (e instanceof TugError && e.code === 'GitError' && e.details.timed_out === true)
      throw new StepFailure('StepTimeout', `integrating: ${String(e.details.reason)}`);
    throw e;
  });
  if (r.integrated) return { before, after: r.head };
  if (r.reason === 'ownership') throw new Aborted();
  if (r.stop) return { stop: r.stop };
  const files = (r.error.details.files as string[] | undefined) ?? [];
  if (files.length === 0)
    throw new StepFailure('HookFailed', `rebase onto ${rc.prep.integration} failed without a conflict (a git hook?)`);
  throw new StepFailure(
    'IntegrationConflict',
    `rebase onto ${rc.prep.integration} conflicted in ${files.join(', ') || 'the tree'}`,
  );
}

/**
 * Complete the substeps (their rebased hashes, by Tug-Step trailer), then the step; returns each unit's
 * commit in that order (null: a `**Commit:** N/A` unit), the step's last.
 */
async function completeUnits(
  x: StepRun,
  units: PlanStep[],
  head: { before: string; after: string },
): Promise<(string | null)[]> {
  const { rc, attempt } = x;
  const W = x.tree.path;
  const { before, after } = head;
  // After the fast-forward a refusal (the claim ended meanwhile: an outside `state reset --force`) is not a
  // failure: the step is settled at once by reconcile from the trailers, before any worker can claim it
  // again and implement it a second time.
  let refused = false;
  const completeUnit = async (anchor: string, commit: string | undefined) => {
    try {
      completeRefused(rc.ops.env, anchor);
      await rc.store.complete(x.sc, { plan: rc.prep.planPath, step: anchor, worktree: W, attempt, commit });
    } catch (e) {
      // A store that cannot write (a full disk, a lock held past the busy timeout, a database gone bad) is
      // no refusal: the run stops with it, and the next run's reconcile settles the step from its trailer.
      if (!(e instanceof TugError) || e.exitCode === 10 || e.code === 'Busy') throw e;
      refused = true;
    }
  };
  // One commit (a step without substeps): it is the new head, no log to read.
  if (units.length === 1) {
    const only = units[0]!;
    const commit = only.no_commit ? undefined : after;
    await completeUnit(only.anchor, commit);
    if (refused) await reconcileFromIntegration(rc);
    return [commit ?? null];
  }
  const out = await rc.g.run(
    ['log', `--format=%H ${trailersFormat([TUG_STEP], { valueOnly: true, separator: '%x2C' })}`, `${before}..${after}`],
    W,
  );
  const byStep = new Map<string, string>();
  for (const line of out.split('\n').filter(Boolean)) {
    const [hash, anchor] = line.split(' ') as [string, string | undefined];
    if (anchor && !byStep.has(anchor.trim())) byStep.set(anchor.trim(), hash);
  }
  const hashes: (string | null)[] = [];
  for (const u of units) {
    const commit = byStep.get(u.anchor);
    await completeUnit(u.anchor, commit);
    hashes.push(commit ?? null);
  }
  if (refused) await reconcileFromIntegration(rc);
  return hashes;
}

/** How a claimed step that threw ends: a lost claim dropped, a stop left held, a failure recorded. */
async function handleFailure(x: StepRun, step: PlanStep, e: unknown): Promise<Outcome> {
  const { rc, tree, beat, attempt, sc } = x;
  const worker = tree.worker;
  const W = tree.path;
  const plan = rc.prep.planPath;
  const lost = beat.lost() ?? (isClaimLost(e) ? e : null);
  if (lost) {
    // Completed behind the driver's back: keep the work and say so (docs/agents.md §1.7).
    const kept = await (await import('./outside-check.js')).completedElsewhere(rc, tree, step.anchor, attempt);
    rc.emit({
      type: 'claim_lost',
      worker,
      step_anchor: step.anchor,
      attempt,
      error_code: kept === null ? lost.code : 'StepCompletedElsewhere',
      ...(kept ? { kept_commit: kept } : {}),
    });
    // A refusal of our own transition (InvalidTransition) leaves the claim ours: hand it back, so the
    // attempt is discarded and the next claim starts afresh. Fenced: a claim really lost is not touched.
    await rc.store.release(sc, { plan, step: step.anchor, worktree: W, attempt }).catch(() => undefined);
    await resetTree(rc.g, tree, await integrationTip(rc), undefined, undefined, (from) =>
      treeSwitchedBack(rc, tree, from),
    ).catch(() => undefined);
    return { settled: true, lost };
  }
  if (rc.stop.signal.aborted) return { settled: false }; // still held: the run releases it
  if (e instanceof Aborted || (e instanceof TugError && e.code === 'Busy')) {
    // Not lost and not stopping (state.db stayed locked; the heartbeat before integrating could not run):
    // hand the claim back now, so its lease does not keep the step from every other worker.
    await rc.store.release(sc, { plan, step: step.anchor, worktree: W, attempt }).catch(() => undefined);
    await resetTree(rc.g, tree, await integrationTip(rc), undefined, undefined, (from) =>
      treeSwitchedBack(rc, tree, from),
    ).catch(() => undefined);
    return { settled: true };
  }
  // A git call that failed because the tree went away under it (removed, `.git` deleted) is that tree's
  // fault, not the run's: fail the attempt WorktreeBroken and let the worker recreate the tree.
  if (!(e instanceof StepFailure)) e = brokenTree(tree.path, step.anchor) ?? e;
  if (!(e instanceof StepFailure)) {
    rc.tally.fatal ??= e;
    rc.stop.abort();
    return { settled: false };
  }
  // Where the output of what failed went, so whoever reads the failure knows (docs/run.md §1.3): the
  // reviewer's or resolver's own files when one of them failed the attempt, else the implementer logs.
  const { existingLogs, implementerLogs } = await import('./step.js');
  const logs = e.logs ? existingLogs(rc, e.logs) : implementerLogs(rc, step.anchor, attempt);
  if (e.logs) rc.tally.failedLogs.set(step.anchor, logs);
  else rc.tally.failedLogs.delete(step.anchor);
  rc.emit({
    type: 'attempt_failed',
    worker,
    step_anchor: step.anchor,
    attempt,
    reason_code: e.code,
    reason: e.reason,
    ...(logs.length ? { logs } : {}),
    ...(x.unit ? { substep_anchor: x.unit } : {}),
  });
  try {
    if (e.output) {
      await rc.store.artifact(sc, {
        plan,
        step: step.anchor,
        worktree: W,
        attempt,
        kind: e.artifact,
        summary: e.output.last_line || e.reason,
        content: e.output.tail,
      });
    }
    failRefused(rc.ops.env, step.anchor);
    const failed = await rc.store.fail(sc, {
      plan,
      step: step.anchor,
      worktree: W,
      attempt,
      reason: `${e.code}: ${e.reason}`,
    });
    // At its attempt cap the step is failed: said on its own (notify, docs/run.md §7.4).
    if (failed.step_status === 'failed')
      rc.emit({
        type: 'step_failed',
        worker,
        step_anchor: step.anchor,
        failures: failed.failures,
        reason: `${e.code}: ${e.reason}`,
        max_attempts: rc.opts.maxAttempts,
      });
  } catch (err) {
    if (!(err instanceof TugError)) throw err;
    // A lost claim is someone else's step now. Any other refusal means the state cannot count this attempt:
    // claiming again would run the step again uncounted, for ever, so the run stops on it (docs/run.md §1.4).
    if (!isClaimLost(err)) {
      rc.tally.fatal ??= err;
      rc.stop.abort();
      // The failed attempt's files go as they would have: on a full disk they are often what filled it.
      await resetFailedTree(rc, tree);
      return { settled: false };
    }
  }
  await resetFailedTree(rc, tree);
  return { settled: true };
}

/** A failed attempt's worktree back at the integration tip, its files gone (best effort). */
async function resetFailedTree(rc: RunCtx, tree: WorkerTree): Promise<void> {
  await resetTree(rc.g, tree, await integrationTip(rc), undefined, undefined, (from) =>
    treeSwitchedBack(rc, tree, from),
  ).catch(() => undefined);
}
