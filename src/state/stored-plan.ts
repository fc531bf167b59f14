/**
 * The hashes `state init` stored of a plan (docs/state.md §2, §3.10): what a reader compares with a plan
 * file to know whether the next init refreshes prose, or re-initialises from a changed structure. Reads
 * only; the plan parser stays unloaded.
 */
import type { ParsedPlan } from '../plan/types.js';
import type { StateContext } from './context.js';
import { resolvePlanRef, requirePlanRow } from './plan-ref.js';

export interface StoredPlan {
  plan_path: string;
  /** SHA-256 of the file bytes last initialised from. */
  plan_hash: string;
  /** The structure hash of that plan (docs/plan-format.md §2). */
  structure_hash: string;
}

/** The plan's stored hashes; PlanNotInitialized (or PlanNotFound) when it has no row. */
export async function storedPlan(ctx: StateContext, input: { plan: string }): Promise<StoredPlan> {
  const ref = await resolvePlanRef(ctx, input.plan);
  const row = await requirePlanRow(ctx, ref);
  return { plan_path: row.plan_path, plan_hash: row.plan_hash, structure_hash: row.structure_hash };
}

/**
 * The top-level steps whose person's part (a wait for a decision, an approval, notes) a re-initialisation
 * from `parsed` keeps (docs/state.md §3.11): what a dry run previews of the real run's `init --force`.
 */
export async function reinitKeeps(
  ctx: StateContext,
  input: { plan: string; parsed: ParsedPlan },
): Promise<{ kept_decisions: string[] }> {
  const row = await requirePlanRow(ctx, await resolvePlanRef(ctx, input.plan));
  const { decisionsKept } = await import('./init-write.js');
  return { kept_decisions: await ctx.store!.read((c) => decisionsKept(c, row.plan_path, input.parsed)) };
}
