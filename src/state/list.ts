/** `state list` (docs/state.md §4): one line per plan with step and item totals and its live claims. */
import type { StateContext } from './context.js';
import { plansItemTotals } from './queries/items.js';
import { listPlans } from './queries/plans.js';
import { topSteps } from './queries/steps.js';
import { isExpired, isHeld, type PlanStatus } from './status.js';

export interface ListedPlan {
  plan_path: string;
  status: PlanStatus;
  steps_completed: number;
  steps_total: number;
  /** Completed and deferred items (closed ones; kept so for compatibility, docs/state.md §4). */
  items_completed: number;
  items_total: number;
  /** The deferred items among `items_completed`: closed, not done. */
  items_deferred: number;
  claimed_steps: string[];
}

export async function list(ctx: StateContext): Promise<{ plans: ListedPlan[] }> {
  const store = ctx.store;
  if (!store) return { plans: [] };
  const now = ctx.clock.now();
  return store.read(async (c) => {
    const plans: ListedPlan[] = [];
    for (const p of await listPlans(c)) {
      const items = await plansItemTotals(c, p.plan_path);
      const claimed = (await topSteps(c, p.plan_path)).filter(
        (s) => isHeld(s.status) && !isExpired(s.lease_expires_at, now),
      );
      plans.push({
        plan_path: p.plan_path,
        status: p.status,
        steps_completed: p.steps_completed,
        steps_total: p.steps_total,
        items_completed: items.done,
        items_total: items.total,
        items_deferred: items.deferred,
        claimed_steps: claimed.map((s) => s.anchor),
      });
    }
    return { plans };
  });
}
