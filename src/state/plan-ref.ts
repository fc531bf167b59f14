/**
 * Plan arguments → a plan row (docs/state.md §1, §4). Resolution itself is the one plan resolver
 * (src/plan/resolve.ts); this adds the state rules: a plan with no row is PlanNotInitialized when its file
 * exists, else PlanNotFound.
 */
import { namesOnePlace, resolvePlanArg, type ResolvedPlan } from '../plan/resolve.js';
import { TugError } from '../contract/errors.js';
import type { StateContext } from './context.js';
import { getPlan, listPlanPaths } from './queries/plans.js';
import type { PlanRow } from './types.js';

export interface PlanRef {
  /** Repo-relative path, the key in state.db. */
  plan_path: string;
  /** Absolute path of the file in the work tree it is read from. */
  abs_path: string;
  exists: boolean;
}

/** Resolve a plan argument against the work tree the plan is read from (default: the current one). */
export async function resolvePlanRef(
  ctx: StateContext,
  arg: string,
  workTree: string = ctx.workTree,
): Promise<PlanRef> {
  // Relative paths are read from the caller's directory; a context opened without one uses its work tree.
  const opts = {
    repoRoot: ctx.repoRoot,
    workTree,
    cwd: ctx.cwd ?? ctx.workTree,
    workTreeHolding: ctx.workTreeHolding,
  };
  let r: ResolvedPlan | null = null;
  // The plans with rows matter only when the file is missing (or the argument could name two files): the
  // common call, a plan file that exists, skips reading them.
  if (!ctx.store || namesOnePlace(arg, opts)) {
    try {
      r = resolvePlanArg(arg, opts);
    } catch (e) {
      if (!ctx.store || !(e instanceof TugError && e.code === 'PlanNotFound')) throw e;
    }
  }
  r ??= resolvePlanArg(arg, { ...opts, knownPlanPaths: await listPlanPaths(ctx.store!) });
  return { plan_path: r.plan_path, abs_path: r.abs_path, exists: r.exists };
}

/** The plan's row, read outside a transaction (callers re-read inside theirs). */
export async function requirePlanRow(ctx: StateContext, ref: PlanRef): Promise<PlanRow> {
  const row = ctx.store ? await getPlan(ctx.store, ref.plan_path) : undefined;
  if (row) return row;
  throw planMissing(ref);
}

/** A plan with no row: PlanNotInitialized when its file exists, else PlanNotFound. */
export function planMissing(ref: Pick<PlanRef, 'plan_path' | 'exists'>): TugError {
  if (ref.exists) return new TugError('PlanNotInitialized', { plan_path: ref.plan_path });
  return new TugError('PlanNotFound', { plan: ref.plan_path, plan_path: ref.plan_path });
}

/**
 * The store of a writer whose transaction reads the plan's row itself (claims and owner commands: one
 * round trip fewer than a read before the transaction). Without a store nothing is initialized.
 */
export function storeFor(ctx: StateContext, ref: PlanRef) {
  if (!ctx.store) throw planMissing(ref);
  return ctx.store;
}

/** The store of a writer; callers reach this only after requirePlanRow succeeded. */
export function writeStore(ctx: StateContext) {
  if (!ctx.store) throw new TugError('InternalError', { reason: 'state.db is not open' });
  return ctx.store;
}
