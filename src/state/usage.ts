/**
 * The ledger (docs/state.md §2, §4): the owner of a step records what one agent run of its attempt used —
 * fenced by the claim like `state artifact` — and every reader sums it per step, per plan and per role.
 * A store older than the ledger's migration (a reader does not migrate) has no usage: its sums are empty.
 */
import { TugError } from '../contract/errors.js';
import {
  emptyTotals,
  isUsageCost,
  isUsageCount,
  USAGE_MAX_COST_USD,
  USAGE_MAX_TOKENS,
  roundUsd,
  USAGE_ROLES,
  USAGE_TOKEN_FIELDS,
  type Usage,
  type UsageRole,
  type UsageTotals,
} from '../contract/usage.js';
import type { StateContext } from './context.js';
import { USAGE_SCHEMA_VERSION } from './migrate.js';
import { checkOwner, findStep, ownerPlan, stepArg, OWNER_TX } from './owner.js';
import { resolvePlanRef, requirePlanRow } from './plan-ref.js';
import { insertUsage, stepActivity as activityOf, usageByRole, type UsageGroup } from './queries/usage.js';
import { recordEvent } from './record.js';
import type { Conn } from './sql/conn.js';
import type { OwnerInput } from './start.js';

export interface UsageInput extends OwnerInput {
  role: string;
  usage: Usage;
}

export interface UsageResult {
  recorded: boolean;
  step_anchor: string;
  usage_id: number;
}

function invalid(reason: string): TugError {
  return new TugError('InvalidArgument', { reason, argument: 'usage' });
}

/**
 * The report's values: counts are non-negative integers, the cost a non-negative number, each bounded (so
 * the sums stay finite: docs/run.md §7.1) and each may be null.
 */
function checkUsage(u: Usage): Usage {
  const out = {} as Usage;
  for (const k of USAGE_TOKEN_FIELDS) {
    const v = u[k];
    if (v !== null && !isUsageCount(v))
      throw invalid(`${k} must be a non-negative integer of at most ${USAGE_MAX_TOKENS} or null`);
    out[k] = v;
  }
  if (u.cost_usd !== null && !isUsageCost(u.cost_usd))
    throw invalid(`cost_usd must be a non-negative number of at most ${USAGE_MAX_COST_USD} or null`);
  out.cost_usd = u.cost_usd;
  return out;
}

/** Whether the store has the ledger's table (a reader of an older store does not migrate it). */
export function hasLedger(version: number): boolean {
  return version >= USAGE_SCHEMA_VERSION;
}

export async function recordUsage(ctx: StateContext, input: UsageInput): Promise<UsageResult> {
  const anchor = stepArg(input.step);
  if (!(USAGE_ROLES as readonly string[]).includes(input.role))
    throw invalid(`unknown role ${JSON.stringify(input.role)}; expected one of ${USAGE_ROLES.join(', ')}`);
  const role = input.role as UsageRole;
  const usage = checkUsage(input.usage);
  const { ref, store } = await ownerPlan(ctx, input);
  const plan_path = ref.plan_path;
  return store.write(async (c) => {
    const now = ctx.clock.now();
    const s = await findStep(c, plan_path, anchor, { lock: true });
    await checkOwner(c, plan_path, s, input.worktree, input.attempt);
    const id = await insertUsage(c, {
      plan_path,
      step_anchor: anchor,
      attempt: s.top.attempt,
      role,
      ...usage,
      recorded_at: now,
    });
    recordEvent(ctx, c, {
      at: now,
      plan_path,
      step_anchor: anchor,
      actor: input.worktree,
      attempt: s.top.attempt,
      details: { usage_id: id, role, ...usage },
    });
    return { recorded: true, step_anchor: anchor, usage_id: id };
  }, OWNER_TX);
}

/** `t` plus one group's sums (a new object). */
export function addGroup(t: UsageTotals, g: UsageGroup): UsageTotals {
  const out: UsageTotals = { ...t, by_role: { ...t.by_role } };
  let tokens = 0;
  for (const k of USAGE_TOKEN_FIELDS) {
    out[k] += g[k];
    tokens += g[k];
  }
  out.tokens += tokens;
  out.reports += g.reports;
  out.unpriced += g.unpriced;
  if (g.cost_usd !== null) out.cost_usd = roundUsd((out.cost_usd ?? 0) + g.cost_usd);
  const role = g.role as UsageRole;
  const r = out.by_role[role] ?? { tokens: 0, cost_usd: null, reports: 0 };
  out.by_role[role] = {
    tokens: r.tokens + tokens,
    cost_usd: g.cost_usd === null ? r.cost_usd : roundUsd((r.cost_usd ?? 0) + g.cost_usd),
    reports: r.reports + g.reports,
  };
  return out;
}

/** The plan's totals, read in the caller's transaction (empty on a store without the ledger). */
export async function planTotals(c: Conn, plan_path: string, version: number): Promise<UsageTotals> {
  if (!hasLedger(version)) return emptyTotals();
  return (await usageByRole(c, plan_path)).reduce(addGroup, emptyTotals());
}

/** The plan's usage totals (what `run`'s budget compares, docs/run.md §7.2). Read-only. */
export async function usageTotals(ctx: StateContext, input: { plan: string }): Promise<UsageTotals> {
  const ref = await resolvePlanRef(ctx, input.plan);
  await requirePlanRow(ctx, ref);
  const store = ctx.store!;
  return store.read((c) => planTotals(c, ref.plan_path, store.version));
}

/**
 * What the driver's watchdog reads of a step's progress through the state (docs/run.md §7.3): a signature
 * of its subtree's item statuses and artifacts, and the newest time they carry. Read-only.
 */
export async function stepActivity(
  ctx: StateContext,
  input: { plan: string; step: string },
): Promise<{ signature: string; last_at: string | null }> {
  const ref = await resolvePlanRef(ctx, input.plan);
  await requirePlanRow(ctx, ref);
  return ctx.store!.read((c) => activityOf(c, ref.plan_path, stepArg(input.step)));
}
