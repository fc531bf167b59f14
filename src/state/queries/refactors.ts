/** SQL for `step_refactors` (docs/kernel.md §7.2). */
import type { RefactorRow } from '../types.js';
import { discardedSql, REFACTOR_DONE_SQL } from '../status.js';
import type { Conn } from '../sql/conn.js';

// The JSON edits of result_json, one per dialect (the column is text on both).
/** The old result under `previous`, an older `previous` dropped. */
const PREVIOUS_JSON = {
  sqlite: "json_object('previous', json_remove(json(result_json), '$.previous'))",
  postgres: "jsonb_build_object('previous', result_json::jsonb - 'previous')::text",
} as const;
/** A pending write's marker. */
const PENDING_JSON = {
  sqlite: "json_extract(result_json, '$.pending')",
  postgres: "(result_json::jsonb -> 'pending')",
} as const;
/** Skipped: the pending marker dropped, `skipped_reason` set to @reason. */
const SKIPPED_JSON = {
  sqlite: "json_set(json_remove(COALESCE(result_json, '{}'), '$.pending'), '$.skipped_reason', @reason)",
  postgres:
    "jsonb_set(COALESCE(result_json, '{}')::jsonb - 'pending', '{skipped_reason}', to_jsonb(@reason::text))::text",
} as const;

export async function refactorsOfStep(c: Conn, plan_path: string, anchor: string): Promise<RefactorRow[]> {
  return (await c.all('SELECT * FROM step_refactors WHERE plan_path = ? AND step_anchor = ? ORDER BY ordinal', [
    plan_path,
    anchor,
  ])) as RefactorRow[];
}

/**
 * The plan's refactor rows; with `top_anchor`, those of that top-level step and its substeps only, the
 * subtree's steps first (CROSS JOIN fixes SQLite's loop order, as itemsOfSubtree).
 */
export async function refactorsOfPlan(c: Conn, plan_path: string, top_anchor?: string): Promise<RefactorRow[]> {
  if (top_anchor !== undefined)
    return (await c.all(
      `SELECT r.* FROM steps s CROSS JOIN step_refactors r
       WHERE r.plan_path = s.plan_path AND r.step_anchor = s.anchor AND s.plan_path = ? AND s.top_anchor = ?
       ORDER BY s.step_index, r.ordinal`,
      [plan_path, top_anchor],
    )) as RefactorRow[];
  return (await c.all(
    `SELECT r.* FROM step_refactors r JOIN steps s ON s.plan_path = r.plan_path AND s.anchor = r.step_anchor
     WHERE r.plan_path = ? ORDER BY s.step_index, r.ordinal`,
    [plan_path],
  )) as RefactorRow[];
}

export async function openRefactorsOfStep(c: Conn, plan_path: string, anchor: string): Promise<RefactorRow[]> {
  return (await c.all(
    `SELECT * FROM step_refactors WHERE plan_path = ? AND step_anchor = ? AND status NOT IN ${REFACTOR_DONE_SQL} ORDER BY ordinal`,
    [plan_path, anchor],
  )) as RefactorRow[];
}

export async function insertRefactor(
  c: Conn,
  r: Pick<
    RefactorRow,
    | 'plan_path'
    | 'step_anchor'
    | 'ordinal'
    | 'op_text'
    | 'status'
    | 'snapshot_before'
    | 'snapshot_after'
    | 'exit_code'
    | 'result_json'
    | 'updated_at'
  >,
): Promise<void> {
  await c.run(
    `INSERT INTO step_refactors (plan_path, step_anchor, ordinal, op_text, status, snapshot_before, snapshot_after, exit_code, result_json, updated_at)
     VALUES (@plan_path, @step_anchor, @ordinal, @op_text, @status, @snapshot_before, @snapshot_after, @exit_code, @result_json, @updated_at)`,
    r,
  );
}

export async function deleteRefactorsOfStep(c: Conn, plan_path: string, anchor: string): Promise<void> {
  await c.run('DELETE FROM step_refactors WHERE plan_path = ? AND step_anchor = ?', [plan_path, anchor]);
}

/**
 * Discarded attempt (docs/kernel.md §7.2): rows of the top-level step and its non-completed descendants that
 * are applied or failed, or open with a pending write, return to open; snapshots are cleared and the old
 * result is kept under `previous` (one level: an older `previous` is dropped, so rows stay compact).
 * Skipped rows stay skipped. Returns how many rows changed.
 */
export async function discardRefactors(c: Conn, plan_path: string, top_anchor: string, now: string): Promise<number> {
  return await c.run(
    `UPDATE step_refactors SET status = 'open', snapshot_before = NULL, snapshot_after = NULL, exit_code = NULL,
       result_json = CASE WHEN result_json IS NULL THEN NULL ELSE ${PREVIOUS_JSON[c.dialect]} END,
       updated_at = @now
     WHERE plan_path = @p
       AND step_anchor IN (SELECT anchor FROM steps WHERE plan_path = @p AND top_anchor = @top AND ${discardedSql()})
       AND (status IN ('applied', 'failed') OR (status = 'open' AND ${PENDING_JSON[c.dialect]} IS NOT NULL))`,
    { p: plan_path, top: top_anchor, now },
  );
}

/** complete --force: the remaining rows of the given steps become skipped with `skipped_reason`. */
export function skipRemaining(c: Conn, plan_path: string, anchors: string[], reason: string, now: string): void {
  const sql = `UPDATE step_refactors SET status = 'skipped', updated_at = @now,
       result_json = ${SKIPPED_JSON[c.dialect]}
     WHERE plan_path = @p AND step_anchor = @a AND status NOT IN ${REFACTOR_DONE_SQL}`;
  for (const a of anchors) c.later(sql, { p: plan_path, a, reason, now });
}

export async function getRefactor(
  c: Conn,
  plan_path: string,
  anchor: string,
  ordinal: number,
): Promise<RefactorRow | undefined> {
  return (await c.get('SELECT * FROM step_refactors WHERE plan_path = ? AND step_anchor = ? AND ordinal = ?', [
    plan_path,
    anchor,
    ordinal,
  ])) as RefactorRow | undefined;
}

/** Overwrite a row's mutable columns (the caller decides the transition). Returns rows changed (0 or 1). */
export async function setRefactor(
  c: Conn,
  r: Pick<
    RefactorRow,
    | 'plan_path'
    | 'step_anchor'
    | 'ordinal'
    | 'status'
    | 'snapshot_before'
    | 'snapshot_after'
    | 'exit_code'
    | 'result_json'
    | 'updated_at'
  >,
): Promise<number> {
  return await c.run(
    `UPDATE step_refactors SET status = @status, snapshot_before = @snapshot_before, snapshot_after = @snapshot_after,
       exit_code = @exit_code, result_json = @result_json, updated_at = @updated_at
     WHERE plan_path = @plan_path AND step_anchor = @step_anchor AND ordinal = @ordinal`,
    r,
  );
}
