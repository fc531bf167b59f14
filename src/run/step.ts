/**
 * One claimed step, executed in the worker's worktree (docs/run.md §1 item 4.4–4.5, §2, §3): its substeps
 * first (topological order inside the subtree, ties by step_index), then the step; for each unit, its
 * phases in order — the declared refactors, the implementer, the command checkpoints,
 * `--complete-remaining`, and a commit on the worker branch. Any failure is a StepFailure with its reason
 * code; a lost claim or a stop aborts.
 */
import { appendFileSync, existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { toTugError, TugError } from '../contract/errors.js';
import { LOGS_DIR, runLogDir } from '../contract/layout.js';
import { topLevelOf } from '../plan/lift.js';
import type { PlanStep } from '../plan/types.js';
import { stateDbPath } from '../state/context.js';
import type { StateCall } from '../state/store.js';
import type { Beat } from './heartbeat.js';
import type { RunCtx } from './context.js';
import { timed, type TraceFn, staleLockRemoved } from './context.js';
import { Aborted, StepFailure } from './failure.js';
import { boundedGitRunner } from '../git/bounded.js';
import { gitThreadOf } from '../git/git-thread.js';
import { catchUpTree, clearStaleLocks, guardTree, lockFault, treeFault, type WorkerTree } from './worktrees.js';
import { settled } from './preflight.js';
import { checkpointCommand } from './checkpoints.js';
import { integrationTip } from './refs.js';
import { endedHow } from './child.js';
import type { PreparedMessage } from '../gitflow/commit.js';
import type { Phase, ReviewIssue, ReviewVerdict } from './types.js';

export { Aborted, StepFailure } from './failure.js';

/** One claimed step as its phases see it: the run, the worker's tree, the claim and its heartbeat. */
export interface StepRun {
  rc: RunCtx;
  tree: WorkerTree;
  /** The run's state call in the worker's tree. */
  sc: StateCall;
  attempt: number;
  /** The claim's heartbeat: its signal aborts when the claim is lost or the run stops. */
  beat: Beat;
  /** What is left of the step's time, in ms (at least 1 s, so a last command still gets to start). */
  left: () => number;
  /**
   * Emits the phase; `unit`: the (sub)step it runs for, so a substep's phases say which substep (docs/run.md
   * §1.3). Without it, the claimed step's own.
   */
  phase: (p: Phase, unit?: string) => void;
  /** The substep being worked on, if any: what an `attempt_failed` names as its `substep_anchor`. */
  unit?: string | undefined;
  tr?: TraceFn | undefined;
  /** What a human's `state decide --revise` left for the step (docs/run.md §6.3): in each unit's brief. */
  humanNotes?: string | null | undefined;
  /**
   * Runs after a conflict of the integration was resolved and the checkpoints passed again, before the
   * next integration try (docs/run.md §1.9, §6.2): the review gate on the merged commits, set by the worker
   * when a reviewer is configured. `escalated`: the step now waits for a human (its claim has ended), so
   * nothing is integrated.
   */
  afterResolve?: ((units: PlanStep[]) => Promise<'integrate' | 'escalated'>) | undefined;
  /** The unit's catch-up, done already beside the outside snapshot (earlyCatchUp): its outcome. */
  caughtUp?: (() => boolean) | undefined;
  /**
   * This attempt's review verdicts so far, each with its round (docs/run.md §6.2): a review after a
   * resolution continues them (its rounds count on, its REVISE verdicts count toward `review_rounds`).
   */
  verdicts?: (ReviewVerdict & { round: number })[];
}

/**
 * The substeps of `top` in execution order, then `top` itself (docs/run.md §1 item 4.4): a topological order
 * of the dependencies inside the subtree, where a parent also waits for its own substeps (its commit comes
 * after theirs), ties broken by step_index.
 */
export function executionOrder(steps: PlanStep[], top: PlanStep): PlanStep[] {
  const inTree = new Map<string, PlanStep>([[top.anchor, top]]);
  for (let grew = true; grew;) {
    grew = false;
    for (const s of steps)
      if (s.parent_anchor && inTree.has(s.parent_anchor) && !inTree.has(s.anchor)) {
        inTree.set(s.anchor, s);
        grew = true;
      }
  }
  const waitsFor = (s: PlanStep): string[] => [
    ...s.depends_on.filter((d) => inTree.has(d)),
    ...[...inTree.values()].filter((c) => c.parent_anchor === s.anchor).map((c) => c.anchor),
  ];
  const done = new Set<string>();
  const out: PlanStep[] = [];
  const pending = [...inTree.values()].sort((a, b) => a.step_index - b.step_index);
  while (pending.length) {
    const i = pending.findIndex((s) => waitsFor(s).every((d) => done.has(d)));
    const next = pending.splice(i < 0 ? 0 : i, 1)[0]!; // a cycle inside the subtree cannot pass validation
    done.add(next.anchor);
    out.push(next);
  }
  return out;
}

export function logPathOf(rc: RunCtx, anchor: string, attempt: number, what = 'attempt'): string {
  const dir = runLogDir(rc.flow.repo.mainRoot, rc.prep.slug);
  mkdirSync(dir, { recursive: true });
  return join(dir, `${anchor}-${what}${attempt}.log`);
}

/**
 * The implementer logs the run wrote for top-level step `top` (its substeps' included), repo-relative, by
 * attempt then execution order; only `attempt`'s when given. What a failed step's output names
 * (docs/run.md §1.1 item 6).
 */
export function implementerLogs(rc: Pick<RunCtx, 'flow' | 'prep'>, top: string, attempt?: number): string[] {
  const step = rc.prep.plan.steps.find((s) => s.anchor === top);
  if (!step) return [];
  const units = executionOrder(rc.prep.plan.steps, step).map((u) => u.anchor);
  let files: string[];
  try {
    files = readdirSync(runLogDir(rc.flow.repo.mainRoot, rc.prep.slug));
  } catch {
    return [];
  }
  const found: { unit: number; attempt: number; file: string }[] = [];
  for (const file of files) {
    const m = /^(.+)-attempt(\d+)\.log$/.exec(file);
    const unit = m ? units.indexOf(m[1]!) : -1;
    if (unit < 0 || (attempt !== undefined && Number(m![2]) !== attempt)) continue;
    found.push({ unit, attempt: Number(m![2]), file });
  }
  found.sort((a, b) => a.attempt - b.attempt || a.unit - b.unit);
  return found.map((f) => `${LOGS_DIR}/${rc.prep.slug}/${f.file}`);
}

/** Of `files` (absolute, under the run's log directory), those that exist, repo-relative as `implementerLogs` names them. */
export function existingLogs(rc: Pick<RunCtx, 'flow' | 'prep'>, files: string[]): string[] {
  const dir = runLogDir(rc.flow.repo.mainRoot, rc.prep.slug);
  return files
    .filter((f) => dirname(f) === dir && existsSync(f))
    .map((f) => `${LOGS_DIR}/${rc.prep.slug}/${basename(f)}`);
}

function throwIfAborted(beat: Beat): void {
  if (beat.signal.aborted) throw new Aborted();
}

/** The owner arguments of `u` under the claim. */
function ownerOf(x: StepRun, u: PlanStep) {
  return { plan: x.rc.prep.planPath, step: u.anchor, worktree: x.tree.path, attempt: x.attempt };
}

/** Execute the claimed step and its substeps; returns the units in commit order. */
export async function executeStep(x: StepRun, top: PlanStep): Promise<PlanStep[]> {
  const { rc, beat } = x;
  const W = x.tree.path;
  const units = executionOrder(rc.prep.plan.steps, top);
  for (const u of units) {
    x.unit = u === top ? undefined : u.anchor;
    throwIfAborted(beat);
    if (u !== top) await rc.store.start(x.sc, ownerOf(x, u));
    if (u.refactors.length > 0) await refactorPhase(x, u);
    throwIfAborted(beat);
    const message = u.commit_message ?? `chore(${rc.prep.slug}): ${u.title}`;
    // The message with its trailers is made while the implementer runs (commitStepOnly checks it still fits).
    const prepared = u.no_commit ? undefined : prepareMessage(rc, W, u.anchor, x.attempt, message);
    if (rc.opts.implementer || rc.opts.agent) await implementerPhase(x, u);
    throwIfAborted(beat);
    guardTree(W); // the implementer may have removed the tree or its `.git` file
    if (rc.opts.checkpoints) await checkpointPhase(x, u);
    await timed(x.tr, 'update', () =>
      rc.store.update(x.sc, { ...ownerOf(x, u), items: [], bulk: [], batch: false, complete_remaining: true }),
    );
    throwIfAborted(beat);
    if (!prepared) continue; // `**Commit:** N/A`
    await commitPhase(x, u, message, prepared);
  }
  x.unit = undefined;
  // Nothing of the implementer's runs any more: the integration that follows acts on this tree only.
  guardTree(W);
  return units;
}

/**
 * A REVISE round (docs/run.md §6.2): the implementer again on the step, in the same attempt and worktree,
 * with the reviewer's issues in its brief; the step's checkpoints; then the step's commit made again over
 * the revision (soft reset to its parent, the same message and trailers), so the integration branch still
 * gets one commit per unit. A step whose own commit is `**Commit:** N/A` has nothing to hold a revision: one
 * that changes files fails ReviewRejected.
 */
export async function reviseStep(x: StepRun, top: PlanStep, issues: ReviewIssue[]): Promise<void> {
  const { rc, beat } = x;
  const W = x.tree.path;
  const { headTip } = await import('../git/ref-files.js');
  const topCommit = top.no_commit ? null : await headTip(rc.g, W);
  await implementerPhase(x, top, { review_issues: issues });
  throwIfAborted(beat);
  guardTree(W);
  if (rc.opts.checkpoints) await checkpointPhase(x, top);
  await rc.store.update(x.sc, { ...ownerOf(x, top), items: [], bulk: [], batch: false, complete_remaining: true });
  throwIfAborted(beat);
  if (!topCommit) {
    const { statusDetails } = await import('../git/refs.js');
    const { ALL_BUT_RUNTIME } = await import('../git/runtime-files.js');
    if ((await statusDetails(rc.g, W, { pathspec: ALL_BUT_RUNTIME })).length > 0)
      throw new StepFailure(
        'ReviewRejected',
        `${top.anchor}: the revision changed files, but the step's **Commit:** is N/A: no commit can hold them`,
      );
    return;
  }
  await rc.g.run(['reset', '--quiet', '--soft', `${topCommit}^`], W);
  await commitPhase(x, top, top.commit_message ?? `chore(${rc.prep.slug}): ${top.title}`, Promise.resolve(undefined));
}

/**
 * The unit's declared refactors, by `tugcode refactor run-step` as a child process: the kernel's work never
 * holds up the driver's event loop (refactor-child.ts).
 */
async function refactorPhase(x: StepRun, u: PlanStep): Promise<void> {
  const { rc } = x;
  x.phase('refactors', u.anchor);
  const [{ runRefactorChild }, { OutsideSpan }] = await Promise.all([
    import('./refactor-child.js'),
    import('./outside-check.js'),
  ]);
  // The verification runs the tree's tests, which an earlier unit's agent may have written, with the
  // driver's rights: inside the outside-write check, as an implementer (docs/agents.md §1.6).
  const span = await OutsideSpan.open(rc, x.tree);
  const logPath = logPathOf(rc, u.anchor, x.attempt, 'refactors-attempt');
  const r = await runRefactorChild(rc, {
    unit: u.anchor,
    attempt: x.attempt,
    tree: x.tree,
    timeoutMs: x.left(),
    signal: x.beat.signal,
    logPath,
  });
  if (r.out.aborted || x.beat.signal.aborted) throw new Aborted();
  const by = "the refactors' verification";
  await span.close({ step: u.anchor, attempt: x.attempt, by, command: 'refactors', logs: [logPath] }, r.out);
  if (r.out.timed_out) throw new StepFailure('StepTimeout', `${u.anchor}: ${pastTimeout(rc, 'refactors')}`, r.out);
  if (r.exit_code !== 0)
    throw new StepFailure(
      'RefactorFailed',
      `${u.anchor}: ${r.error?.code ?? 'error'}: ${r.error?.message ?? ''}`,
      r.out,
      'verification_report',
      [logPath],
    );
}

/**
 * The implementer (a command or an agent) on the unit's brief, with nothing outside the worktree allowed
 * to change (docs/agents.md §1.6: snapshot before, compare after); its report becomes an artifact.
 */
async function implementerPhase(x: StepRun, u: PlanStep, extra: { review_issues?: ReviewIssue[] } = {}): Promise<void> {
  const { rc, tree, tr } = x;
  const W = tree.path;
  x.phase('implementer', u.anchor);
  const { runStepImplementer, coderReport } = await import('./agents.js');
  const { stepBrief } = await import('./brief.js');
  const { groupRecord } = await import('./orphans.js');
  // The snapshot (git processes) and the brief's state reads are independent: side by side.
  const { OutsideSpan } = await import('./outside-check.js');
  const guard = await import('./plan-guard.js');
  const [state, span, contract] = await Promise.all([
    timed(tr, 'brief', () => briefState(x, u)),
    timed(tr, 'outside', () => OutsideSpan.open(rc, tree)),
    guard.snapshotContract(W, rc.prep.planPath),
  ]);
  const brief = stepBrief(rc.prep.plan, u.anchor, {
    plan_path: rc.prep.planPath,
    attempt: x.attempt,
    ...state,
    ...extra,
  });
  const t = Date.now();
  const logPath = logPathOf(rc, u.anchor, x.attempt);
  // The watchdog (docs/run.md §7.3): its signal is the child's, so a stall kills it like a timeout.
  const watch = (await import('./watchdog.js')).watchImplementer(x, {
    logMax: rc.flow.config.run.log_max_mb * 2 ** 20,
    logPath,
    anchor: u.anchor,
    top: topLevelOf(rc.prep.plan, u.anchor) ?? u.anchor,
  });
  const out = await runStepImplementer(rc.opts, {
    cwd: W,
    baseEnv: rc.ops.env,
    vars: {
      worktree: W,
      repo_root: rc.flow.repo.mainRoot,
      // The run's own database (TUGCODE_STATE_DB resolved against the main root), never a path of its own.
      state_db: stateDbPath(rc.flow.repo.mainRoot, rc.ops.env),
    },
    brief,
    briefPath: logPathOf(rc, u.anchor, x.attempt, 'brief').replace(/\.log$/, '.json'),
    timeoutMs: x.left(),
    logPath,
    signal: watch.signal,
    pidRecord: groupRecord(rc.flow.repo.mainRoot, rc.prep.slug, tree),
    agentAllow: rc.flow.config.run.agent_allow,
    thread: gitThreadOf(rc.ops.env),
  }).finally(async () => {
    await watch.stop();
    tr?.('implementer', t);
  });
  // What the run used counts whatever became of it (docs/run.md §7.1), under the claim still held: a run
  // stopped by a signal too (the run releases its claims only after), a lost claim's is UsageNotRecorded.
  await (await import('./ledger.js')).recordUsage(x, 'implementer', u.anchor, out);
  if (x.beat.signal.aborted) throw new Aborted();
  const stalled = watch.stalled();
  const overflowed = watch.overflowed();
  if (out.aborted && stalled === null && overflowed === null) throw new Aborted();
  // The running plan and config changed in the worktree: the attempt fails, its reset drops the edit (plan-guard.ts).
  const edited = guard.contractChanges(contract, await guard.snapshotContract(W, rc.prep.planPath));
  const caughtUp =
    out.ok && stalled === null && !extra.review_issues && !edited.length ? earlyCatchUp(x, u) : undefined;
  const after = await span.snapshot().finally(() => caughtUp);
  x.caughtUp = caughtUp && (await caughtUp);
  await span.close({ step: u.anchor, attempt: x.attempt, by: 'the implementer' }, out, after);
  if (edited.length)
    throw guard.planEditFailure({ step: u.anchor, attempt: x.attempt, by: 'the implementer', changed: edited, out });
  if (stalled !== null)
    throw new StepFailure(
      'Stalled',
      `${u.anchor}: the implementer showed no output, no item change and no file change for ${stalled} s (stall_seconds ${rc.opts.stallMs / 1000})`,
      out,
    );
  if (overflowed !== null) {
    await watch.cutOverflow();
    throw new StepFailure(
      'ImplementerFailed',
      `${u.anchor}: the implementer wrote ${Math.floor(overflowed / 2 ** 20)} MiB to its log, more than log_max_mb (${rc.flow.config.run.log_max_mb} MiB), and ${out.aborted ? 'was ended' : 'exited before the next check'}; the log keeps its first ${rc.flow.config.run.log_max_mb} MiB`,
      out,
    );
  }
  if (out.timed_out) throw new StepFailure('StepTimeout', `${u.anchor}: ${pastTimeout(rc, 'implementer')}`, out);
  if (!out.ok)
    throw new StepFailure(
      'ImplementerFailed',
      `${u.anchor}: the implementer ${endedHow(out)}${tail(out.last_line)}`,
      out,
    );
  const report = coderReport(out);
  if (report) await rc.store.artifact(x.sc, { ...ownerOf(x, u), kind: 'coder_report', ...report });
}

/**
 * commitPhase's catch-up (worktrees.ts catchUpTree), started as soon as the implementer is done so that it
 * runs beside the outside snapshot: only for a unit whose commit comes next with nothing touching the tree
 * in between (it has a commit and no command checkpoints; not a review round, whose commit is made again
 * over a reset; docs/run.md §1 item 4.5), and only in a tree that is still the worker's own and holds no
 * `index.lock` (commitPhase deals with those). Resolves, never rejects, with the catch-up's outcome.
 */
function earlyCatchUp(x: StepRun, u: PlanStep): Promise<() => boolean> | undefined {
  const { rc, tree } = x;
  if (rc.remote || u.no_commit) return undefined;
  const checkpoints = rc.opts.checkpoints && u.items.some((i) => i.kind === 'checkpoint' && checkpointCommand(i.text));
  if (checkpoints || treeFault(tree.path) || lockFault(tree.path, '')) return undefined;
  const t = Date.now();
  return settled((async () => catchUpTree(rc.g, tree, await integrationTip(rc)))()).finally(() =>
    x.tr?.('commit.catchup', t),
  );
}

/**
 * The unit's commit on the worker branch: first onto the integration tip when another worker integrated
 * meanwhile, then `commitStepOnly` with the message made ahead. git's refusals become the step's failures.
 */
async function commitPhase(
  x: StepRun,
  u: PlanStep,
  message: string,
  prepared: Promise<PreparedMessage | undefined>,
): Promise<void> {
  const { rc, tree, tr } = x;
  const W = tree.path;
  x.phase('commit', u.anchor);
  guardTree(W);
  for (const lock of clearStaleLocks(W, tree.branch)) staleLockRemoved(rc, lock);
  // Another worker integrated meanwhile: the work moves onto the new tip first, when git can do that
  // without a merge (worktrees.ts). `--remote` keeps rebasing at integration (its tip moves by fetch).
  const caughtUp = x.caughtUp;
  x.caughtUp = undefined;
  if (!rc.remote && caughtUp) caughtUp();
  else if (!rc.remote) {
    await timed(tr, 'commit.catchup', async () => catchUpTree(rc.g, tree, await integrationTip(rc)));
  }
  const { commitStepOnly } = await import('../gitflow/commit.js');
  const tc = Date.now();
  try {
    await commitStepOnly(rc.flow, {
      worktree: W,
      plan: rc.prep.planPath,
      step: u.anchor,
      message,
      attempt: x.attempt,
      branch: tree.branch,
      stepTitle: u.title,
      prepared: await prepared,
      trace: tr,
      noVerify: rc.flow.config.run.no_verify,
      trailersUnconfigured: rc.trailersUnconfigured,
      // Its hooks count against the step's time and end with their process group (bounded.ts).
      git: boundedGitRunner(rc.ops.env, { timeoutMs: x.left, signal: x.beat.signal }),
    });
    tr?.('commit', tc);
  } catch (e) {
    if (x.beat.signal.aborted) throw new Aborted();
    const f = commitFailure(e, u, W);
    // The reason keeps one line of a hook's refusal: its whole output goes to the attempt's log (docs/run.md §1.3).
    if (f instanceof StepFailure && f.code === 'HookFailed' && e instanceof TugError)
      appendHookOutput(rc, logPathOf(rc, u.anchor, x.attempt), String(e.details.stderr ?? ''));
    throw f;
  }
}

/**
 * Appends a refusing hook's output to the attempt's log after the implementer's, bounded as that log is
 * (`[run] log_max_mb`: its end kept when it would pass the cap). Best effort: the failure stands without it.
 */
function appendHookOutput(rc: RunCtx, logPath: string, output: string): void {
  try {
    const max = rc.flow.config.run.log_max_mb * 2 ** 20;
    const size = existsSync(logPath) ? statSync(logPath).size : 0;
    const head = `\n--- HookFailed: the git hook's output (tugcode run, the driver's commit) ---\n`;
    let body = Buffer.from(output.endsWith('\n') || output === '' ? output : output + '\n');
    const room = Math.max(0, max - size - head.length - 64);
    let cut = '';
    if (body.length > room) {
      cut = `[… ${body.length - room} bytes cut: the log reached log_max_mb]\n`;
      body = body.subarray(body.length - room);
    }
    appendFileSync(logPath, Buffer.concat([Buffer.from(head + cut), body]));
  } catch {
    // an unwritable log directory: the attempt's reason still says the hook refused
  }
}

/** A failed commit as the step's failure: a timeout, a locked tree, a hook's refusal, or git's own error. */
function commitFailure(e: unknown, u: PlanStep, W: string): unknown {
  if (!(e instanceof TugError && (e.code === 'GitError' || e.code === 'CommitFailed'))) return e;
  // A full disk is no fault of the attempt: it stops the run (DiskFull), spending no attempt.
  const full = toTugError(e);
  if (full.code === 'DiskFull') return full;
  // CommitFailed wraps the GitError of the bounded runner: a timeout is the step's, not the commit's.
  const git = e.code === 'CommitFailed' && e.cause instanceof TugError ? e.cause : e;
  const stderr = String(git.details.stderr ?? '');
  if (git.details.timed_out === true)
    return new StepFailure('StepTimeout', `${u.anchor}: ${String(git.details.reason)}`);
  const locked = lockFault(W, stderr);
  if (locked) return new StepFailure('WorktreeBroken', `${u.anchor}: ${locked}`);
  // A hook's refusal is HookFailed; signing, sparse-checkout, identity are named as such.
  if (e.code === 'CommitFailed')
    return new StepFailure(e.details.cause === 'hook' ? 'HookFailed' : 'CommitFailed', `${u.anchor}: ${e.message}`);
  return new StepFailure('CommitFailed', `${u.anchor}: git commit failed: ${(stderr || e.message).trim()}`);
}

/** `: <last line>` of a child's output, or nothing when it printed nothing. */
function tail(line: string): string {
  return line.trim() === '' ? ' (no output)' : `: ${line}`;
}

/** The unit's commit message with its trailers, made ahead; undefined when that failed (commitStepOnly reports it). */
async function prepareMessage(
  rc: RunCtx,
  W: string,
  step: string,
  attempt: number,
  message: string,
): Promise<PreparedMessage | undefined> {
  try {
    const { prepareMessage: prepare } = await import('../gitflow/commit.js');
    const { planPath } = rc.prep;
    const trailersUnconfigured = rc.trailersUnconfigured; // no trailer.* config: no git (trailer-write.ts)
    return await prepare(rc.flow, { worktree: W, planPath, step, message, attempt, trailersUnconfigured });
  } catch {
    return undefined;
  }
}

/**
 * Item statuses of the unit's subtree, the step's earlier failed attempts and a human's notes, for the brief
 * (docs/run.md §2, §6.3).
 */
export async function briefState(x: StepRun, u: PlanStep) {
  const { rc } = x;
  const plan = rc.prep.planPath;
  const { itemKey } = await import('./brief.js');
  const show = await rc.store.show(x.sc, { plan, items: 'all', step: u.anchor });
  const statuses = new Map<string, 'open' | 'in_progress' | 'completed' | 'deferred'>();
  for (const s of show.plans[0]?.steps ?? [])
    for (const i of s.items) statuses.set(itemKey(s.anchor, i.kind, i.ordinal), i.status as 'open');
  const top = topLevelOf(rc.prep.plan, u.anchor) ?? u.anchor;
  const previous_failures = await rc.store.previousFailures(x.sc, { plan, step: top });
  return { statuses, previous_failures, human_notes: x.humanNotes };
}

/**
 * After a resolved conflict (docs/run.md §1.9): every unit's command checkpoints again, on the merged tree
 * (their items are completed already: nothing is recorded unless one fails).
 */
export async function checkpointsAgain(x: StepRun, units: PlanStep[]): Promise<void> {
  if (!x.rc.opts.checkpoints) return;
  for (const u of units) await checkpointPhase(x, u, { again: true });
}

/** The unit's command checkpoints, each run in the worktree and marked completed (docs/run.md §3). */
async function checkpointPhase(x: StepRun, u: PlanStep, o: { again?: boolean } = {}): Promise<void> {
  const { rc } = x;
  const W = x.tree.path;
  const { checkpointCommand, runCheckpoint } = await import('./checkpoints.js');
  const commands = u.items.flatMap((i) => {
    const cmd = i.kind === 'checkpoint' ? checkpointCommand(i.text) : null;
    return cmd ? [{ ordinal: i.ordinal, cmd }] : [];
  });
  if (commands.length === 0) return;
  x.phase('checkpoints', u.anchor);
  const show = await rc.store.show(x.sc, { plan: rc.prep.planPath, items: 'all', step: u.anchor });
  const deferred = new Set(
    (show.plans[0]?.steps ?? [])
      .filter((s) => s.anchor === u.anchor)
      .flatMap((s) =>
        (s.items ?? []).filter((i) => i.kind === 'checkpoint' && i.status === 'deferred').map((i) => i.ordinal),
      ),
  );
  // A checkpoint runs the step's code, which the agent may have rewritten, with the driver's rights: each
  // run lies inside the outside-write check as the implementer's does (docs/agents.md §1.6). Between two
  // runs only the state database changes, so one's closing snapshot opens the next.
  const { OutsideSpan } = await import('./outside-check.js');
  let from: import('./outside-check.js').OutsideSnapshot | undefined;
  for (const c of commands) {
    if (deferred.has(c.ordinal)) continue;
    const span = await OutsideSpan.open(rc, x.tree, { from });
    const logPath = logPathOf(rc, u.anchor, x.attempt, `checkpoint${c.ordinal}${o.again ? '-resolved' : ''}-attempt`);
    const out = await runCheckpoint({
      command: c.cmd,
      cwd: W,
      env: rc.ops.env,
      timeoutMs: x.left(),
      logPath,
      signal: x.beat.signal,
    });
    if (out.aborted || x.beat.signal.aborted) throw new Aborted();
    const by = `the checkpoint \`${c.cmd}\``;
    const who = { step: u.anchor, attempt: x.attempt, by, logs: [logPath], command: 'checkpoint' as const };
    from = await span.close({ ...who, artifact: 'verification_report' }, out);
    if (!out.ok)
      throw new StepFailure(
        out.timed_out ? 'StepTimeout' : 'CheckpointFailed',
        `${u.anchor}: checkpoint \`${c.cmd}\` ${out.timed_out ? 'timed out' : endedHow(out)}${tail(out.last_line)}`,
        out,
        'verification_report',
      );
    if (o.again) continue;
    await rc.store.update(x.sc, {
      ...ownerOf(x, u),
      items: [{ kind: 'checkpoint', ordinal: c.ordinal, status: 'completed' }],
      bulk: [],
      batch: false,
    });
  }
}

/** A StepTimeout's reason: who ran past it, and the limit (`--step-timeout`, `[run] step_timeout_seconds`). */
export function pastTimeout(rc: StepRun['rc'], who: 'implementer' | 'reviewer' | 'resolver' | 'refactors'): string {
  return `the ${who} ran past the step timeout (${rc.opts.stepTimeoutMs / 1000} s)`;
}
