/**
 * SQL for the `steps` table and its dependency edges. Transitions are guarded UPDATEs (status and owner in
 * the WHERE clause); callers check `changes`.
 */
import type { StepRow } from '../types.js';
import { expiredSql, HELD_SQL } from '../status.js';
import { stmt, type Db } from './stmt.js';

export function getStep(db: Db, plan_path: string, anchor: string): StepRow | undefined {
  return stmt(db, 'SELECT * FROM steps WHERE plan_path = ? AND anchor = ?').get(plan_path, anchor) as
    StepRow | undefined;
}

export function stepsOfPlan(db: Db, plan_path: string): StepRow[] {
  return stmt(db, 'SELECT * FROM steps WHERE plan_path = ? ORDER BY step_index').all(plan_path) as StepRow[];
}

export function topSteps(db: Db, plan_path: string): StepRow[] {
  return stmt(db, 'SELECT * FROM steps WHERE plan_path = ? AND parent_anchor IS NULL ORDER BY step_index').all(
    plan_path,
  ) as StepRow[];
}

/** A top-level step and all its descendants, in step_index order. */
export function subtree(db: Db, plan_path: string, top_anchor: string): StepRow[] {
  return stmt(db, 'SELECT * FROM steps WHERE plan_path = ? AND top_anchor = ? ORDER BY step_index').all(
    plan_path,
    top_anchor,
  ) as StepRow[];
}

/** The top-level step this worktree holds (claimed or in progress, live or expired), if any. */
export function heldBy(db: Db, plan_path: string, worktree: string): StepRow | undefined {
  return stmt(
    db,
    `SELECT * FROM steps WHERE plan_path = ? AND parent_anchor IS NULL AND status IN ${HELD_SQL} AND claimed_by = ?
     ORDER BY step_index LIMIT 1`,
  ).get(plan_path, worktree) as StepRow | undefined;
}

/** Top-level steps `worktree` holds in any plan (claimed or in progress, live or expired). */
export function heldAnywhereBy(db: Db, worktree: string): StepRow[] {
  return stmt(
    db,
    `SELECT * FROM steps WHERE parent_anchor IS NULL AND status IN ${HELD_SQL} AND claimed_by = ? ORDER BY plan_path, step_index`,
  ).all(worktree) as StepRow[];
}

/** The first pending top-level step after `after` whose lifted dependencies are all completed. */
export function nextPending(db: Db, plan_path: string, after: number): StepRow | undefined {
  return stmt(
    db,
    `SELECT * FROM steps WHERE plan_path = ? AND parent_anchor IS NULL AND status = 'pending' AND unmet_deps = 0
       AND step_index > ? ORDER BY step_index LIMIT 1`,
  ).get(plan_path, after) as StepRow | undefined;
}

/** Held top-level steps whose lease expired and whose lifted dependencies are completed. */
export function expiredReady(db: Db, plan_path: string, now: string): StepRow[] {
  return stmt(
    db,
    `SELECT * FROM steps WHERE plan_path = @p AND parent_anchor IS NULL AND status IN ${HELD_SQL} AND unmet_deps = 0
       AND ${expiredSql()} ORDER BY step_index`,
  ).all({ p: plan_path, now }) as StepRow[];
}

/** Number of ready top-level steps (pending or expired, lifted dependencies met). */
export function countReady(db: Db, plan_path: string, now: string): number {
  const r = stmt(
    db,
    `SELECT
       (SELECT COUNT(*) FROM steps WHERE plan_path = @p AND parent_anchor IS NULL AND status = 'pending' AND unmet_deps = 0)
     + (SELECT COUNT(*) FROM steps WHERE plan_path = @p AND parent_anchor IS NULL AND status IN ${HELD_SQL} AND unmet_deps = 0
          AND ${expiredSql()}) AS n`,
  ).get({ p: plan_path, now }) as { n: number };
  return r.n;
}

/** The columns a plan defines for a step (everything but status and claim). */
export type StepStructure = Pick<
  StepRow,
  | 'plan_path'
  | 'anchor'
  | 'parent_anchor'
  | 'top_anchor'
  | 'step_id'
  | 'step_index'
  | 'depth'
  | 'title'
  | 'commit_message'
>;

export function insertStep(db: Db, s: StepStructure): void {
  stmt(
    db,
    `INSERT INTO steps (plan_path, anchor, parent_anchor, top_anchor, step_id, step_index, depth, title, commit_message)
     VALUES (@plan_path, @anchor, @parent_anchor, @top_anchor, @step_id, @step_index, @depth, @title, @commit_message)`,
  ).run(s);
}

/** Re-initialization: structure columns of a kept row (status and claim handled separately). */
export function updateStepStructure(db: Db, s: StepStructure): void {
  stmt(
    db,
    `UPDATE steps SET parent_anchor = @parent_anchor, top_anchor = @top_anchor, step_id = @step_id, step_index = @step_index,
       depth = @depth, title = @title, commit_message = @commit_message WHERE plan_path = @plan_path AND anchor = @anchor`,
  ).run(s);
}

/** Prose refresh: titles, labels and commit messages only. */
export function updateStepProse(
  db: Db,
  plan_path: string,
  anchor: string,
  title: string,
  step_id: string,
  commit_message: string | null,
): void {
  stmt(db, 'UPDATE steps SET title = ?, step_id = ?, commit_message = ? WHERE plan_path = ? AND anchor = ?').run(
    title,
    step_id,
    commit_message,
    plan_path,
    anchor,
  );
}

/** Back to a fresh pending row with both counters at 0 (init --force). */
export function resetStepFully(db: Db, plan_path: string, anchor: string): void {
  stmt(
    db,
    `UPDATE steps SET status = 'pending', claimed_by = NULL, claimed_at = NULL, lease_expires_at = NULL, heartbeat_at = NULL,
       started_at = NULL, completed_at = NULL, commit_hash = NULL, complete_reason = NULL, attempt = 0, failures = 0,
       previous_owner = NULL, fail_reason = NULL, completed_via = NULL WHERE plan_path = ? AND anchor = ?`,
  ).run(plan_path, anchor);
}

/** A top-level row becomes a substep (init --force): claim columns cleared in the same statement. */
export function clearClaimColumns(db: Db, plan_path: string, anchor: string, parent_anchor: string): void {
  stmt(
    db,
    `UPDATE steps SET parent_anchor = ?, claimed_by = NULL, claimed_at = NULL, lease_expires_at = NULL, heartbeat_at = NULL,
       attempt = 0, failures = 0, status = CASE WHEN status IN ('claimed', 'failed') THEN 'pending' ELSE status END
     WHERE plan_path = ? AND anchor = ?`,
  ).run(parent_anchor, plan_path, anchor);
}

export function deleteStep(db: Db, plan_path: string, anchor: string): void {
  for (const t of ['step_artifacts', 'step_refactors', 'checklist_items']) {
    stmt(db, `DELETE FROM ${t} WHERE plan_path = ? AND step_anchor = ?`).run(plan_path, anchor);
  }
  stmt(db, 'DELETE FROM steps WHERE plan_path = ? AND anchor = ?').run(plan_path, anchor);
}

// ---- claims ---------------------------------------------------------------------------------------

export interface ClaimParams {
  plan_path: string;
  anchor: string;
  worktree: string;
  now: string;
  lease: string;
}

/** pending → claimed; attempt + 1. */
export function claimPending(db: Db, p: ClaimParams): number {
  return stmt(
    db,
    `UPDATE steps SET status = 'claimed', claimed_by = @worktree, claimed_at = @now, lease_expires_at = @lease,
       heartbeat_at = NULL, started_at = NULL, attempt = attempt + 1
     WHERE plan_path = @plan_path AND anchor = @anchor AND parent_anchor IS NULL AND status = 'pending'`,
  ).run(p).changes;
}

/** Takeover of another worktree's expired claim: failures + 1, attempt + 1, old owner recorded. */
export function takeover(db: Db, p: ClaimParams & { old_owner: string }): number {
  return stmt(
    db,
    `UPDATE steps SET status = 'claimed', previous_owner = claimed_by, claimed_by = @worktree, claimed_at = @now,
       lease_expires_at = @lease, heartbeat_at = NULL, started_at = NULL, attempt = attempt + 1, failures = failures + 1
     WHERE plan_path = @plan_path AND anchor = @anchor AND parent_anchor IS NULL AND status IN ${HELD_SQL}
       AND claimed_by = @old_owner AND ${expiredSql()}`,
  ).run(p).changes;
}

/** A takeover that reaches the cap: the step fails instead (claim cleared, failures + 1). */
export function failExpired(
  db: Db,
  p: { plan_path: string; anchor: string; old_owner: string; now: string; reason: string },
): number {
  return stmt(
    db,
    `UPDATE steps SET status = 'failed', previous_owner = claimed_by, claimed_by = NULL, claimed_at = NULL,
       lease_expires_at = NULL, heartbeat_at = NULL, started_at = NULL, failures = failures + 1, fail_reason = @reason
     WHERE plan_path = @plan_path AND anchor = @anchor AND parent_anchor IS NULL AND status IN ${HELD_SQL}
       AND claimed_by = @old_owner AND ${expiredSql()}`,
  ).run(p).changes;
}

/** Renew the lease of a held top-level step owned by `worktree`. */
export function renewLease(db: Db, p: ClaimParams & { heartbeat: boolean }): number {
  return stmt(
    db,
    `UPDATE steps SET lease_expires_at = @lease, heartbeat_at = CASE WHEN @heartbeat = 1 THEN @now ELSE heartbeat_at END
     WHERE plan_path = @plan_path AND anchor = @anchor AND parent_anchor IS NULL AND status IN ${HELD_SQL}
       AND claimed_by = @worktree`,
  ).run({ ...p, heartbeat: p.heartbeat ? 1 : 0 }).changes;
}

/** claimed → in_progress for the owner. */
export function startTop(
  db: Db,
  p: { plan_path: string; anchor: string; worktree: string; attempt: number; now: string },
): number {
  return stmt(
    db,
    `UPDATE steps SET status = 'in_progress', started_at = @now
     WHERE plan_path = @plan_path AND anchor = @anchor AND parent_anchor IS NULL AND status = 'claimed'
       AND claimed_by = @worktree AND attempt = @attempt`,
  ).run(p).changes;
}

/** A substep: pending → in_progress. */
export function startSub(db: Db, p: { plan_path: string; anchor: string; now: string }): number {
  return stmt(
    db,
    `UPDATE steps SET status = 'in_progress', started_at = @now
     WHERE plan_path = @plan_path AND anchor = @anchor AND parent_anchor IS NOT NULL AND status = 'pending'`,
  ).run(p).changes;
}

/**
 * Any non-completed step → completed. With `owner`, a top-level row must be held by that worktree (the
 * guard of `state complete`); substeps carry no claim.
 */
export function completeRow(
  db: Db,
  p: {
    plan_path: string;
    anchor: string;
    now: string;
    commit_hash: string | null;
    reason: string | null;
    via: 'complete' | 'force' | 'reconcile';
    owner: string | null;
  },
): number {
  return stmt(
    db,
    `UPDATE steps SET status = 'completed', completed_at = @now, commit_hash = @commit_hash, complete_reason = @reason,
       completed_via = @via
     WHERE plan_path = @plan_path AND anchor = @anchor AND status <> 'completed'
       AND (@owner IS NULL OR parent_anchor IS NOT NULL OR (claimed_by = @owner AND status IN ${HELD_SQL}))`,
  ).run(p).changes;
}

export function setCommitHash(db: Db, plan_path: string, anchor: string, hash: string): number {
  return stmt(db, "UPDATE steps SET commit_hash = ? WHERE plan_path = ? AND anchor = ? AND status = 'completed'").run(
    hash,
    plan_path,
    anchor,
  ).changes;
}

/** End a held claim: back to pending (release, fail below the cap) or failed; claim cleared. */
export function endClaim(
  db: Db,
  p: {
    plan_path: string;
    anchor: string;
    worktree: string;
    status: 'pending' | 'failed';
    failures_delta: number;
    fail_reason: string | null;
  },
): number {
  return stmt(
    db,
    `UPDATE steps SET status = @status, claimed_by = NULL, claimed_at = NULL, lease_expires_at = NULL, heartbeat_at = NULL,
       started_at = NULL, failures = failures + @failures_delta, fail_reason = @fail_reason
     WHERE plan_path = @plan_path AND anchor = @anchor AND parent_anchor IS NULL AND status IN ${HELD_SQL}
       AND claimed_by = @worktree`,
  ).run(p).changes;
}

/** Admin reset of a top-level step that is not completed: pending, claim and counters cleared. */
export function resetTop(db: Db, plan_path: string, anchor: string): number {
  return stmt(
    db,
    `UPDATE steps SET status = 'pending', claimed_by = NULL, claimed_at = NULL, lease_expires_at = NULL, heartbeat_at = NULL,
       started_at = NULL, fail_reason = NULL, failures = 0
     WHERE plan_path = ? AND anchor = ? AND parent_anchor IS NULL AND status <> 'completed'`,
  ).run(plan_path, anchor).changes;
}

/** Non-completed descendants of a top-level step go back to pending; returns their anchors. */
export function descendantsToPending(db: Db, plan_path: string, top_anchor: string): string[] {
  const rows = stmt(
    db,
    `SELECT anchor FROM steps WHERE plan_path = ? AND top_anchor = ? AND parent_anchor IS NOT NULL AND status = 'in_progress'
     ORDER BY step_index`,
  ).all(plan_path, top_anchor) as { anchor: string }[];
  stmt(
    db,
    `UPDATE steps SET status = 'pending', started_at = NULL
     WHERE plan_path = ? AND top_anchor = ? AND parent_anchor IS NOT NULL AND status <> 'completed'`,
  ).run(plan_path, top_anchor);
  return rows.map((r) => r.anchor);
}

// ---- dependencies ---------------------------------------------------------------------------------

export function insertDep(db: Db, plan_path: string, step_anchor: string, depends_on: string): void {
  stmt(db, 'INSERT OR IGNORE INTO step_deps (plan_path, step_anchor, depends_on) VALUES (?, ?, ?)').run(
    plan_path,
    step_anchor,
    depends_on,
  );
}

export function insertLiftedDep(db: Db, plan_path: string, step_anchor: string, depends_on: string): void {
  stmt(db, 'INSERT OR IGNORE INTO step_lifted_deps (plan_path, step_anchor, depends_on) VALUES (?, ?, ?)').run(
    plan_path,
    step_anchor,
    depends_on,
  );
}

export function deleteDeps(db: Db, plan_path: string): void {
  stmt(db, 'DELETE FROM step_deps WHERE plan_path = ?').run(plan_path);
  stmt(db, 'DELETE FROM step_lifted_deps WHERE plan_path = ?').run(plan_path);
}

export function depsOfPlan(db: Db, plan_path: string): { step_anchor: string; depends_on: string }[] {
  return stmt(
    db,
    `SELECT d.step_anchor, d.depends_on FROM step_deps d JOIN steps t ON t.plan_path = d.plan_path AND t.anchor = d.depends_on
     WHERE d.plan_path = ? ORDER BY d.step_anchor, t.step_index`,
  ).all(plan_path) as { step_anchor: string; depends_on: string }[];
}

export function liftedDepsOfPlan(db: Db, plan_path: string): { step_anchor: string; depends_on: string }[] {
  return stmt(
    db,
    `SELECT d.step_anchor, d.depends_on FROM step_lifted_deps d JOIN steps t ON t.plan_path = d.plan_path AND t.anchor = d.depends_on
     WHERE d.plan_path = ? ORDER BY d.step_anchor, t.step_index`,
  ).all(plan_path) as { step_anchor: string; depends_on: string }[];
}

/** Lifted dependencies of one top-level step that are not completed, in step_index order. */
export function unmetLiftedDeps(db: Db, plan_path: string, anchor: string): string[] {
  return (
    stmt(
      db,
      `SELECT t.anchor FROM step_lifted_deps d JOIN steps t ON t.plan_path = d.plan_path AND t.anchor = d.depends_on
       WHERE d.plan_path = ? AND d.step_anchor = ? AND t.status <> 'completed' ORDER BY t.step_index`,
    ).all(plan_path, anchor) as { anchor: string }[]
  ).map((r) => r.anchor);
}

/** A top-level step completed: each dependent has one unmet lifted dependency fewer. */
export function releaseDependents(db: Db, plan_path: string, anchor: string): void {
  stmt(
    db,
    `UPDATE steps SET unmet_deps = unmet_deps - 1
     WHERE plan_path = @p AND anchor IN (SELECT step_anchor FROM step_lifted_deps WHERE plan_path = @p AND depends_on = @a)`,
  ).run({ p: plan_path, a: anchor });
}

/** Recompute every row's unmet_deps from the lifted edges (init). */
export function recomputeUnmet(db: Db, plan_path: string): void {
  stmt(
    db,
    `UPDATE steps SET unmet_deps = (
       SELECT COUNT(*) FROM step_lifted_deps d JOIN steps t ON t.plan_path = d.plan_path AND t.anchor = d.depends_on
       WHERE d.plan_path = steps.plan_path AND d.step_anchor = steps.anchor AND t.status <> 'completed')
     WHERE plan_path = ?`,
  ).run(plan_path);
}
