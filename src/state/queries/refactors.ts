/** SQL for `step_refactors` (05-kernel.md §7.2). */
import type { RefactorRow } from '../types.js';
import { REFACTOR_DONE_SQL } from '../status.js';
import { stmt, type Db } from './stmt.js';

export function refactorsOfStep(db: Db, plan_path: string, anchor: string): RefactorRow[] {
  return stmt(db, 'SELECT * FROM step_refactors WHERE plan_path = ? AND step_anchor = ? ORDER BY ordinal').all(
    plan_path,
    anchor,
  ) as RefactorRow[];
}

export function refactorsOfPlan(db: Db, plan_path: string): RefactorRow[] {
  return stmt(
    db,
    `SELECT r.* FROM step_refactors r JOIN steps s ON s.plan_path = r.plan_path AND s.anchor = r.step_anchor
     WHERE r.plan_path = ? ORDER BY s.step_index, r.ordinal`,
  ).all(plan_path) as RefactorRow[];
}

export function openRefactorsOfStep(db: Db, plan_path: string, anchor: string): RefactorRow[] {
  return stmt(
    db,
    `SELECT * FROM step_refactors WHERE plan_path = ? AND step_anchor = ? AND status NOT IN ${REFACTOR_DONE_SQL} ORDER BY ordinal`,
  ).all(plan_path, anchor) as RefactorRow[];
}

export function insertRefactor(
  db: Db,
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
): void {
  stmt(
    db,
    `INSERT INTO step_refactors (plan_path, step_anchor, ordinal, op_text, status, snapshot_before, snapshot_after, exit_code, result_json, updated_at)
     VALUES (@plan_path, @step_anchor, @ordinal, @op_text, @status, @snapshot_before, @snapshot_after, @exit_code, @result_json, @updated_at)`,
  ).run(r);
}

export function deleteRefactorsOfStep(db: Db, plan_path: string, anchor: string): void {
  stmt(db, 'DELETE FROM step_refactors WHERE plan_path = ? AND step_anchor = ?').run(plan_path, anchor);
}

/**
 * Discarded attempt (05-kernel.md §7.2): rows of the top-level step and its non-completed descendants that
 * are applied or failed, or open with a pending write, return to open; snapshots are cleared and the old
 * result is kept under `previous` (one level: an older `previous` is dropped, so rows stay compact).
 * Skipped rows stay skipped. Returns how many rows changed.
 */
export function discardRefactors(db: Db, plan_path: string, top_anchor: string, now: string): number {
  return stmt(
    db,
    `UPDATE step_refactors SET status = 'open', snapshot_before = NULL, snapshot_after = NULL, exit_code = NULL,
       result_json = CASE WHEN result_json IS NULL THEN NULL ELSE json_object('previous', json_remove(json(result_json), '$.previous')) END,
       updated_at = @now
     WHERE plan_path = @p
       AND step_anchor IN (SELECT anchor FROM steps WHERE plan_path = @p AND top_anchor = @top AND status <> 'completed')
       AND (status IN ('applied', 'failed') OR (status = 'open' AND json_extract(result_json, '$.pending') IS NOT NULL))`,
  ).run({ p: plan_path, top: top_anchor, now }).changes;
}

/** complete --force: the remaining rows of the given steps become skipped with `skipped_reason`. */
export function skipRemaining(db: Db, plan_path: string, anchors: string[], reason: string, now: string): number {
  const s = stmt(
    db,
    `UPDATE step_refactors SET status = 'skipped', updated_at = @now,
       result_json = json_set(json_remove(COALESCE(result_json, '{}'), '$.pending'), '$.skipped_reason', @reason)
     WHERE plan_path = @p AND step_anchor = @a AND status NOT IN ${REFACTOR_DONE_SQL}`,
  );
  let n = 0;
  for (const a of anchors) n += s.run({ p: plan_path, a, reason, now }).changes;
  return n;
}

export function getRefactor(db: Db, plan_path: string, anchor: string, ordinal: number): RefactorRow | undefined {
  return stmt(db, 'SELECT * FROM step_refactors WHERE plan_path = ? AND step_anchor = ? AND ordinal = ?').get(
    plan_path,
    anchor,
    ordinal,
  ) as RefactorRow | undefined;
}

/** Overwrite a row's mutable columns (the caller decides the transition). Returns rows changed (0 or 1). */
export function setRefactor(
  db: Db,
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
): number {
  return stmt(
    db,
    `UPDATE step_refactors SET status = @status, snapshot_before = @snapshot_before, snapshot_after = @snapshot_after,
       exit_code = @exit_code, result_json = @result_json, updated_at = @updated_at
     WHERE plan_path = @plan_path AND step_anchor = @step_anchor AND ordinal = @ordinal`,
  ).run(r).changes;
}
