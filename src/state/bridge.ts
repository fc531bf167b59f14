/**
 * Library entry points for other in-process callers (git flows, the driver) that have no CLI command of
 * their own: the claims a worktree holds, an admin release, the strict-completion check as a question
 * ("would `complete` refuse, and why?"), and a step's earlier failed attempts. The store names each one
 * (store.ts), so no caller reads the event log to answer them.
 */
import { TugError } from '../contract/errors.js';
import { discardAttempt } from './attempt.js';
import { recordEvent } from './record.js';
import type { StateContext } from './context.js';
import { complete, CompletionDryRun, type CompleteInput } from './complete.js';
import { findStep, requireTopLevel, stepArg } from './owner.js';
import { requirePlanRow, resolvePlanRef, writeStore } from './plan-ref.js';
import { failedAttemptEvents } from './queries/events.js';
import { endClaim, heldAnywhereBy } from './queries/steps.js';
import { isExpired } from './status.js';

export interface HeldClaim {
  plan_path: string;
  step_anchor: string;
  status: string;
  lease_expires_at: string | null;
  attempt: number;
  live: boolean;
}

/** Top-level steps held (claimed or in progress, live or expired) by `worktree`, in every plan. */
export async function claimsHeldBy(ctx: StateContext, worktree: string): Promise<HeldClaim[]> {
  const store = ctx.store;
  if (!store) return [];
  const now = ctx.clock.now();
  const rows = await store.read((c) => heldAnywhereBy(c, worktree));
  return rows.map((r) => ({
    plan_path: r.plan_path,
    step_anchor: r.anchor,
    status: r.status,
    lease_expires_at: r.lease_expires_at,
    attempt: r.attempt,
    live: !isExpired(r.lease_expires_at, now),
  }));
}

/**
 * Admin release (`worktree remove --force`): ends `worktree`'s claim on a top-level step, discarding the
 * attempt; `failures` unchanged; actor `admin`. Returns false when the worktree does not hold the step.
 */
export async function adminRelease(
  ctx: StateContext,
  input: { plan: string; step: string; worktree: string },
): Promise<{ released: boolean }> {
  const anchor = stepArg(input.step);
  const ref = await resolvePlanRef(ctx, input.plan);
  await requirePlanRow(ctx, ref);
  const store = writeStore(ctx);
  return store.write(async (c) => {
    const now = ctx.clock.now();
    const s = await findStep(c, ref.plan_path, anchor);
    requireTopLevel(s, ref.plan_path, 'state release');
    if (s.step.claimed_by !== input.worktree) return { released: false };
    const discarded = await discardAttempt(c, ref.plan_path, anchor, now);
    if (
      (await endClaim(c, {
        plan_path: ref.plan_path,
        anchor,
        worktree: input.worktree,
        status: 'pending',
        failures_delta: 0,
        fail_reason: null,
      })) !== 1
    ) {
      return { released: false };
    }
    recordEvent(ctx, c, {
      at: now,
      plan_path: ref.plan_path,
      step_anchor: anchor,
      actor: 'admin',
      attempt: s.step.attempt,
      details: { released: true, previous_owner: input.worktree, ...discarded },
    });
    return { released: true };
  });
}

/**
 * The error strict `complete` would raise now (NotOwner, ChecklistIncomplete, PlanDrift, …), or null when it
 * would succeed. Runs the real completion in a transaction that is always rolled back.
 */
export async function completionBlocker(
  ctx: StateContext,
  input: Omit<CompleteInput, 'force' | 'dry_run'>,
): Promise<TugError | null> {
  try {
    await complete(ctx, { ...input, dry_run: true });
    return null;
  } catch (e) {
    if (e instanceof CompletionDryRun) return null;
    if (e instanceof TugError) return e;
    throw e;
  }
}

/** One earlier failed attempt of a step: its number and the reason `state fail` recorded. */
export interface FailedAttempt {
  attempt: number;
  reason: string;
}

/** The failed attempts of `step` (a top-level step's, as `state fail` records them), oldest first. */
export async function previousFailures(
  ctx: StateContext,
  input: { plan: string; step: string },
): Promise<FailedAttempt[]> {
  const ref = await resolvePlanRef(ctx, input.plan);
  await requirePlanRow(ctx, ref);
  const store = ctx.store;
  if (!store) return [];
  const rows = await store.read((c) => failedAttemptEvents(c, ref.plan_path, stepArg(input.step)));
  return rows.flatMap((r) => {
    const reason = (JSON.parse(r.details_json) as { reason?: unknown }).reason;
    return typeof reason === 'string' ? [{ attempt: r.attempt ?? 0, reason }] : [];
  });
}
