/**
 * `state reset` (docs/state.md §4): the admin escape hatch. A claimed, in-progress or failed top-level step
 * returns to pending: attempt discarded, claim and fail_reason cleared, `failures` 0. `attempt` is a
 * fencing token and never goes down, so a stale holder of an earlier attempt can never match again. A live
 * claim is reset only with `force`; the result names the owner whose claim ended. Completed steps are
 * refused.
 */
import { TugError } from '../contract/errors.js';
import { shellArg } from '../util/shell-arg.js';
import { discardAttempt } from './attempt.js';
import { recordEvent } from './record.js';
import type { StateContext } from './context.js';
import { COMPLETED_STEP_HINT, findStep, invalidTransition, requireTopLevel, stepArg } from './owner.js';
import { requirePlanRow, resolvePlanRef, writeStore } from './plan-ref.js';
import { resetTop } from './queries/steps.js';
import { isExpired, isHeld, type StepStatus } from './status.js';
import { reviewRefName } from '../contract/layout.js';
import { slugOfPlanPath } from '../plan/resolve.js';

export interface ResetInput {
  plan: string;
  step: string;
  /** Also reset a live (unexpired) claim; without it that is InvalidTransition. */
  force?: boolean | undefined;
}

export interface ResetResult {
  reset: boolean;
  step_anchor: string;
  previous_status: StepStatus;
  /** The worktree whose claim the reset ended, else null. */
  previous_owner: string | null;
  /**
   * What the reset dropped of the review gate (docs/state.md §3.11): the kept commit and its ref (which the
   * reset deletes), a human's approval, a human's notes; null when the step had none of them.
   */
  dropped_review: {
    review_commit: string | null;
    review_ref: string | null;
    human_decision: 'approved' | null;
    human_notes: string | null;
  } | null;
}

export async function reset(ctx: StateContext, input: ResetInput): Promise<ResetResult> {
  const anchor = stepArg(input.step);
  const ref = await resolvePlanRef(ctx, input.plan);
  await requirePlanRow(ctx, ref);
  const store = writeStore(ctx);
  const plan_path = ref.plan_path;
  return store.write(async (c) => {
    const now = ctx.clock.now();
    const s = await findStep(c, plan_path, anchor);
    requireTopLevel(s, plan_path, 'state reset');
    const step = s.step;
    if (step.status === 'completed')
      throw invalidTransition(
        plan_path,
        step,
        `${anchor} is completed; a completed step cannot be reset`,
        {},
        COMPLETED_STEP_HINT,
      );
    const live = isHeld(step.status) && !isExpired(step.lease_expires_at, now);
    if (live && !input.force) {
      throw invalidTransition(
        plan_path,
        step,
        `${anchor} is ${step.status} by ${step.claimed_by} with a live lease until ${step.lease_expires_at}; a live claim is reset only when forced`,
        { claimed_by: step.claimed_by, lease_expires_at: step.lease_expires_at },
        `when ${step.claimed_by} has stopped working on it: tugcode state reset ${shellArg(plan_path)} ${shellArg(anchor)} --force (its attempt is discarded); else wait for it (tugcode status)`,
      );
    }
    const previous_owner = isHeld(step.status) ? step.claimed_by : null;
    const slug = slugOfPlanPath(plan_path);
    const decided = step.review_commit !== null || step.human_notes !== null || step.human_decision !== null;
    const dropped_review = decided
      ? {
          review_commit: step.review_commit,
          review_ref: step.review_commit !== null && slug ? reviewRefName(slug, anchor) : null,
          human_decision: step.human_decision === 'approved' ? ('approved' as const) : null,
          human_notes: step.human_notes,
        }
      : null;
    const result = { reset: true, step_anchor: anchor, previous_status: step.status, previous_owner, dropped_review };
    // A pending step too: a substep completed without a commit there (left by a tugcode before the rule of
    // docs/state.md §3.5) would refuse every attempt's `start`.
    const discarded = await discardAttempt(c, plan_path, anchor, now);
    const reopened = discarded.items_reopened.length > 0 || discarded.substeps_reopened !== undefined;
    if (step.status === 'pending' && step.failures === 0 && !reopened && !decided) return result;
    if ((await resetTop(c, plan_path, anchor)) !== 1)
      throw new TugError('InternalError', { reason: 'guarded reset changed no row' });
    recordEvent(ctx, c, {
      at: now,
      plan_path,
      step_anchor: anchor,
      actor: 'admin',
      attempt: step.attempt,
      details: {
        reset: true,
        previous_status: step.status,
        previous_owner: step.claimed_by,
        previous_attempt: step.attempt,
        previous_failures: step.failures,
        ...(live ? { live_claim: true } : {}),
        ...(step.status === 'pending' && !reopened ? {} : discarded),
      },
    });
    return result;
  });
}
