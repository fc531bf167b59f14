/**
 * `state ready` (docs/state.md §4) and the categorisation shared with `claim`: every top-level step is in
 * exactly one of completed / failed / needs_human / claimed (live lease) / ready / blocked; `expired_claims` lists the
 * expired ones among ready and blocked.
 */
import type { StateContext } from './context.js';
import { resolvePlanRef, requirePlanRow } from './plan-ref.js';
import { topSteps } from './queries/steps.js';
import type { Conn } from './sql/conn.js';
import { isExpired, isHeld } from './status.js';
import type { StepRow } from './types.js';

export interface Categories {
  all_steps: string[];
  ready_steps: string[];
  completed_steps: string[];
  failed_steps: string[];
  /** Steps waiting for `state decide` (docs/state.md §3.11). */
  needs_human_steps: string[];
  claimed_steps: string[];
  blocked_steps: string[];
  expired_claims: string[];
  failures: Record<string, number>;
}

export function categorize(steps: StepRow[], now: string): Categories {
  const c: Categories = {
    all_steps: [],
    ready_steps: [],
    completed_steps: [],
    failed_steps: [],
    needs_human_steps: [],
    claimed_steps: [],
    blocked_steps: [],
    expired_claims: [],
    failures: {},
  };
  for (const s of steps) {
    if (s.parent_anchor !== null) continue;
    c.all_steps.push(s.anchor);
    if (s.failures > 0) c.failures[s.anchor] = s.failures;
    if (s.status === 'completed') c.completed_steps.push(s.anchor);
    else if (s.status === 'failed') c.failed_steps.push(s.anchor);
    else if (s.status === 'needs_human') c.needs_human_steps.push(s.anchor);
    else if (isHeld(s.status) && !isExpired(s.lease_expires_at, now)) c.claimed_steps.push(s.anchor);
    else {
      (s.unmet_deps === 0 ? c.ready_steps : c.blocked_steps).push(s.anchor);
      if (isHeld(s.status)) c.expired_claims.push(s.anchor);
    }
  }
  return c;
}

export async function categorizePlan(c: Conn, plan_path: string, now: string): Promise<Categories> {
  return categorize(await topSteps(c, plan_path), now);
}

export interface ReadyInput {
  plan: string;
}

export async function ready(ctx: StateContext, input: ReadyInput): Promise<Categories> {
  const ref = await resolvePlanRef(ctx, input.plan);
  await requirePlanRow(ctx, ref);
  const store = ctx.store!;
  return store.read((c) => categorizePlan(c, ref.plan_path, ctx.clock.now()));
}
