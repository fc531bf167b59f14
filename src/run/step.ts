/**
 * One claimed step, executed in the worker's worktree (docs/run.md §1 item 4.4–4.5, §2, §3): its substeps
 * first (topological order inside the subtree, ties by step_index), then the step; for each, the declared
 * refactors, the implementer, the command checkpoints, `--complete-remaining`, and a commit on the worker
 * branch. Any failure is a StepFailure with its reason code; a lost claim or a stop aborts.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { kernelEnv } from '../config/kernel-env.js';
import { TugError } from '../contract/errors.js';
import type { PlanStep } from '../plan/types.js';
import { stateDbPath } from '../state/context.js';
import type { Beat } from './heartbeat.js';
import type { RunCtx } from './context.js';
import { stateCallIn, timed, type TraceFn, staleLockRemoved } from './context.js';
import { Aborted, StepFailure } from './failure.js';
import { boundedGitRunner } from '../git/bounded.js';
import { catchUpTree, clearStaleIndexLock, guardTree, lockFault, type WorkerTree } from './worktrees.js';
import { endedHow } from './child.js';
import type { PreparedMessage } from '../gitflow/commit.js';

export { Aborted, StepFailure } from './failure.js';

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
  const dir = join(rc.flow.repo.mainRoot, '.tugtool', 'logs', rc.prep.slug);
  mkdirSync(dir, { recursive: true });
  return join(dir, `${anchor}-${what}${attempt}.log`);
}

function throwIfAborted(beat: Beat): void {
  if (beat.signal.aborted) throw new Aborted();
}

/** Execute `top` (claimed at `attempt`) and its substeps; returns the units in commit order. */
export async function executeStep(
  rc: RunCtx,
  tree: WorkerTree,
  top: PlanStep,
  attempt: number,
  beat: Beat,
  phase: (p: 'refactors' | 'implementer' | 'checkpoints' | 'commit') => void,
  tr?: TraceFn,
): Promise<PlanStep[]> {
  const W = tree.path;
  const sc = stateCallIn(rc, W);
  const plan = rc.prep.planPath;
  const units = executionOrder(rc.prep.plan.steps, top);
  const deadline = Date.now() + rc.opts.stepTimeoutMs;
  const left = () => Math.max(1000, deadline - Date.now());
  for (const u of units) {
    throwIfAborted(beat);
    if (u !== top) await rc.store.run(sc, 'start', { plan, step: u.anchor, worktree: W, attempt });
    if (u.refactors.length > 0) {
      phase('refactors');
      const { runStep } = await import('../refactor/run-step.js');
      const r = await rc.store.withContext(sc, 'write', (ctx) =>
        runStep(
          ctx,
          { plan, step: u.anchor, worktree: rc.store.owner(W), attempt },
          {
            heartbeat_seconds: Math.max(1, Math.round(rc.opts.heartbeatMs / 1000)),
            max_concurrent_sessions: rc.flow.config.kernel.max_concurrent_sessions,
            kernel: { env: kernelEnv(rc.ops.env) },
          },
        ),
      );
      if (r.exit_code !== 0)
        throw new StepFailure('RefactorFailed', `${u.anchor}: ${r.error?.code ?? 'error'}: ${r.error?.message ?? ''}`);
    }
    throwIfAborted(beat);
    const message = u.commit_message ?? `chore(${rc.prep.slug}): ${u.title}`;
    // The message with its trailers is made while the implementer runs (commitStep checks it still fits).
    const prepared = u.no_commit ? undefined : prepareMessage(rc, W, u.anchor, attempt, message);
    if (rc.opts.implementer || rc.opts.agent) {
      phase('implementer');
      const { runStepImplementer, coderReport } = await import('./agents.js');
      const { stepBrief } = await import('./brief.js');
      const { forgetGroup, pgidFile, recordGroup } = await import('./orphans.js');
      const groupFile = pgidFile(rc.flow.repo.mainRoot, rc.prep.slug, tree.worker);
      // Nothing outside the worktree may change (docs/agents.md §1.6): snapshot before, compare after.
      // The snapshot (git processes) and the brief's state reads are independent: side by side.
      const outside = await import('./outside-check.js');
      const scope = outside.runScope(rc, tree);
      const [state, before] = await Promise.all([
        timed(tr, 'brief', () => briefState(rc, W, u)),
        timed(tr, 'outside', () => outside.snapshotOutside(rc.g, scope)),
      ]);
      const brief = stepBrief(rc.prep.plan, u.anchor, { plan_path: plan, attempt, ...state });
      const t = Date.now();
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
        briefPath: logPathOf(rc, u.anchor, attempt, 'brief').replace(/\.log$/, '.json'),
        timeoutMs: left(),
        logPath: logPathOf(rc, u.anchor, attempt),
        signal: beat.signal,
        onSpawn: (pid) => recordGroup(groupFile, pid, W),
        agentAllow: rc.flow.config.run.agent_allow,
      }).finally(() => {
        forgetGroup(groupFile);
        tr?.('implementer', t);
      });
      if (out.aborted || beat.signal.aborted) throw new Aborted();
      const changed = outside.outsideChanges(before, await outside.snapshotOutside(rc.g, scope));
      if (changed.length) {
        outside.noteOutsideWrite(rc, u.anchor, attempt, changed);
        throw new StepFailure('OutsideWrite', outside.outsideReason(u.anchor, changed), out);
      }
      if (out.timed_out)
        throw new StepFailure('StepTimeout', `${u.anchor}: the implementer ran past the step timeout`, out);
      if (!out.ok)
        throw new StepFailure(
          'ImplementerFailed',
          `${u.anchor}: the implementer ${endedHow(out)}${tail(out.last_line)}`,
          out,
        );
      const report = coderReport(out);
      if (report)
        await rc.store.run(sc, 'artifact', {
          plan,
          step: u.anchor,
          worktree: W,
          attempt,
          kind: 'coder_report',
          ...report,
        });
    }
    throwIfAborted(beat);
    guardTree(W); // the implementer may have removed the tree or its `.git` file
    if (rc.opts.checkpoints) await runCheckpoints(rc, W, u, attempt, beat, left, phase);
    await timed(tr, 'update', () =>
      rc.store.run(sc, 'update', {
        plan,
        step: u.anchor,
        worktree: W,
        attempt,
        items: [],
        bulk: [],
        batch: false,
        complete_remaining: true,
      }),
    );
    throwIfAborted(beat);
    if (!prepared) continue; // `**Commit:** N/A`
    phase('commit');
    guardTree(W);
    const staleLock = clearStaleIndexLock(W);
    if (staleLock) staleLockRemoved(rc, staleLock);
    // Another worker integrated meanwhile: the work moves onto the new tip first, when git can do that
    // without a merge (worktrees.ts). `--remote` keeps rebasing at integration (its tip moves by fetch).
    if (!rc.remote) {
      const { integrationTip } = await import('./refs.js');
      await timed(tr, 'commit.catchup', async () => catchUpTree(rc.g, tree, await integrationTip(rc)));
    }
    const { commitStep } = await import('../gitflow/commit.js');
    const tc = Date.now();
    try {
      await commitStep(rc.flow, {
        worktree: W,
        plan,
        step: u.anchor,
        message,
        attempt,
        commitOnly: true,
        allowEmpty: true,
        branch: tree.branch,
        stepTitle: u.title,
        prepared: await prepared,
        autoMaintenance: false, // once, after the run (driver.ts)
        listStaged: false, // the run does not report the staged files
        trace: tr,
        noVerify: rc.flow.config.run.no_verify,
        // Its hooks count against the step's time and end with their process group (bounded.ts).
        git: boundedGitRunner(rc.ops.env, { timeoutMs: left, signal: beat.signal }),
      });
      tr?.('commit', tc);
    } catch (e) {
      if (beat.signal.aborted) throw new Aborted();
      if (e instanceof TugError && (e.code === 'GitError' || e.code === 'CommitFailed')) {
        // CommitFailed wraps the GitError of the bounded runner: a timeout is the step's, not the commit's.
        const git = e.code === 'CommitFailed' && e.cause instanceof TugError ? e.cause : e;
        const stderr = String(git.details.stderr ?? '');
        if (git.details.timed_out === true)
          throw new StepFailure('StepTimeout', `${u.anchor}: ${String(git.details.reason)}`);
        const locked = lockFault(W, stderr);
        if (locked) throw new StepFailure('WorktreeBroken', `${u.anchor}: ${locked}`);
        // A hook's refusal is HookFailed; signing, sparse-checkout, identity are named as such.
        if (e.code === 'CommitFailed')
          throw new StepFailure(
            e.details.cause === 'hook' ? 'HookFailed' : 'CommitFailed',
            `${u.anchor}: ${e.message}`,
          );
        throw new StepFailure('CommitFailed', `${u.anchor}: git commit failed: ${(stderr || e.message).trim()}`);
      }
      throw e;
    }
  }
  // Nothing of the implementer's runs any more: the integration that follows acts on this tree only.
  guardTree(W);
  return units;
}

/** `: <last line>` of a child's output, or nothing when it printed nothing. */
function tail(line: string): string {
  return line.trim() === '' ? ' (no output)' : `: ${line}`;
}

/** The unit's commit message with its trailers, made ahead; undefined when that failed (commitStep reports it). */
async function prepareMessage(
  rc: RunCtx,
  W: string,
  step: string,
  attempt: number,
  message: string,
): Promise<PreparedMessage | undefined> {
  try {
    const { prepareMessage: prepare } = await import('../gitflow/commit.js');
    return await prepare(rc.flow, { worktree: W, planPath: rc.prep.planPath, step, message, attempt });
  } catch {
    return undefined;
  }
}

/** Item statuses of the unit's subtree and the step's earlier failed attempts, for the brief (docs/run.md §2). */
async function briefState(rc: RunCtx, W: string, u: PlanStep) {
  const sc = stateCallIn(rc, W);
  const { itemKey } = await import('./brief.js');
  const show = await rc.store.run(sc, 'show', { plan: rc.prep.planPath, items: 'all', step: u.anchor });
  const statuses = new Map<string, 'open' | 'in_progress' | 'completed' | 'deferred'>();
  for (const s of show.plans[0]?.steps ?? [])
    for (const i of s.items) statuses.set(itemKey(s.anchor, i.kind, i.ordinal), i.status as 'open');
  const top = u.parent_anchor ? topOf(rc.prep.plan.steps, u) : u.anchor;
  const log = await rc.store.run(sc, 'log', { plan: rc.prep.planPath, step: top, limit: 1000 });
  const previous_failures = log.events
    .filter((e) => e.details.failed_attempt === true && typeof e.details.reason === 'string')
    .map((e) => ({ attempt: e.attempt ?? 0, reason: e.details.reason as string }));
  return { statuses, previous_failures };
}

function topOf(steps: PlanStep[], u: PlanStep): string {
  let s = u;
  for (let p = steps.find((x) => x.anchor === s.parent_anchor); p; p = steps.find((x) => x.anchor === s.parent_anchor))
    s = p;
  return s.anchor;
}

async function runCheckpoints(
  rc: RunCtx,
  W: string,
  u: PlanStep,
  attempt: number,
  beat: Beat,
  left: () => number,
  phase: (p: 'checkpoints') => void,
): Promise<void> {
  const { checkpointCommand, runCheckpoint } = await import('./checkpoints.js');
  const commands = u.items.flatMap((i) => {
    const cmd = i.kind === 'checkpoint' ? checkpointCommand(i.text) : null;
    return cmd ? [{ ordinal: i.ordinal, cmd }] : [];
  });
  if (commands.length === 0) return;
  phase('checkpoints');
  const sc = stateCallIn(rc, W);
  const show = await rc.store.run(sc, 'show', { plan: rc.prep.planPath, items: 'all', step: u.anchor });
  const deferred = new Set(
    (show.plans[0]?.steps ?? [])
      .filter((s) => s.anchor === u.anchor)
      .flatMap((s) =>
        (s.items ?? []).filter((i) => i.kind === 'checkpoint' && i.status === 'deferred').map((i) => i.ordinal),
      ),
  );
  for (const c of commands) {
    if (deferred.has(c.ordinal)) continue;
    const out = await runCheckpoint({
      command: c.cmd,
      cwd: W,
      env: rc.ops.env,
      timeoutMs: left(),
      logPath: logPathOf(rc, u.anchor, attempt, `checkpoint${c.ordinal}-attempt`),
      signal: beat.signal,
    });
    if (out.aborted || beat.signal.aborted) throw new Aborted();
    if (!out.ok)
      throw new StepFailure(
        out.timed_out ? 'StepTimeout' : 'CheckpointFailed',
        `${u.anchor}: checkpoint \`${c.cmd}\` ${out.timed_out ? 'timed out' : endedHow(out)}${tail(out.last_line)}`,
        out,
        'verification_report',
      );
    await rc.store.run(sc, 'update', {
      plan: rc.prep.planPath,
      step: u.anchor,
      worktree: W,
      attempt,
      items: [{ kind: 'checkpoint', ordinal: c.ordinal, status: 'completed' }],
      bulk: [],
      batch: false,
    });
  }
}
