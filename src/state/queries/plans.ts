/** SQL for the `plans` table. */
import type { PlanRow } from '../types.js';
import type { PlanStatus } from '../status.js';
import { stmt, type Db } from './stmt.js';

/** Every column but the (large) plan_source. */
const PLAN_COLUMNS =
  'plan_path, plan_hash, structure_hash, phase_title, status, implicit_sequential, steps_total, steps_completed, created_at, updated_at';

export function getPlan(db: Db, plan_path: string): PlanRow | undefined {
  return stmt(db, `SELECT ${PLAN_COLUMNS} FROM plans WHERE plan_path = ?`).get(plan_path) as PlanRow | undefined;
}

export function listPlans(db: Db): PlanRow[] {
  return stmt(db, `SELECT ${PLAN_COLUMNS} FROM plans ORDER BY plan_path`).all() as PlanRow[];
}

/** The plan's bytes as last initialized or refreshed. */
export function planSource(db: Db, plan_path: string): Buffer | null {
  const r = stmt(db, 'SELECT plan_source FROM plans WHERE plan_path = ?').get(plan_path) as
    { plan_source: Buffer } | undefined;
  return r ? r.plan_source : null;
}

export function listPlanPaths(db: Db): string[] {
  return (stmt(db, 'SELECT plan_path FROM plans ORDER BY plan_path').all() as { plan_path: string }[]).map(
    (r) => r.plan_path,
  );
}

export interface PlanHeader {
  plan_path: string;
  plan_hash: string;
  plan_source: Uint8Array;
  structure_hash: string;
  phase_title: string | null;
  implicit_sequential: boolean;
  now: string;
}

export function insertPlan(db: Db, p: PlanHeader): void {
  stmt(
    db,
    `INSERT INTO plans (plan_path, plan_hash, plan_source, structure_hash, phase_title, status, implicit_sequential, created_at, updated_at)
     VALUES (@plan_path, @plan_hash, @plan_source, @structure_hash, @phase_title, 'active', @implicit, @now, @now)`,
  ).run({ ...p, implicit: p.implicit_sequential ? 1 : 0 });
}

/** After a re-initialization: new hashes and title, status recomputed by the caller. */
export function updatePlanHeader(db: Db, p: PlanHeader): void {
  stmt(
    db,
    `UPDATE plans SET plan_hash = @plan_hash, plan_source = @plan_source, structure_hash = @structure_hash, phase_title = @phase_title,
       implicit_sequential = @implicit, updated_at = @now WHERE plan_path = @plan_path`,
  ).run({ ...p, implicit: p.implicit_sequential ? 1 : 0 });
}

/** A prose-only change: new bytes, their hash and the title (the structure hash is unchanged). */
export function refreshPlanProse(
  db: Db,
  plan_path: string,
  plan_hash: string,
  plan_source: Uint8Array,
  phase_title: string | null,
  now: string,
): void {
  stmt(db, 'UPDATE plans SET plan_hash = ?, plan_source = ?, phase_title = ?, updated_at = ? WHERE plan_path = ?').run(
    plan_hash,
    plan_source,
    phase_title,
    now,
    plan_path,
  );
}

/** Recount the top-level steps (after init). */
export function recountPlan(db: Db, plan_path: string): void {
  stmt(
    db,
    `UPDATE plans SET
       steps_total = (SELECT COUNT(*) FROM steps WHERE plan_path = @p AND parent_anchor IS NULL),
       steps_completed = (SELECT COUNT(*) FROM steps WHERE plan_path = @p AND parent_anchor IS NULL AND status = 'completed')
     WHERE plan_path = @p`,
  ).run({ p: plan_path });
}

/** One more top-level step completed. */
export function countCompleted(db: Db, plan_path: string, now: string): void {
  stmt(db, 'UPDATE plans SET steps_completed = steps_completed + 1, updated_at = ? WHERE plan_path = ?').run(
    now,
    plan_path,
  );
}

export function setPlanStatus(db: Db, plan_path: string, status: PlanStatus, now: string): number {
  return stmt(db, 'UPDATE plans SET status = ?, updated_at = ? WHERE plan_path = ? AND status <> ?').run(
    status,
    now,
    plan_path,
    status,
  ).changes;
}

export function touchPlan(db: Db, plan_path: string, now: string): void {
  stmt(db, 'UPDATE plans SET updated_at = ? WHERE plan_path = ?').run(now, plan_path);
}

/** Delete a plan and every row that belongs to it, events included (state prune --purge). */
export function purgePlan(db: Db, plan_path: string): void {
  for (const t of ['events', 'step_artifacts', 'step_refactors', 'checklist_items', 'step_lifted_deps', 'step_deps']) {
    stmt(db, `DELETE FROM ${t} WHERE plan_path = ?`).run(plan_path);
  }
  // Children before parents (self-referencing foreign key).
  const del = stmt(db, 'DELETE FROM steps WHERE plan_path = ? AND depth = ?');
  const maxDepth =
    (stmt(db, 'SELECT MAX(depth) AS d FROM steps WHERE plan_path = ?').get(plan_path) as { d: number | null }).d ?? 0;
  for (let d = maxDepth; d >= 0; d--) del.run(plan_path, d);
  stmt(db, 'DELETE FROM plans WHERE plan_path = ?').run(plan_path);
}
