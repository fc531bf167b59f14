/** SQL for `checklist_items`. Items are ordered by kind (task, test, checkpoint), then ordinal. */
import type { ItemRow } from '../types.js';
import { TERMINAL_SQL } from '../status.js';
import { stmt, type Db } from './stmt.js';

const KIND_ORDER = "CASE kind WHEN 'task' THEN 0 WHEN 'test' THEN 1 ELSE 2 END";

export function itemsOfStep(db: Db, plan_path: string, anchor: string): ItemRow[] {
  return stmt(
    db,
    `SELECT * FROM checklist_items WHERE plan_path = ? AND step_anchor = ? ORDER BY ${KIND_ORDER}, ordinal`,
  ).all(plan_path, anchor) as ItemRow[];
}

/** Items of a top-level step and all its descendants. */
export function itemsOfSubtree(db: Db, plan_path: string, top_anchor: string): ItemRow[] {
  return stmt(
    db,
    `SELECT i.* FROM checklist_items i JOIN steps s ON s.plan_path = i.plan_path AND s.anchor = i.step_anchor
     WHERE s.plan_path = ? AND s.top_anchor = ? ORDER BY s.step_index, ${KIND_ORDER.replace('kind', 'i.kind')}, i.ordinal`,
  ).all(plan_path, top_anchor) as ItemRow[];
}

export function itemsOfPlan(db: Db, plan_path: string): ItemRow[] {
  return stmt(
    db,
    `SELECT i.* FROM checklist_items i JOIN steps s ON s.plan_path = i.plan_path AND s.anchor = i.step_anchor
     WHERE s.plan_path = ? ORDER BY s.step_index, ${KIND_ORDER.replace('kind', 'i.kind')}, i.ordinal`,
  ).all(plan_path) as ItemRow[];
}

/** (step, kind, status) → count for a whole plan. */
export function itemCountsOfPlan(
  db: Db,
  plan_path: string,
): { step_anchor: string; kind: string; status: string; n: number }[] {
  return stmt(
    db,
    'SELECT step_anchor, kind, status, COUNT(*) AS n FROM checklist_items WHERE plan_path = ? GROUP BY step_anchor, kind, status',
  ).all(plan_path) as { step_anchor: string; kind: string; status: string; n: number }[];
}

export function insertItem(
  db: Db,
  i: Pick<
    ItemRow,
    'plan_path' | 'step_anchor' | 'kind' | 'ordinal' | 'depth' | 'text' | 'status' | 'reason' | 'updated_at'
  >,
): void {
  stmt(
    db,
    `INSERT INTO checklist_items (plan_path, step_anchor, kind, ordinal, depth, text, status, reason, updated_at)
     VALUES (@plan_path, @step_anchor, @kind, @ordinal, @depth, @text, @status, @reason, @updated_at)`,
  ).run(i);
}

export function setItemStatus(db: Db, id: number, status: string, reason: string | null, now: string): void {
  stmt(db, 'UPDATE checklist_items SET status = ?, reason = ?, updated_at = ? WHERE id = ?').run(
    status,
    reason,
    now,
    id,
  );
}

export function setItemProse(db: Db, id: number, text: string, depth: number): void {
  stmt(db, 'UPDATE checklist_items SET text = ?, depth = ? WHERE id = ?').run(text, depth, id);
}

export function deleteItemsOfStep(db: Db, plan_path: string, anchor: string): void {
  stmt(db, 'DELETE FROM checklist_items WHERE plan_path = ? AND step_anchor = ?').run(plan_path, anchor);
}

/**
 * Discard an attempt's items: every item of the top-level step and of its non-completed descendants goes back
 * to `open` with its reason cleared. Returns the items that changed (before the change).
 */
export function discardItems(db: Db, plan_path: string, top_anchor: string, now: string): ItemRow[] {
  const where = `plan_path = @p AND step_anchor IN (SELECT anchor FROM steps WHERE plan_path = @p AND top_anchor = @top AND status <> 'completed')
       AND (status <> 'open' OR reason IS NOT NULL)`;
  const changed = stmt(db, `SELECT * FROM checklist_items WHERE ${where} ORDER BY id`).all({
    p: plan_path,
    top: top_anchor,
  }) as ItemRow[];
  if (changed.length > 0) {
    stmt(db, `UPDATE checklist_items SET status = 'open', reason = NULL, updated_at = @now WHERE ${where}`).run({
      p: plan_path,
      top: top_anchor,
      now,
    });
  }
  return changed;
}

/** Every non-terminal item of the given steps becomes completed; returns how many changed. */
export function completeNonTerminal(db: Db, plan_path: string, anchors: string[], now: string): number {
  let n = 0;
  const s = stmt(
    db,
    `UPDATE checklist_items SET status = 'completed', updated_at = ? WHERE plan_path = ? AND step_anchor = ? AND status NOT IN ${TERMINAL_SQL}`,
  );
  for (const a of anchors) n += s.run(now, plan_path, a).changes;
  return n;
}

/** Non-terminal items of one step (for strict completion). */
export function openItemsOfStep(db: Db, plan_path: string, anchor: string): ItemRow[] {
  return stmt(
    db,
    `SELECT * FROM checklist_items WHERE plan_path = ? AND step_anchor = ? AND status NOT IN ${TERMINAL_SQL} ORDER BY ${KIND_ORDER}, ordinal`,
  ).all(plan_path, anchor) as ItemRow[];
}

export function plansItemTotals(db: Db, plan_path: string): { total: number; done: number } {
  return stmt(
    db,
    `SELECT COUNT(*) AS total, COALESCE(SUM(status IN ${TERMINAL_SQL}), 0) AS done FROM checklist_items WHERE plan_path = ?`,
  ).get(plan_path) as { total: number; done: number };
}
