/** SQL of the ledger (`step_usage`, docs/state.md §2) and of a step's activity (the driver's watchdog). */
import type { Conn } from '../sql/conn.js';
import type { UsageRow } from '../types.js';

export async function insertUsage(c: Conn, u: Omit<UsageRow, 'id'>): Promise<number> {
  return Number(
    (await c.get<{ id: number }>(
      `INSERT INTO step_usage (plan_path, step_anchor, attempt, role, input_tokens, output_tokens, cache_read_tokens,
         cache_write_tokens, cost_usd, recorded_at)
       VALUES (@plan_path, @step_anchor, @attempt, @role, @input_tokens, @output_tokens, @cache_read_tokens,
         @cache_write_tokens, @cost_usd, @recorded_at) RETURNING id`,
      u,
    ))!.id,
  );
}

/** The sums of one (step, role): PostgreSQL returns BIGINT and NUMERIC sums as text, so every one is a Number. */
export interface UsageGroup {
  step_anchor: string;
  role: string;
  reports: number;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  /** Null when no report of the group had a cost. */
  cost_usd: number | null;
  unpriced: number;
}

const SUMS = `COUNT(*) AS reports, SUM(input_tokens) AS input_tokens, SUM(output_tokens) AS output_tokens,
  SUM(cache_read_tokens) AS cache_read_tokens, SUM(cache_write_tokens) AS cache_write_tokens,
  SUM(cost_usd) AS cost_usd, SUM(CASE WHEN cost_usd IS NULL THEN 1 ELSE 0 END) AS unpriced`;

function group(r: Record<string, unknown>): UsageGroup {
  const n = (v: unknown) => (v === null || v === undefined ? 0 : Number(v));
  return {
    step_anchor: String(r.step_anchor ?? ''),
    role: String(r.role),
    reports: n(r.reports),
    input_tokens: n(r.input_tokens),
    output_tokens: n(r.output_tokens),
    cache_read_tokens: n(r.cache_read_tokens),
    cache_write_tokens: n(r.cache_write_tokens),
    cost_usd: r.cost_usd === null || r.cost_usd === undefined ? null : Number(r.cost_usd),
    unpriced: n(r.unpriced),
  };
}

/** The plan's usage summed per step and role (one indexed scan of the plan's rows). */
export async function usageByStep(c: Conn, plan_path: string): Promise<UsageGroup[]> {
  const rows = await c.all<Record<string, unknown>>(
    `SELECT step_anchor, role, ${SUMS} FROM step_usage WHERE plan_path = ? GROUP BY step_anchor, role`,
    [plan_path],
  );
  return rows.map(group);
}

/** The plan's usage summed per role. */
export async function usageByRole(c: Conn, plan_path: string): Promise<UsageGroup[]> {
  const rows = await c.all<Record<string, unknown>>(
    `SELECT role, ${SUMS} FROM step_usage WHERE plan_path = ? GROUP BY role`,
    [plan_path],
  );
  return rows.map(group);
}

/**
 * What changes when a step's implementer makes progress through the state: the item statuses of its subtree
 * and its artifacts, as one signature, with the newest time either carries.
 */
export async function stepActivity(
  c: Conn,
  plan_path: string,
  top_anchor: string,
): Promise<{ signature: string; last_at: string | null }> {
  const items = await c.all<{ status: string; n: number | string; last_at: string | null }>(
    `SELECT i.status AS status, COUNT(*) AS n, MAX(i.updated_at) AS last_at
       FROM checklist_items i JOIN steps s ON s.plan_path = i.plan_path AND s.anchor = i.step_anchor
      WHERE i.plan_path = ? AND s.top_anchor = ? GROUP BY i.status ORDER BY i.status`,
    [plan_path, top_anchor],
  );
  const arts = await c.get<{ n: number | string; last_at: string | null }>(
    `SELECT COUNT(*) AS n, MAX(a.recorded_at) AS last_at
       FROM step_artifacts a JOIN steps s ON s.plan_path = a.plan_path AND s.anchor = a.step_anchor
      WHERE a.plan_path = ? AND s.top_anchor = ?`,
    [plan_path, top_anchor],
  );
  const times = [...items.map((i) => i.last_at), arts?.last_at ?? null].filter((t): t is string => t !== null);
  return {
    signature: `${items.map((i) => `${i.status}:${Number(i.n)}:${i.last_at ?? ''}`).join(',')}|${Number(arts?.n ?? 0)}`,
    last_at: times.length ? times.sort().at(-1)! : null,
  };
}
