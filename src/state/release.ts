/**
 * `state release` and `state fail` (docs/state.md §3–§4): the owner ends its claim on a top-level step. The
 * attempt is discarded; release returns the step to pending with `failures` unchanged; fail adds one to
 * `failures` and the step becomes `failed` when that reaches `max_attempts`.
 */
import { TugError } from '../contract/errors.js';
import { discardAttempt } from './attempt.js';
import { recordEvent } from './record.js';
import type { StateContext } from './context.js';
import { capReason, checkText, ownerPlan, ownHeldTopStep, stepArg } from './owner.js';
import { endClaim } from './queries/steps.js';
import type { Conn } from './sql/conn.js';
import type { OwnerInput } from './start.js';

const HELD_ONLY = (what: string) => `only a claimed or in-progress step can ${what}`;

export interface ReleaseResult {
  released: boolean;
  step_anchor: string;
}

export async function release(ctx: StateContext, input: OwnerInput): Promise<ReleaseResult> {
  const anchor = stepArg(input.step);
  const { ref, store } = await ownerPlan(ctx, input);
  return store.write(async (c) => {
    await releaseIn(ctx, c, ref.plan_path, anchor, input, 'state release');
    return { released: true, step_anchor: anchor };
  });
}

/**
 * The release inside the caller's write transaction: `state release`, and reconcile settling a step its
 * caller holds (docs/state.md §6), so that no other worker can claim the step between the two.
 */
export async function releaseIn(
  ctx: StateContext,
  c: Conn,
  plan_path: string,
  anchor: string,
  input: { worktree: string; attempt?: number | undefined },
  command: string,
): Promise<void> {
  const now = ctx.clock.now();
  const step = await ownHeldTopStep(c, plan_path, anchor, input, command, HELD_ONLY('be released'));
  const discarded = await discardAttempt(c, plan_path, anchor, now);
  if (
    (await endClaim(c, {
      plan_path,
      anchor,
      worktree: input.worktree,
      status: 'pending',
      failures_delta: 0,
      fail_reason: null,
    })) !== 1
  ) {
    throw new TugError('InternalError', { reason: 'guarded release changed no row' });
  }
  recordEvent(ctx, c, {
    at: now,
    plan_path,
    step_anchor: anchor,
    actor: input.worktree,
    attempt: step.attempt,
    details: { released: true, ...discarded },
  });
}

export interface FailInput extends OwnerInput {
  reason: string;
}

export interface FailResult {
  failed_attempt: boolean;
  step_anchor: string;
  attempt: number;
  failures: number;
  step_status: 'pending' | 'failed';
}

export async function fail(ctx: StateContext, input: FailInput): Promise<FailResult> {
  const anchor = stepArg(input.step);
  const reason = capReason(ctx, 'reason', checkText('--reason', input.reason, { nonEmpty: true }));
  const { ref, store } = await ownerPlan(ctx, input);
  const plan_path = ref.plan_path;
  return store.write(async (c) => {
    const now = ctx.clock.now();
    const step = await ownHeldTopStep(c, plan_path, anchor, input, 'state fail', HELD_ONLY('fail an attempt'));
    const failures = step.failures + 1;
    const status = failures >= ctx.config.state.max_attempts ? 'failed' : 'pending';
    const discarded = await discardAttempt(c, plan_path, anchor, now);
    if (
      (await endClaim(c, {
        plan_path,
        anchor,
        worktree: input.worktree,
        status,
        failures_delta: 1,
        fail_reason: status === 'failed' ? reason : null,
      })) !== 1
    ) {
      throw new TugError('InternalError', { reason: 'guarded fail changed no row' });
    }
    if (status === 'failed') {
      recordEvent(ctx, c, {
        command: 'step_failed',
        at: now,
        plan_path,
        step_anchor: anchor,
        actor: input.worktree,
        attempt: step.attempt,
        details: { failures, fail_reason: reason },
      });
    }
    recordEvent(ctx, c, {
      at: now,
      plan_path,
      step_anchor: anchor,
      actor: input.worktree,
      attempt: step.attempt,
      details: { failed_attempt: true, reason, failures, step_status: status, ...discarded },
    });
    return { failed_attempt: true, step_anchor: anchor, attempt: step.attempt, failures, step_status: status };
  });
}
