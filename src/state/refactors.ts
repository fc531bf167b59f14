/**
 * The refactor rows of a step (docs/kernel.md §7.2–§7.4) as state operations: the setup checks of
 * `refactor run-step`, each of its short transactions (retry/recovery, pending write, result), `refactor
 * skip`, and the read-only views used by `tugcode commit` and `state show`. Every write re-checks ownership
 * on the top-level step, fenced by the attempt seen at setup, and appends exactly one event. The state
 * layer never calls the kernel: the caller runs kernel operations between these transactions.
 *
 * This module holds the read-only views, the trailers and `refactor skip`; the scope and setup live in
 * refactor-scope.ts and run-step's transactions in refactor-run.ts, both re-exported from here.
 */
import { TugError } from '../contract/errors.js';
import { ownerPath, type StateContext } from './context.js';
import { capReason, checkText, findStep, invalidTransition, ownerPlan, stepArg } from './owner.js';
import { requirePlanRow, resolvePlanRef } from './plan-ref.js';
import { recordEvent } from './record.js';
import { getRefactor, refactorsOfStep, setRefactor } from './queries/refactors.js';
import type { RefactorStatus } from './status.js';
import { json, owned, view, withoutPending, type RefactorScopeInput, type RefactorView } from './refactor-scope.js';

export {
  refactorScope,
  type PendingWrite,
  type RefactorScope,
  type RefactorScopeInput,
  type RefactorView,
} from './refactor-scope.js';
export {
  ownPending,
  recordRefactorResult,
  startRefactorRun,
  writePending,
  type RecoveryOutcome,
  type RefactorOutcome,
  type RunStart,
} from './refactor-run.js';

/** The step's rows, read-only and without ownership (display, commit trailers). Empty without state.db. */
export async function refactorRows(
  ctx: StateContext,
  input: { plan: string; step: string; worktree?: string },
): Promise<RefactorView[]> {
  if (!ctx.store) return [];
  const anchor = stepArg(input.step);
  const ref = await resolvePlanRef(
    ctx,
    input.plan,
    input.worktree === undefined ? undefined : ownerPath(ctx, input.worktree),
  );
  await requirePlanRow(ctx, ref);
  const store = ctx.store;
  return store.read(async (c) => {
    await findStep(c, ref.plan_path, anchor);
    return (await refactorsOfStep(c, ref.plan_path, anchor)).map(view);
  });
}

/**
 * `Tug-Refactor` trailer values (docs/kernel.md §7.4) of the step's `applied` rows, in ordinal order:
 * `<op_hash> <snapshot_before>..<snapshot_after>`. Rows without the three values are left out.
 */
export function refactorTrailers(rows: RefactorView[]): string[] {
  const out: string[] = [];
  for (const r of rows) {
    const hash = r.result?.op_hash;
    if (r.status !== 'applied' || typeof hash !== 'string' || !r.snapshot_before || !r.snapshot_after) continue;
    out.push(`${hash} ${r.snapshot_before}..${r.snapshot_after}`);
  }
  return out;
}

export interface SkipInput extends RefactorScopeInput {
  ordinal: number;
  reason: string;
}

export interface SkipResult {
  plan_path: string;
  step_anchor: string;
  worktree: string;
  ordinal: number;
  op_text: string;
  previous_status: RefactorStatus;
  skipped_reason: string;
  already_skipped: boolean;
}

/**
 * `refactor skip` (docs/kernel.md §7.4): the owner marks an open or failed row skipped with a reason. An
 * applied row is InvalidTransition; a row already skipped succeeds and changes nothing.
 */
export async function skipRefactor(ctx: StateContext, input: SkipInput): Promise<SkipResult> {
  const anchor = stepArg(input.step);
  if (!Number.isSafeInteger(input.ordinal) || input.ordinal < 0)
    throw new TugError('InvalidArgument', {
      reason: `--ordinal must be a non-negative integer, got ${input.ordinal}`,
      argument: '--ordinal',
    });
  checkText('--reason', input.reason, { nonEmpty: true });
  input = { ...input, reason: capReason(ctx, 'reason', input.reason) };
  const { ref, store } = await ownerPlan(ctx, input);
  const plan_path = ref.plan_path;
  return store.write(async (c) => {
    const now = ctx.clock.now();
    const s = await owned(c, { plan_path, step_anchor: anchor, worktree: input.worktree }, input.attempt);
    const r = await getRefactor(c, plan_path, anchor, input.ordinal);
    if (!r) {
      const count = (await refactorsOfStep(c, plan_path, anchor)).length;
      throw new TugError('InvalidArgument', {
        reason: `${anchor} has ${count} refactor row(s); there is no ordinal ${input.ordinal}`,
        argument: '--ordinal',
        plan_path,
        step_anchor: anchor,
      });
    }
    const base = {
      plan_path,
      step_anchor: anchor,
      worktree: input.worktree,
      ordinal: r.ordinal,
      op_text: r.op_text,
      previous_status: r.status,
    };
    if (r.status === 'applied')
      throw invalidTransition(
        plan_path,
        s.step,
        `refactor ${r.ordinal} is already applied; an applied refactor cannot be skipped`,
        { ordinal: r.ordinal },
      );
    if (r.status === 'skipped') {
      const old = view(r).result?.skipped_reason;
      return { ...base, skipped_reason: typeof old === 'string' ? old : '', already_skipped: true };
    }
    await setRefactor(c, {
      ...r,
      status: 'skipped',
      snapshot_before: null,
      snapshot_after: null,
      exit_code: null,
      result_json: json({ ...withoutPending(view(r).result), skipped_reason: input.reason }),
      updated_at: now,
    });
    recordEvent(ctx, c, {
      at: now,
      plan_path,
      step_anchor: anchor,
      actor: input.worktree,
      attempt: s.top.attempt,
      details: { ordinal: r.ordinal, previous_status: r.status, skipped_reason: input.reason },
    });
    return { ...base, skipped_reason: input.reason, already_skipped: false };
  });
}
