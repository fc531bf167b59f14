/**
 * `state reset` (02-state.md §4): the admin escape hatch. A claimed, in-progress or failed top-level step
 * returns to pending: attempt discarded, claim and fail_reason cleared, both counters 0. Completed steps
 * are refused.
 */
import { TugError } from '../contract/errors.js';
import { discardAttempt } from './attempt.js';
import { recordEvent } from './record.js';
import type { StateContext } from './context.js';
import { immediate } from './db.js';
import { findStep, invalidTransition, requireTopLevel, stepArg } from './owner.js';
import { requirePlanRow, resolvePlanRef, writeStore } from './plan-ref.js';
import { resetTop } from './queries/steps.js';
import type { StepStatus } from './status.js';

export interface ResetInput {
  plan: string;
  step: string;
}

export interface ResetResult {
  reset: boolean;
  step_anchor: string;
  previous_status: StepStatus;
}

export async function reset(ctx: StateContext, input: ResetInput): Promise<ResetResult> {
  const anchor = stepArg(input.step);
  const ref = resolvePlanRef(ctx, input.plan);
  requirePlanRow(ctx, ref);
  const store = writeStore(ctx);
  const plan_path = ref.plan_path;
  return immediate(store, () => {
    const db = store.db;
    const now = ctx.clock.now();
    const s = findStep(db, plan_path, anchor);
    requireTopLevel(s, plan_path, 'state reset');
    const step = s.step;
    if (step.status === 'completed')
      throw invalidTransition(plan_path, step, `${anchor} is completed; a completed step cannot be reset`);
    if (step.status === 'pending' && step.attempt === 0 && step.failures === 0) {
      return { reset: true, step_anchor: anchor, previous_status: step.status };
    }
    const discarded = step.status === 'pending' ? null : discardAttempt(db, plan_path, anchor, now);
    if (resetTop(db, plan_path, anchor) !== 1)
      throw new TugError('InternalError', { reason: 'guarded reset changed no row' });
    recordEvent(ctx, db, {
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
        ...(discarded ?? {}),
      },
    });
    return { reset: true, step_anchor: anchor, previous_status: step.status };
  });
}
