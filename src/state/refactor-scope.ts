/**
 * The scope every refactor-row operation works in (docs/kernel.md §7.3 setup 1–2): the row types, the parsed
 * row view, the ownership and attempt-fence check on the top-level step, lease renewal inside a write, the
 * event of a run-step transaction, and `refactorScope` (run-step's read-only setup).
 */
import { addSeconds } from '../clock.js';
import type { StateContext } from './context.js';
import { checkOwner, findStep, invalidTransition, ownerPlan, stepArg, type StepAndTop } from './owner.js';
import { recordEvent } from './record.js';
import { refactorsOfStep } from './queries/refactors.js';
import { renewLease } from './queries/steps.js';
import type { Conn } from './sql/conn.js';
import { isExpired, isHeld } from './status.js';
import type { RefactorRow } from './types.js';

export interface RefactorScopeInput {
  plan: string;
  step: string;
  /** Canonical worktree root. */
  worktree: string;
  attempt?: number | undefined;
}

/** What run-step's setup established: every later transaction is fenced by `attempt`. */
export interface RefactorScope {
  plan_path: string;
  step_anchor: string;
  top_anchor: string;
  worktree: string;
  attempt: number;
}

/** `result_json.pending` (docs/kernel.md §7.3 step 6). */
export interface PendingWrite {
  op_hash: string;
  snapshot_before: string;
  snapshot_after: string;
  worktree: string;
  attempt: number;
}

/** A row with its parsed `result_json`. */
export interface RefactorView extends RefactorRow {
  result: Record<string, unknown> | null;
}

/** A row with `result_json` parsed (an unparsable value is kept under `unparsable`). */
export function view(r: RefactorRow): RefactorView {
  let result: Record<string, unknown> | null = null;
  if (r.result_json !== null) {
    try {
      const v: unknown = JSON.parse(r.result_json);
      result = v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : { value: v };
    } catch {
      result = { unparsable: r.result_json };
    }
  }
  return { ...r, result };
}

export const json = (v: Record<string, unknown> | null): string | null => (v === null ? null : JSON.stringify(v));

export function withoutPending(r: Record<string, unknown> | null): Record<string, unknown> {
  const { pending: _p, ...rest } = r ?? {};
  return rest;
}

/** Ownership on the top-level step, the attempt fence, and a step that can still run refactors. */
export async function owned(
  c: Conn,
  scope: { plan_path: string; step_anchor: string; worktree: string },
  attempt: number | undefined,
): Promise<StepAndTop> {
  const s = await findStep(c, scope.plan_path, scope.step_anchor);
  await checkOwner(c, scope.plan_path, s, scope.worktree, attempt);
  if (!isHeld(s.top.status))
    throw invalidTransition(
      scope.plan_path,
      s.top,
      `the top-level step ${s.top.anchor} is ${s.top.status}; only a claimed or in-progress step runs refactors`,
    );
  if (s.step.status === 'completed')
    throw invalidTransition(scope.plan_path, s.step, `${s.step.anchor} is already completed`);
  return s;
}

/** Renew the lease inside a write (heartbeat semantics; a revival is noted in the event's details). */
export async function renew(
  ctx: StateContext,
  c: Conn,
  s: StepAndTop,
  worktree: string,
  now: string,
): Promise<{ lease_expires_at: string; revived: boolean }> {
  const lease = addSeconds(now, ctx.config.state.lease_seconds);
  const revived = isExpired(s.top.lease_expires_at, now);
  await renewLease(c, { plan_path: s.top.plan_path, anchor: s.top.anchor, worktree, now, lease, heartbeat: true });
  return { lease_expires_at: lease, revived };
}

/**
 * run-step setup (docs/kernel.md §7.3 setup 1–2): the plan, the step, ownership exactly as `state update`
 * checks it (NotOwner / LeaseExpired, then AttemptMismatch), then the transition (the top-level step is
 * claimed or in progress and the step is not completed). Changes nothing.
 */
export async function refactorScope(
  ctx: StateContext,
  input: RefactorScopeInput,
): Promise<{ scope: RefactorScope; rows: RefactorView[] }> {
  const anchor = stepArg(input.step);
  const { ref, store } = await ownerPlan(ctx, input);
  const plan_path = ref.plan_path;
  return store.read(async (c) => {
    const s = await owned(c, { plan_path, step_anchor: anchor, worktree: input.worktree }, input.attempt);
    const scope: RefactorScope = {
      plan_path,
      step_anchor: anchor,
      top_anchor: s.top.anchor,
      worktree: input.worktree,
      attempt: s.top.attempt,
    };
    return { scope, rows: (await refactorsOfStep(c, plan_path, anchor)).map(view) };
  });
}

/** An event of a run-step transaction, attributed to the scope's worktree and the step's attempt. */
export async function recordScopeEvent(
  ctx: StateContext,
  c: Conn,
  scope: RefactorScope,
  attempt: number | null,
  at: string,
  details: Record<string, unknown>,
): Promise<void> {
  recordEvent(ctx, c, {
    at,
    plan_path: scope.plan_path,
    step_anchor: scope.step_anchor,
    actor: scope.worktree,
    attempt,
    details,
  });
}
