/**
 * Ownership (docs/state.md §3–§4): every owner command resolves the step, then checks ownership, lease and
 * `--attempt` on its top-level ancestor, in the evaluation order of §4.
 */
import { TugError } from '../contract/errors.js';
import { shellArg } from '../util/shell-arg.js';
import { normalizeAnchor } from '../plan/anchors.js';
import { ownerPath, type StateContext } from './context.js';
import { planMissing, resolvePlanRef, storeFor } from './plan-ref.js';
import type { Conn, TxOptions } from './sql/conn.js';
import { getPlan } from './queries/plans.js';
import { getStep, lockStep, lockTopStep } from './queries/steps.js';
import { everClaimed } from './queries/events.js';
import { isHeld, REASON_MAX_CODE_POINTS, truncateCodePoints } from './status.js';
import type { StepRow } from './types.js';

/**
 * The transactions of an owner command on its own claim (start, heartbeat, update, artifact, complete): on
 * PostgreSQL they run beside claims and each other (a shared project lock) and serialize on the top-level row
 * they lock (findStep with `lock`) and on the plan row they count in; every other change runs alone.
 */
export const OWNER_TX: TxOptions = { shared: true };

export interface StepAndTop {
  step: StepRow;
  /** The top-level ancestor (the step itself when top-level). */
  top: StepRow;
}

/**
 * Step 3 of the evaluation order: StepNotFound. With `lock`, the top-level row is read locked for the rest of the
 * transaction (FOR UPDATE on PostgreSQL, where owner commands run beside claims; SQLite's writer is alone
 * anyway), so a takeover cannot slip between the ownership check and the guarded change.
 */
export async function findStep(
  c: Conn,
  plan_path: string,
  anchor: string,
  o: { lock?: boolean } = {},
): Promise<StepAndTop> {
  const lock = Boolean(o.lock);
  if (lock) {
    // Owner commands mostly name a top-level step: then one read finds and locks it.
    const top = await lockTopStep(c, plan_path, anchor);
    if (top) return { step: top, top };
  }
  const step = await getStep(c, plan_path, anchor);
  if (!step) {
    // No such step, or no plan at all (its row is not read before the transaction): step 2 comes first.
    if (!(await getPlan(c, plan_path))) throw planMissing({ plan_path, exists: true });
    throw new TugError('StepNotFound', { plan_path, step_anchor: anchor });
  }
  if (step.parent_anchor === null) return { step, top: step };
  const top = await (lock ? lockStep : getStep)(c, plan_path, step.top_anchor);
  if (!top)
    throw new TugError('InternalError', { reason: `top-level step ${step.top_anchor} of ${anchor} is missing` });
  return { step, top };
}

/** `release`, `fail` and `reset` accept only top-level anchors. */
export function requireTopLevel(
  s: StepAndTop,
  plan_path: string,
  command: string,
  owner?: { worktree: string; attempt?: number | undefined },
): void {
  if (s.step.parent_anchor !== null) {
    throw new TugError(
      'InvalidArgument',
      {
        reason: `${s.step.anchor} is a substep; ${command} acts on the top-level step ${s.top.anchor}`,
        plan_path,
        step_anchor: s.step.anchor,
        top_anchor: s.top.anchor,
      },
      {
        // An owner's command runs as that owner: the caller's worktree and attempt come along, or the hint
        // copied from elsewhere (the main root) would be NotOwner.
        hint:
          `tugcode ${command} ${shellArg(plan_path)} ${shellArg(s.top.anchor)}` +
          (owner ? ` --worktree ${shellArg(owner.worktree)}` : '') +
          (owner?.attempt !== undefined ? ` --attempt ${owner.attempt}` : ''),
      },
    );
  }
}

/** What to do instead of changing a completed step (its commit is integrated, docs/state.md §3). */
export const COMPLETED_STEP_HINT = 'add a step to the plan for the new work, commit the plan, then run again';

/** Steps 5–6: ownership on the top-level ancestor (NotOwner / LeaseExpired), then AttemptMismatch. */
export async function checkOwner(
  c: Conn,
  plan_path: string,
  s: StepAndTop,
  worktree: string,
  attempt: number | undefined,
): Promise<void> {
  const { top } = s;
  // Another caller on a completed step: it is completed (not "claim it"). Its owner keeps the claim
  // columns (usage is still recorded on it) and meets the status check of its command instead.
  if (top.status === 'completed' && top.claimed_by !== worktree)
    throw invalidTransition(
      plan_path,
      s.step,
      `${top.anchor === s.step.anchor ? s.step.anchor : `${s.step.anchor} (of ${top.anchor})`} is completed; a completed step takes no more changes`,
      {},
      COMPLETED_STEP_HINT,
    );
  if (top.claimed_by !== worktree) {
    const details = {
      plan_path,
      step_anchor: s.step.anchor,
      worktree,
      claimed_by: top.claimed_by,
      lease_expires_at: top.lease_expires_at,
      status: top.status,
    };
    if (await everClaimed(c, plan_path, top.anchor, worktree)) throw new TugError('LeaseExpired', details);
    throw new TugError('NotOwner', details);
  }
  if (attempt !== undefined && attempt !== top.attempt) {
    throw new TugError('AttemptMismatch', {
      plan_path,
      step_anchor: s.step.anchor,
      given: attempt,
      current: top.attempt,
    });
  }
}

/**
 * `release`, `fail` and `escalate`: the caller's own claim on a top-level step (steps 3–6 of the evaluation
 * order, then the held check), `only` saying which statuses the command accepts.
 */
export async function ownHeldTopStep(
  c: Conn,
  plan_path: string,
  anchor: string,
  input: { worktree: string; attempt?: number | undefined },
  command: string,
  only: string,
): Promise<StepRow> {
  const s = await findStep(c, plan_path, anchor);
  requireTopLevel(s, plan_path, command, input);
  await checkOwner(c, plan_path, s, input.worktree, input.attempt);
  if (!isHeld(s.step.status)) throw invalidTransition(plan_path, s.step, `${anchor} is ${s.step.status}; ${only}`);
  return s.step;
}

export function invalidTransition(
  plan_path: string,
  step: StepRow,
  reason: string,
  extra: Record<string, unknown> = {},
  hint?: string,
): TugError {
  const details = { plan_path, step_anchor: step.anchor, status: step.status, reason, ...extra };
  return new TugError('InvalidTransition', details, hint === undefined ? {} : { hint });
}

/**
 * Steps 1–2 for owner commands: the plan (read from the caller's worktree) and the store. Its row is read in
 * the transaction: findStep answers PlanNotInitialized (step 2) before StepNotFound (step 3).
 */
export async function ownerPlan(ctx: StateContext, input: { plan: string; worktree: string }) {
  const ref = await resolvePlanRef(ctx, input.plan, ownerPath(ctx, input.worktree));
  return { ref, store: storeFor(ctx, ref) };
}

/** `#step-2` → `step-2`; an empty anchor is InvalidArgument. */
export function stepArg(anchor: string): string {
  const a = normalizeAnchor(anchor);
  if (a === '' || a.includes('\0'))
    throw new TugError('InvalidArgument', {
      reason: 'the step argument is empty or contains a NUL byte',
      argument: 'step',
    });
  return a;
}

/**
 * A reason about to be stored, cut to REASON_MAX_CODE_POINTS; a cut adds the warning `TextTruncated`
 * naming the field.
 */
export function capReason(ctx: StateContext, field: string, value: string): string {
  const t = truncateCodePoints(value, REASON_MAX_CODE_POINTS);
  if (t.truncated) {
    ctx.warnings.add('TextTruncated', `${field} was cut to ${REASON_MAX_CODE_POINTS} characters`, {
      field,
      max_code_points: REASON_MAX_CODE_POINTS,
    });
  }
  return t.text;
}

/**
 * Text inputs (reasons, summaries) are UTF-8 without NUL bytes (docs/output.md §5). `argument`: the flag
 * when `name` says more than the flag (`--force reason`), so a tool error names its field (`force`).
 */
export function checkText(name: string, value: string, opts: { nonEmpty?: boolean; argument?: string } = {}): string {
  const argument = opts.argument ?? name;
  if (value.includes('\0')) throw new TugError('InvalidArgument', { reason: `${name} contains a NUL byte`, argument });
  if (opts.nonEmpty && value.trim() === '')
    throw new TugError('InvalidArgument', { reason: `${name} must not be empty`, argument });
  return value;
}
