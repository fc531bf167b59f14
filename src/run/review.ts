/**
 * The review gate (docs/run.md §6): after a step's commit(s) on the worker branch and before integration,
 * the reviewer reads the step's brief and its diff against the integration tip and answers APPROVE, REVISE
 * or ESCALATE. REVISE sends the implementer back in the same attempt and claim (step.ts `reviseStep`), at
 * most `review_rounds` times; ESCALATE keeps the worker branch's commit under `refs/tugplan/review/…` and
 * hands the step to a human (`needs_human`). The reviewer is untrusted like the implementer: nothing outside
 * the worktree may change (OutsideWrite), and nothing inside it either (a reviewer is read-only).
 */
import { TugError } from '../contract/errors.js';
import type { PlanStep } from '../plan/types.js';
import { stateDbPath } from '../state/context.js';
import { timed, type RunCtx } from './context.js';
import { endedHow } from './child.js';
import { integrationTip } from './refs.js';
import { Aborted, StepFailure } from './failure.js';
import { briefState, logPathOf, pastTimeout, reviseStep, type StepRun } from './step.js';
import type { ReviewBrief, ReviewIssue, ReviewVerdict } from './types.js';

/** The most of the step's diff a reviewer is given (docs/run.md §6.1). */
export const DIFF_CAP_BYTES = 256 * 1024;

/** Whether the run has a review gate: a reviewer command or agent is configured. */
export function reviewing(rc: RunCtx): boolean {
  return rc.opts.reviewer !== null || rc.opts.reviewAgent !== null;
}

/**
 * The gate for the claimed step `top` (its units committed): returns `approved` (integrate it; `revised`
 * when a REVISE round remade its commit first) or `escalated` (the step waits for a human; the claim has
 * ended). A REVISE past `review_rounds` throws ReviewRejected; a reviewer that fails or answers no verdict
 * throws ReviewerFailed.
 *
 * The gate runs again after a resolved conflict (docs/run.md §1.9): the attempt's rounds continue there
 * (round 2 after an APPROVE in round 1, its earlier verdicts in `previous_verdicts`, its logs and artifacts
 * never overwritten), and every REVISE of the attempt counts toward `review_rounds`.
 */
export async function reviewGate(x: StepRun, top: PlanStep): Promise<'approved' | 'revised' | 'escalated'> {
  const { rc } = x;
  const verdicts = (x.verdicts ??= []);
  let revised = false;
  for (;;) {
    const round = verdicts.length + 1;
    x.phase('review');
    const v = await timed(x.tr, 'review.round', () => reviewRound(x, top, round, verdicts));
    verdicts.push({ ...v, round });
    rc.tally.reviews.set(top.anchor, { rounds: round, verdict: v.verdict });
    rc.emit({
      type: 'review',
      worker: x.tree.worker,
      step_anchor: top.anchor,
      round,
      verdict: v.verdict,
      summary: v.summary,
    });
    if (v.verdict === 'APPROVE') return revised ? 'revised' : 'approved';
    if (v.verdict === 'ESCALATE') {
      await escalate(x, top, v);
      return 'escalated';
    }
    const revises = verdicts.filter((p) => p.verdict === 'REVISE').length;
    if (revises >= rc.opts.reviewRounds)
      throw new StepFailure(
        'ReviewRejected',
        `${top.anchor}: the reviewer asked for changes ${revises} time(s), the most review_rounds allows: ${v.summary}`,
      );
    if (!rc.opts.implementer && !rc.opts.agent)
      throw new StepFailure('ReviewRejected', `${top.anchor}: REVISE, and the run has no implementer: ${v.summary}`);
    // A spent budget sends no implementer back (docs/run.md §7.2): a running step finishes without spending
    // on, its work kept for a person to decide, as an escalation.
    if (rc.tally.ledger.exhausted) {
      await keepForHuman(x, top, `the budget is spent, so no revision round: ${v.summary}`);
      return 'escalated';
    }
    await reviseStep(x, top, issuesOf(v));
    revised = true;
  }
}

/** The issues a REVISE sends back; its summary when it lists none. */
function issuesOf(v: ReviewVerdict): ReviewIssue[] {
  return v.issues.length ? v.issues : [{ severity: 'major', message: v.summary }];
}

/** HEAD, index and working tree of the worker's tree (runtime files aside): what a reviewer must not change. */
async function treeSignature(x: StepRun): Promise<{ head: string; status: string[] }> {
  const { rc } = x;
  const [{ headTip }, { ALL_BUT_RUNTIME }] = await Promise.all([
    import('../git/ref-files.js'),
    import('../git/runtime-files.js'),
  ]);
  const W = x.tree.path;
  const [head, st] = await Promise.all([
    headTip(rc.g, W),
    rc.g.run(['status', '--porcelain=v1', '-z', '--untracked-files=all', '--', ...ALL_BUT_RUNTIME], W),
  ]);
  return { head: head ?? '', status: st.split('\0').filter(Boolean).sort() };
}

/** One reviewer run for `top`, checked: its verdict, recorded as a `reviewer_verdict` artifact. */
async function reviewRound(
  x: StepRun,
  top: PlanStep,
  round: number,
  previous: (ReviewVerdict & { round: number })[],
): Promise<ReviewVerdict> {
  const { rc, tree } = x;
  const W = tree.path;
  const [{ gitCapped }, { stepBrief }, outside, { runReviewer, parseVerdict }, orphans] = await Promise.all([
    import('../git/capped.js'),
    import('./brief.js'),
    import('./outside-check.js'),
    import('./review-run.js'),
    import('./orphans.js'),
  ]);
  const [base, sig] = await Promise.all([integrationTip(rc), treeSignature(x)]);
  // The diff (the step's commits since they left the tip), the brief's state and the outside snapshot are
  // independent: side by side.
  const [diff, state, span] = await Promise.all([
    gitCapped(
      rc.ops.env,
      ['diff', '--no-color', '--no-ext-diff', '--no-textconv', `${base}...${sig.head}`, '--'],
      W,
      DIFF_CAP_BYTES,
    ),
    briefState(x, top),
    outside.OutsideSpan.open(rc, tree),
  ]);
  const brief: ReviewBrief = {
    ...stepBrief(rc.prep.plan, top.anchor, { plan_path: rc.prep.planPath, attempt: x.attempt, ...state }),
    review: {
      round,
      base,
      head: sig.head,
      diff: diff.text,
      diff_truncated: diff.truncated,
      previous_verdicts: previous,
    },
  };
  const what = `review${round}-attempt`;
  const log = logPathOf(rc, top.anchor, x.attempt, what);
  // A failure of this run names the reviewer's own files (docs/run.md §1.3): its stdout (where its answer
  // is, a command's) and its log, never the implementer's.
  const files = [log.replace(/\.log$/, '.out'), log];
  const out = await runReviewer({
    which: { reviewer: rc.opts.reviewer, reviewAgent: rc.opts.reviewAgent },
    brief,
    cwd: W,
    baseEnv: rc.ops.env,
    vars: { worktree: W, repo_root: rc.flow.repo.mainRoot, state_db: stateDbPath(rc.flow.repo.mainRoot, rc.ops.env) },
    briefPath: log.replace(/\.log$/, '.json'),
    logPath: log,
    stdoutPath: files[0]!,
    timeoutMs: x.left(),
    signal: x.beat.signal,
    pidRecord: orphans.groupRecord(rc.flow.repo.mainRoot, rc.prep.slug, tree),
    agentAllow: rc.flow.config.run.agent_allow,
    rounds: rc.opts.reviewRounds,
  });
  // What the reviewer used counts whatever its verdict (docs/run.md §7.1), under the claim still held, a
  // stopped run's too.
  await (await import('./ledger.js')).recordUsage(x, 'reviewer', top.anchor, out);
  if (out.aborted || x.beat.signal.aborted) throw new Aborted();
  const [now, after] = await Promise.all([span.snapshot(), treeSignature(x)]);
  await span.close({ step: top.anchor, attempt: x.attempt, by: 'the reviewer', logs: files }, out, now);
  // A reviewer is read-only: whatever it changed in the worktree would be integrated unreviewed.
  if (after.head !== sig.head || after.status.join('\0') !== sig.status.join('\0')) {
    const paths = after.status.filter((p) => !sig.status.includes(p)).map((p) => p.slice(3));
    const moved = after.head !== sig.head ? [`HEAD (${sig.head.slice(0, 12)} → ${after.head.slice(0, 12)})`] : [];
    const list = [...moved, ...paths];
    throw new StepFailure(
      'ReviewerFailed',
      `${top.anchor}: the reviewer changed the worktree (a reviewer is read-only): ${list.slice(0, 20).join(', ') || 'its files'}`,
      out,
      'verification_report',
      files,
    );
  }
  if (out.timed_out)
    throw new StepFailure('StepTimeout', `${top.anchor}: ${pastTimeout(x.rc, 'reviewer')}`, out, 'coder_report', files);
  if (!out.ok)
    throw new StepFailure(
      'ReviewerFailed',
      `${top.anchor}: the reviewer ${endedHow(out)}${out.last_line.trim() ? `: ${out.last_line}` : ' (no output)'}`,
      out,
      'verification_report',
      files,
    );
  const parsed = await parseVerdict(out.text, out.text_cut);
  if (!parsed.ok)
    throw new StepFailure(
      'ReviewerFailed',
      `${top.anchor}: the reviewer answered no verdict: ${parsed.why}`,
      out,
      'verification_report',
      files,
    );
  const v = parsed.verdict;
  await rc.store.artifact(x.sc, {
    plan: rc.prep.planPath,
    step: top.anchor,
    worktree: W,
    attempt: x.attempt,
    kind: 'reviewer_verdict',
    summary: `round ${round}: ${v.verdict}: ${v.summary}`,
    content: JSON.stringify(v, null, 2),
  });
  return v;
}

/**
 * ESCALATE (docs/run.md §6.3): the step goes to a human with its commits kept, the reason saying it is the
 * reviewer's (the summary and the live view show it beside the driver's own reasons, such as the budget's).
 */
async function escalate(x: StepRun, top: PlanStep, v: ReviewVerdict): Promise<void> {
  const summary = v.summary.trim();
  await keepForHuman(x, top, `the reviewer asked for a human${summary ? `: ${summary}` : ''}`);
}

/**
 * The worker branch's head kept under `refs/tugplan/review/<slug>/<step>`, then the step `needs_human` with
 * `reason` (the claim ends; its dependents wait; docs/run.md §6.3): a reviewer's ESCALATE, or the driver's
 * own when a spent budget lets no agent go on (§7.2).
 */
export async function keepForHuman(x: StepRun, top: PlanStep, reason: string): Promise<void> {
  const { rc } = x;
  const [{ headTip }, { reviewRefName }] = await Promise.all([
    import('../git/ref-files.js'),
    import('../contract/layout.js'),
  ]);
  const head = await headTip(rc.g, x.tree.path);
  if (!head) throw new StepFailure('WorktreeBroken', `${top.anchor}: the worktree has no HEAD to keep for a human`);
  const ref = reviewRefName(rc.prep.slug, top.anchor);
  // The ref first: a crash between the two leaves a ref nobody needs, never a needs_human step without its commit.
  await rc.g.run(['update-ref', ref, head], rc.flow.repo.mainRoot);
  await rc.store.escalate(x.sc, {
    plan: rc.prep.planPath,
    step: top.anchor,
    worktree: x.tree.path,
    attempt: x.attempt,
    review_commit: head,
    reason,
  });
  rc.tally.needsHuman.set(top.anchor, { review_ref: ref, reason });
  rc.emit({ type: 'needs_human', step_anchor: top.anchor, review_ref: ref, reason });
}

/**
 * A step a human approved (`state decide --approve`, docs/run.md §6.3): its kept commit becomes the worker
 * branch's head as it is — no implementer, no reviewer — and its units' items are done; the caller then
 * integrates it like any step (a conflict goes to the resolver). A kept commit that is gone fails the
 * attempt ReviewCommitMissing, which ends the approval: the step is then implemented again.
 */
export async function resumeApproved(x: StepRun, top: PlanStep, commit: string): Promise<PlanStep[]> {
  const { rc } = x;
  const W = x.tree.path;
  x.phase('commit');
  if ((await rc.g.tryRun(['cat-file', '-e', `${commit}^{commit}`], W)).status !== 0)
    throw new StepFailure(
      'ReviewCommitMissing',
      `${top.anchor}: the approved commit ${commit.slice(0, 12)} is gone from the repository; the step is implemented again`,
    );
  // The worktree is at the integration tip. The kept history goes on top of it when it applies cleanly, so the
  // tree holds the plan of this run (which a re-initialisation may have changed since the escalation:
  // docs/state.md §3.11); else as it was kept, and integration rebases it as it does any step's commits.
  const tip = (await rc.g.run(['rev-parse', 'HEAD'], W)).trim();
  await rc.g.run(['reset', '--hard', '--quiet', commit], W);
  if ((await rc.g.tryRun(['merge-base', '--is-ancestor', tip, commit], W)).status !== 0) {
    const fork = (await rc.g.tryRun(['merge-base', tip, commit], W)).stdout.trim();
    const moved = fork && (await rc.g.tryRun(['rebase', '--quiet', '--onto', tip, fork], W));
    if (moved && moved.status !== 0) {
      await rc.g.tryRun(['rebase', '--abort'], W);
      await rc.g.run(['reset', '--hard', '--quiet', commit], W);
    }
  }
  const { executionOrder } = await import('./step.js');
  const units = executionOrder(rc.prep.plan.steps, top);
  for (const u of units) {
    const owner = { plan: rc.prep.planPath, step: u.anchor, worktree: W, attempt: x.attempt };
    // A substep the escalated attempt completed stays completed (its commit is in the kept history): it is
    // neither started nor updated again (either is InvalidTransition on a completed step, which would end the
    // claim and with it the approved attempt).
    if (u !== top) {
      const done = await rc.store.start(x.sc, owner).then(
        () => false,
        (e: unknown) => {
          if (e instanceof TugError && e.code === 'InvalidTransition' && completedStep(e, u.anchor)) return true;
          throw e;
        },
      );
      if (done) continue;
    }
    await rc.store.update(x.sc, { ...owner, items: [], bulk: [], batch: false, complete_remaining: true });
  }
  // Said in the run's summary once integrated (docs/run.md §6.3): the row reads `approved by a human`.
  rc.tally.humanApproved.add(top.anchor);
  return units;
}

/** Whether an InvalidTransition says that `anchor` itself is already completed. */
function completedStep(e: TugError, anchor: string): boolean {
  const d = e.details as { step_anchor?: unknown; status?: unknown };
  return d.step_anchor === anchor && d.status === 'completed';
}
