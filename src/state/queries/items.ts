/** SQL for `checklist_items`. Items are ordered by kind (task, test, checkpoint), then ordinal. */
import type { ItemRow } from '../types.js';
import { discardedSql, TERMINAL_SQL } from '../status.js';
import type { Conn } from '../sql/conn.js';

const KIND_ORDER = "CASE kind WHEN 'task' THEN 0 WHEN 'test' THEN 1 ELSE 2 END";

export async function itemsOfStep(c: Conn, plan_path: string, anchor: string): Promise<ItemRow[]> {
  return (await c.all(
    `SELECT * FROM checklist_items WHERE plan_path = ? AND step_anchor = ? ORDER BY ${KIND_ORDER}, ordinal`,
    [plan_path, anchor],
  )) as ItemRow[];
}

/**
 * Items of a top-level step and all its descendants. The subtree's steps first (CROSS JOIN fixes SQLite's
 * loop order; PostgreSQL plans it as a plain join): led by the items, SQLite read every item of the plan.
 */
export async function itemsOfSubtree(c: Conn, plan_path: string, top_anchor: string): Promise<ItemRow[]> {
  return (await c.all(
    `SELECT i.* FROM steps s CROSS JOIN checklist_items i
     WHERE i.plan_path = s.plan_path AND i.step_anchor = s.anchor AND s.plan_path = ? AND s.top_anchor = ?
     ORDER BY s.step_index, ${KIND_ORDER.replace('kind', 'i.kind')}, i.ordinal`,
    [plan_path, top_anchor],
  )) as ItemRow[];
}

export async function itemsOfPlan(c: Conn, plan_path: string): Promise<ItemRow[]> {
  return (await c.all(
    `SELECT i.* FROM checklist_items i JOIN steps s ON s.plan_path = i.plan_path AND s.anchor = i.step_anchor
     WHERE s.plan_path = ? ORDER BY s.step_index, ${KIND_ORDER.replace('kind', 'i.kind')}, i.ordinal`,
    [plan_path],
  )) as ItemRow[];
}

export async function insertItem(
  c: Conn,
  i: Pick<
    ItemRow,
    'plan_path' | 'step_anchor' | 'kind' | 'ordinal' | 'depth' | 'text' | 'status' | 'reason' | 'updated_at'
  >,
): Promise<void> {
  await c.run(
    `INSERT INTO checklist_items (plan_path, step_anchor, kind, ordinal, depth, text, status, reason, updated_at)
     VALUES (@plan_path, @step_anchor, @kind, @ordinal, @depth, @text, @status, @reason, @updated_at)`,
    i,
  );
}

export async function setItemStatus(
  c: Conn,
  id: number,
  status: string,
  reason: string | null,
  now: string,
): Promise<void> {
  await c.run('UPDATE checklist_items SET status = ?, reason = ?, updated_at = ? WHERE id = ?', [
    status,
    reason,
    now,
    id,
  ]);
}

export async function setItemProse(c: Conn, id: number, text: string, depth: number): Promise<void> {
  await c.run('UPDATE checklist_items SET text = ?, depth = ? WHERE id = ?', [text, depth, id]);
}

export async function deleteItemsOfStep(c: Conn, plan_path: string, anchor: string): Promise<void> {
  await c.run('DELETE FROM checklist_items WHERE plan_path = ? AND step_anchor = ?', [plan_path, anchor]);
}

/**
 * Discard an attempt's items: every item of the top-level step and of its non-completed descendants goes back
 * to `open` with its reason cleared. Returns the items that changed (before the change).
 */
export async function discardItems(c: Conn, plan_path: string, top_anchor: string, now: string): Promise<ItemRow[]> {
  const where = `plan_path = @p AND step_anchor IN (SELECT anchor FROM steps WHERE plan_path = @p AND top_anchor = @top AND ${discardedSql()})
       AND (status <> 'open' OR reason IS NOT NULL)`;
  const changed = (await c.all(`SELECT * FROM checklist_items WHERE ${where} ORDER BY id`, {
    p: plan_path,
    top: top_anchor,
  })) as ItemRow[];
  if (changed.length > 0) {
    await c.run(`UPDATE checklist_items SET status = 'open', reason = NULL, updated_at = @now WHERE ${where}`, {
      p: plan_path,
      top: top_anchor,
      now,
    });
  }
  return changed;
}

/** Every non-terminal item of the given steps becomes completed; returns how many changed. */
export async function completeNonTerminal(c: Conn, plan_path: string, anchors: string[], now: string): Promise<number> {
  const sql = `UPDATE checklist_items SET status = 'completed', updated_at = ? WHERE plan_path = ? AND step_anchor = ? AND status NOT IN ${TERMINAL_SQL}`;
  // One statement per step, sent together (pipelined on PostgreSQL).
  const counts = await Promise.all(anchors.map((a) => c.run(sql, [now, plan_path, a])));
  return counts.reduce((n, k) => n + k, 0);
}

/** Non-terminal items of one step (for strict completion). */
export async function openItemsOfStep(c: Conn, plan_path: string, anchor: string): Promise<ItemRow[]> {
  return (await c.all(
    `SELECT * FROM checklist_items WHERE plan_path = ? AND step_anchor = ? AND status NOT IN ${TERMINAL_SQL} ORDER BY ${KIND_ORDER}, ordinal`,
    [plan_path, anchor],
  )) as ItemRow[];
}

export async function plansItemTotals(
  c: Conn,
  plan_path: string,
): Promise<{ total: number; done: number; deferred: number }> {
  const r = (await c.get(
    `SELECT COUNT(*) AS total, COALESCE(SUM(CASE WHEN status IN ${TERMINAL_SQL} THEN 1 ELSE 0 END), 0) AS done,
       COALESCE(SUM(CASE WHEN status = 'deferred' THEN 1 ELSE 0 END), 0) AS deferred
     FROM checklist_items WHERE plan_path = ?`,
    [plan_path],
  )) as { total: number | string; done: number | string; deferred: number | string };
  return { total: Number(r.total), done: Number(r.done), deferred: Number(r.deferred) };
}
