/**
 * SQL for the dependency edges of steps: `step_deps` as written in the plan, `step_lifted_deps` between
 * top-level steps, and the `unmet_deps` count on `steps` that readiness reads (docs/state.md §3).
 */
import type { Conn } from '../sql/conn.js';

export async function insertDep(c: Conn, plan_path: string, step_anchor: string, depends_on: string): Promise<void> {
  await c.run('INSERT INTO step_deps (plan_path, step_anchor, depends_on) VALUES (?, ?, ?) ON CONFLICT DO NOTHING', [
    plan_path,
    step_anchor,
    depends_on,
  ]);
}

export async function insertLiftedDep(
  c: Conn,
  plan_path: string,
  step_anchor: string,
  depends_on: string,
): Promise<void> {
  await c.run(
    'INSERT INTO step_lifted_deps (plan_path, step_anchor, depends_on) VALUES (?, ?, ?) ON CONFLICT DO NOTHING',
    [plan_path, step_anchor, depends_on],
  );
}

export async function deleteDeps(c: Conn, plan_path: string): Promise<void> {
  await c.run('DELETE FROM step_deps WHERE plan_path = ?', [plan_path]);
  await c.run('DELETE FROM step_lifted_deps WHERE plan_path = ?', [plan_path]);
}

/**
 * The dependencies of the plan's steps, each step's in its targets' order; with `top_anchor`, those of that
 * top-level step and its substeps only (`state show --step`: the subtree's rows, not the plan's).
 */
export async function depsOfPlan(
  c: Conn,
  plan_path: string,
  top_anchor?: string,
): Promise<{ step_anchor: string; depends_on: string }[]> {
  return depRows(c, 'step_deps', plan_path, top_anchor);
}

export async function liftedDepsOfPlan(
  c: Conn,
  plan_path: string,
  top_anchor?: string,
): Promise<{ step_anchor: string; depends_on: string }[]> {
  return depRows(c, 'step_lifted_deps', plan_path, top_anchor);
}

async function depRows(
  c: Conn,
  table: 'step_deps' | 'step_lifted_deps',
  plan_path: string,
  top_anchor: string | undefined,
): Promise<{ step_anchor: string; depends_on: string }[]> {
  const mine =
    top_anchor === undefined
      ? ''
      : ' AND d.step_anchor IN (SELECT anchor FROM steps WHERE plan_path = @p AND top_anchor = @top)';
  return (await c.all(
    `SELECT d.step_anchor, d.depends_on FROM ${table} d JOIN steps t ON t.plan_path = d.plan_path AND t.anchor = d.depends_on
     WHERE d.plan_path = @p${mine} ORDER BY d.step_anchor, t.step_index`,
    top_anchor === undefined ? { p: plan_path } : { p: plan_path, top: top_anchor },
  )) as { step_anchor: string; depends_on: string }[];
}

/** Lifted dependencies of one top-level step that are not completed, in step_index order. */
export async function unmetLiftedDeps(c: Conn, plan_path: string, anchor: string): Promise<string[]> {
  return (
    (await c.all(
      `SELECT t.anchor FROM step_lifted_deps d JOIN steps t ON t.plan_path = d.plan_path AND t.anchor = d.depends_on
       WHERE d.plan_path = ? AND d.step_anchor = ? AND t.status <> 'completed' ORDER BY t.step_index`,
      [plan_path, anchor],
    )) as { anchor: string }[]
  ).map((r) => r.anchor);
}

/** A top-level step completed: each dependent has one unmet lifted dependency fewer. */
export function releaseDependents(c: Conn, plan_path: string, anchor: string): void {
  c.later(
    `UPDATE steps SET unmet_deps = unmet_deps - 1
     WHERE plan_path = @p AND anchor IN (SELECT step_anchor FROM step_lifted_deps WHERE plan_path = @p AND depends_on = @a)`,
    { p: plan_path, a: anchor },
  );
}

/** Recompute every row's unmet_deps from the lifted edges (init). */
export async function recomputeUnmet(c: Conn, plan_path: string): Promise<void> {
  await c.run(
    `UPDATE steps SET unmet_deps = (
       SELECT COUNT(*) FROM step_lifted_deps d JOIN steps t ON t.plan_path = d.plan_path AND t.anchor = d.depends_on
       WHERE d.plan_path = steps.plan_path AND d.step_anchor = steps.anchor AND t.status <> 'completed')
     WHERE plan_path = ?`,
    [plan_path],
  );
}
