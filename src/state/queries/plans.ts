/** SQL for the `plans` table. */
import type { PlanRow } from '../types.js';
import type { PlanStatus } from '../status.js';
import type { Conn } from '../sql/conn.js';

/** Every column but the (large) plan_source. */
const PLAN_COLUMNS =
  'plan_path, plan_hash, structure_hash, phase_title, status, implicit_sequential, steps_total, steps_completed, created_at, updated_at';

export async function getPlan(c: Conn, plan_path: string): Promise<PlanRow | undefined> {
  return (await c.get(`SELECT ${PLAN_COLUMNS} FROM plans WHERE plan_path = ?`, [plan_path])) as PlanRow | undefined;
}

/** Whether the stored plan_source is `bytes`, compared by the database (only the answer crosses). */
export async function planSourceIs(c: Conn, plan_path: string, bytes: Uint8Array): Promise<boolean> {
  const r = (await c.get('SELECT plan_source = ? AS same FROM plans WHERE plan_path = ?', [bytes, plan_path])) as
    { same: number | boolean } | undefined;
  return r?.same === 1 || r?.same === true;
}

export async function listPlans(c: Conn): Promise<PlanRow[]> {
  return (await c.all(`SELECT ${PLAN_COLUMNS} FROM plans ORDER BY plan_path`)) as PlanRow[];
}

/** Every plan with a row: such a plan names a plan even when its file is gone. */
export async function listPlanPaths(c: Conn): Promise<string[]> {
  return ((await c.all('SELECT plan_path FROM plans ORDER BY plan_path')) as { plan_path: string }[]).map(
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

export async function insertPlan(c: Conn, p: PlanHeader): Promise<void> {
  await c.run(
    `INSERT INTO plans (plan_path, plan_hash, plan_source, structure_hash, phase_title, status, implicit_sequential, created_at, updated_at)
     VALUES (@plan_path, @plan_hash, @plan_source, @structure_hash, @phase_title, 'active', @implicit, @now, @now)`,
    { ...p, implicit: p.implicit_sequential ? 1 : 0 },
  );
}

/** After a re-initialization: new hashes and title, status recomputed by the caller. */
export async function updatePlanHeader(c: Conn, p: PlanHeader): Promise<void> {
  await c.run(
    `UPDATE plans SET plan_hash = @plan_hash, plan_source = @plan_source, structure_hash = @structure_hash, phase_title = @phase_title,
       implicit_sequential = @implicit, updated_at = @now WHERE plan_path = @plan_path`,
    { ...p, implicit: p.implicit_sequential ? 1 : 0 },
  );
}

/** A prose-only change: new bytes, their hash and the title (the structure hash is unchanged). */
export async function refreshPlanProse(
  c: Conn,
  plan_path: string,
  plan_hash: string,
  plan_source: Uint8Array,
  phase_title: string | null,
  now: string,
): Promise<void> {
  await c.run('UPDATE plans SET plan_hash = ?, plan_source = ?, phase_title = ?, updated_at = ? WHERE plan_path = ?', [
    plan_hash,
    plan_source,
    phase_title,
    now,
    plan_path,
  ]);
}

/** Recount the top-level steps (after init). */
export async function recountPlan(c: Conn, plan_path: string): Promise<void> {
  await c.run(
    `UPDATE plans SET
       steps_total = (SELECT COUNT(*) FROM steps WHERE plan_path = @p AND parent_anchor IS NULL),
       steps_completed = (SELECT COUNT(*) FROM steps WHERE plan_path = @p AND parent_anchor IS NULL AND status = 'completed')
     WHERE plan_path = @p`,
    { p: plan_path },
  );
}

/** One more top-level step completed. */
/** One more top-level step completed: the plan's row as it is now. */
export async function countCompleted(c: Conn, plan_path: string, now: string): Promise<PlanRow> {
  return (await c.get(
    `UPDATE plans SET steps_completed = steps_completed + 1, updated_at = ? WHERE plan_path = ? RETURNING ${PLAN_COLUMNS}`,
    [now, plan_path],
  )) as PlanRow;
}

export async function setPlanStatus(c: Conn, plan_path: string, status: PlanStatus, now: string): Promise<number> {
  return await c.run('UPDATE plans SET status = ?, updated_at = ? WHERE plan_path = ? AND status <> ?', [
    status,
    now,
    plan_path,
    status,
  ]);
}

/** Delete a plan and every row that belongs to it, events included (state prune --purge). */
export async function purgePlan(c: Conn, plan_path: string): Promise<void> {
  for (const t of [
    'events',
    'step_artifacts',
    'step_usage',
    'step_refactors',
    'checklist_items',
    'step_lifted_deps',
    'step_deps',
  ]) {
    await c.run(`DELETE FROM ${t} WHERE plan_path = ?`, [plan_path]);
  }
  // Children before parents (self-referencing foreign key).
  const del = 'DELETE FROM steps WHERE plan_path = ? AND depth = ?';
  const maxDepth =
    ((await c.get('SELECT MAX(depth) AS d FROM steps WHERE plan_path = ?', [plan_path])) as { d: number | null }).d ??
    0;
  for (let d = maxDepth; d >= 0; d--) await c.run(del, [plan_path, d]);
  await c.run('DELETE FROM plans WHERE plan_path = ?', [plan_path]);
}

/** Where a plan integrates (docs/state.md §8.4): its kind and remote name or clone; null when nothing is recorded. */
export interface TargetRow {
  integration_kind: 'local' | 'remote' | null;
  integration_where: string | null;
}

/** The plan's recorded integration target; callers check the store's schema has the columns (version 4). */
export async function getIntegrationTarget(c: Conn, plan_path: string): Promise<TargetRow | undefined> {
  return await c.get<TargetRow>('SELECT integration_kind, integration_where FROM plans WHERE plan_path = ?', [
    plan_path,
  ]);
}

export async function setIntegrationTarget(
  c: Conn,
  plan_path: string,
  kind: 'local' | 'remote',
  where: string,
): Promise<void> {
  await c.run('UPDATE plans SET integration_kind = ?, integration_where = ? WHERE plan_path = ?', [
    kind,
    where,
    plan_path,
  ]);
}

/** The flags of the plan's last run that ended (docs/state.md §2), as stored: a JSON array, and when it ended. */
export interface LastRunRow {
  last_run_flags: string | null;
  last_run_ended_at: string | null;
}

/** The plan's last run; callers check the store's schema has the columns (version 5). */
export async function getLastRun(c: Conn, plan_path: string): Promise<LastRunRow | undefined> {
  return await c.get<LastRunRow>('SELECT last_run_flags, last_run_ended_at FROM plans WHERE plan_path = ?', [
    plan_path,
  ]);
}

/** Replaces the plan's last run (the newest run to end wins). */
export async function setLastRun(c: Conn, plan_path: string, flags: string, ended_at: string): Promise<void> {
  await c.run('UPDATE plans SET last_run_flags = ?, last_run_ended_at = ? WHERE plan_path = ?', [
    flags,
    ended_at,
    plan_path,
  ]);
}
