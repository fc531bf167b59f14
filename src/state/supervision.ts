/**
 * The review gate's two state changes (docs/state.md §3.11). `escalate`: the owner's claim ends in
 * `needs_human`, the attempt's work kept — its items, its substeps, and the commit the driver has already
 * written under `refs/tugplan/review/<slug>/<step>`. `decide`: a person's answer (actor `admin`) —
 * approve (pending again, the kept commit to be integrated as it is), revise (pending again, the attempt
 * discarded, the notes for the next brief) or reject (failed, the attempt discarded).
 */
import { TugError } from '../contract/errors.js';
import { discardAttempt } from './attempt.js';
import { recordEvent } from './record.js';
import type { StateContext } from './context.js';
import {
  capReason,
  checkText,
  findStep,
  invalidTransition,
  ownerPlan,
  ownHeldTopStep,
  requireTopLevel,
  stepArg,
} from './owner.js';
import { requirePlanRow, resolvePlanRef, writeStore } from './plan-ref.js';
import { decideTop, escalateTop } from './queries/steps.js';
import type { OwnerInput } from './start.js';

export interface EscalateInput extends OwnerInput {
  /** The commit kept for the human (already written under the review ref by the caller). */
  review_commit: string;
  /** Why a person must look: the reviewer's summary. */
  reason: string;
}

export interface EscalateResult {
  step_anchor: string;
  status: 'needs_human';
  review_commit: string;
}

const SHA = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

export async function escalate(ctx: StateContext, input: EscalateInput): Promise<EscalateResult> {
  const anchor = stepArg(input.step);
  const reason = capReason(ctx, 'reason', checkText('reason', input.reason, { nonEmpty: true }));
  if (!SHA.test(input.review_commit))
    throw new TugError('InvalidArgument', {
      reason: `review_commit must be a full commit id, got ${JSON.stringify(input.review_commit.slice(0, 80))}`,
      argument: 'review_commit',
    });
  const { ref, store } = await ownerPlan(ctx, input);
  const plan_path = ref.plan_path;
  return store.write(async (c) => {
    const now = ctx.clock.now();
    const step = await ownHeldTopStep(c, plan_path, anchor, input, 'escalate', 'only a held step can wait for a human');
    const p = { plan_path, anchor, worktree: input.worktree, review_commit: input.review_commit, reason };
    if ((await escalateTop(c, p)) !== 1)
      throw new TugError('InternalError', { reason: 'guarded escalate changed no row' });
    recordEvent(ctx, c, {
      command: 'step_needs_human',
      at: now,
      plan_path,
      step_anchor: anchor,
      actor: input.worktree,
      attempt: step.attempt,
      details: { step_anchor: anchor, review_commit: input.review_commit, reason },
    });
    return { step_anchor: anchor, status: 'needs_human', review_commit: input.review_commit };
  });
}

export const DECISIONS = ['approve', 'revise', 'reject'] as const;
export type Decision = (typeof DECISIONS)[number];

export interface DecideInput {
  plan: string;
  step: string;
  decision: Decision;
  /** revise: what the next attempt must do differently (joins its brief as `human_notes`). */
  notes?: string | undefined;
  /** reject: why the step failed. */
  reason?: string | undefined;
}

export interface DecideResult {
  plan_path: string;
  step_anchor: string;
  decision: Decision;
  /** The step's status after the decision (not `status`: that is the envelope's). */
  step_status: 'pending' | 'failed';
  /** approve: the kept commit the next run integrates; otherwise null. */
  review_commit: string | null;
}

export async function decide(ctx: StateContext, input: DecideInput): Promise<DecideResult> {
  const anchor = stepArg(input.step);
  const text = (name: string, v: string | undefined) =>
    capReason(ctx, name, checkText(`--${name === 'notes' ? 'revise' : 'reject'}`, v ?? '', { nonEmpty: true }));
  const notes = input.decision === 'revise' ? text('notes', input.notes) : null;
  const reason = input.decision === 'reject' ? text('reason', input.reason) : null;
  const ref = await resolvePlanRef(ctx, input.plan);
  await requirePlanRow(ctx, ref);
  const plan_path = ref.plan_path;
  return writeStore(ctx).write(async (c) => {
    const now = ctx.clock.now();
    const s = await findStep(c, plan_path, anchor);
    requireTopLevel(s, plan_path, 'state decide');
    const step = s.step;
    if (step.status !== 'needs_human')
      throw invalidTransition(
        plan_path,
        step,
        `${anchor} is ${step.status}; only a step that needs a human (needs_human) can be decided`,
      );
    const approve = input.decision === 'approve';
    // Approve keeps the attempt's work for the next run to integrate; revise and reject discard it.
    const discarded = approve ? null : await discardAttempt(c, plan_path, anchor, now);
    const status = input.decision === 'reject' ? 'failed' : 'pending';
    const changed = await decideTop(c, {
      plan_path,
      anchor,
      status,
      human_decision: approve ? 'approved' : null,
      human_notes: notes,
      keep_commit: approve,
      fail_reason: reason,
    });
    if (changed !== 1) throw new TugError('InternalError', { reason: 'guarded decide changed no row' });
    recordEvent(ctx, c, {
      at: now,
      plan_path,
      step_anchor: anchor,
      actor: 'admin',
      attempt: step.attempt,
      details: {
        decision: input.decision,
        status,
        review_commit: step.review_commit,
        ...(notes !== null ? { notes } : {}),
        ...(reason !== null ? { reason } : {}),
        ...(discarded ?? {}),
      },
    });
    return {
      plan_path,
      step_anchor: anchor,
      decision: input.decision,
      step_status: status,
      review_commit: approve ? step.review_commit : null,
    };
  });
}
