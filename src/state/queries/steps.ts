/**
 * SQL for the `steps` table (its dependency edges: deps.ts). Transitions are guarded UPDATEs (status and
 * owner in the WHERE clause); callers check `changes`.
 */
import type { StepRow } from '../types.js';
import { discardedSql, expiredSql, HELD_SQL } from '../status.js';
import type { Conn } from '../sql/conn.js';

/**
 * How a claim locks the rows it reads. On PostgreSQL claims run side by side (sql/postgres.ts): `skip` passes
 * over a row another claim holds (the fast path); `wait` waits for that claim to commit and reads the row
 * again (a claim that found nothing to skip to, `--step`, the caller's own claim), so an answer never
 * describes a claim still in flight. SQLite runs one writer at a time and locks nothing.
 */
export type RowLock = 'skip' | 'wait';
/** The review gate's columns cleared: a completion, reset or re-init leaves no kept commit or decision. */
const CLEAR_REVIEW = 'review_commit = NULL, human_decision = NULL, human_notes = NULL';

const LOCK = {
  skip: { sqlite: '', postgres: ' FOR UPDATE SKIP LOCKED' },
  wait: { sqlite: '', postgres: ' FOR UPDATE' },
} as const;

export async function getStep(c: Conn, plan_path: string, anchor: string): Promise<StepRow | undefined> {
  return (await c.get('SELECT * FROM steps WHERE plan_path = ? AND anchor = ?', [plan_path, anchor])) as
    StepRow | undefined;
}

/** getStep, waiting for (and then reading past) a claim in flight on the row (PostgreSQL). */
export async function lockStep(c: Conn, plan_path: string, anchor: string): Promise<StepRow | undefined> {
  return (await c.get(`SELECT * FROM steps WHERE plan_path = ? AND anchor = ?${LOCK.wait[c.dialect]}`, [
    plan_path,
    anchor,
  ])) as StepRow | undefined;
}

/** lockStep of a top-level step: undefined when `anchor` is no top-level step of the plan. */
export async function lockTopStep(c: Conn, plan_path: string, anchor: string): Promise<StepRow | undefined> {
  return (await c.get(
    `SELECT * FROM steps WHERE plan_path = ? AND anchor = ? AND parent_anchor IS NULL${LOCK.wait[c.dialect]}`,
    [plan_path, anchor],
  )) as StepRow | undefined;
}

export async function stepsOfPlan(c: Conn, plan_path: string): Promise<StepRow[]> {
  return (await c.all('SELECT * FROM steps WHERE plan_path = ? ORDER BY step_index', [plan_path])) as StepRow[];
}

/**
 * The plan's steps with how many artifacts each has (`state show`, docs/state.md §5.1): counted in the same
 * statement, an index probe per step, so a show adds no query for them.
 */
export async function stepsWithArtifactCounts(
  c: Conn,
  plan_path: string,
  top_anchor?: string,
): Promise<(StepRow & { artifact_count: number })[]> {
  const rows = (await c.all(
    `SELECT s.*, (SELECT COUNT(*) FROM step_artifacts a WHERE a.plan_path = s.plan_path AND a.step_anchor = s.anchor)
              AS artifact_count
       FROM steps s WHERE s.plan_path = ?${top_anchor === undefined ? '' : ' AND s.top_anchor = ?'} ORDER BY s.step_index`,
    top_anchor === undefined ? [plan_path] : [plan_path, top_anchor],
  )) as (StepRow & { artifact_count: number | string })[];
  // PostgreSQL's COUNT is a BIGINT, read as text.
  return rows.map((r) => ({ ...r, artifact_count: Number(r.artifact_count) }));
}

export async function topSteps(c: Conn, plan_path: string): Promise<StepRow[]> {
  return (await c.all('SELECT * FROM steps WHERE plan_path = ? AND parent_anchor IS NULL ORDER BY step_index', [
    plan_path,
  ])) as StepRow[];
}

/** A top-level step and all its descendants, in step_index order. */
export async function subtree(c: Conn, plan_path: string, top_anchor: string): Promise<StepRow[]> {
  return (await c.all('SELECT * FROM steps WHERE plan_path = ? AND top_anchor = ? ORDER BY step_index', [
    plan_path,
    top_anchor,
  ])) as StepRow[];
}

/**
 * The top-level step this worktree holds (claimed or in progress, live or expired), if any. `lock` (claims)
 * waits for a takeover of that row in flight, which may end the hold.
 */
export async function heldBy(
  c: Conn,
  plan_path: string,
  worktree: string,
  lock?: 'wait',
): Promise<StepRow | undefined> {
  return (await c.get(
    `SELECT * FROM steps WHERE plan_path = ? AND parent_anchor IS NULL AND status IN ${HELD_SQL} AND claimed_by = ?
     ORDER BY step_index LIMIT 1${lock ? LOCK[lock][c.dialect] : ''}`,
    [plan_path, worktree],
  )) as StepRow | undefined;
}

/** Top-level steps `worktree` holds in any plan (claimed or in progress, live or expired). */
export async function heldAnywhereBy(c: Conn, worktree: string): Promise<StepRow[]> {
  return (await c.all(
    `SELECT * FROM steps WHERE parent_anchor IS NULL AND status IN ${HELD_SQL} AND claimed_by = ? ORDER BY plan_path, step_index`,
    [worktree],
  )) as StepRow[];
}

/**
 * The first pending top-level step after `after` whose lifted dependencies are all completed. With `wait`
 * on PostgreSQL every such row is locked: a locking read with LIMIT may return nothing when its first row
 * stopped qualifying while it waited.
 */
export async function nextPending(
  c: Conn,
  plan_path: string,
  after: number,
  lock: RowLock = 'skip',
): Promise<StepRow | undefined> {
  const limit = lock === 'wait' && c.dialect === 'postgres' ? '' : ' LIMIT 1';
  return (await c.get(
    `SELECT * FROM steps WHERE plan_path = ? AND parent_anchor IS NULL AND status = 'pending' AND unmet_deps = 0
       AND step_index > ? ORDER BY step_index${limit}${LOCK[lock][c.dialect]}`,
    [plan_path, after],
  )) as StepRow | undefined;
}

/** Held top-level steps whose lease expired and whose lifted dependencies are completed. */
export async function expiredReady(
  c: Conn,
  plan_path: string,
  now: string,
  lock: RowLock = 'skip',
): Promise<StepRow[]> {
  return (await c.all(
    `SELECT * FROM steps WHERE plan_path = @p AND parent_anchor IS NULL AND status IN ${HELD_SQL} AND unmet_deps = 0
       AND ${expiredSql()} ORDER BY step_index${LOCK[lock][c.dialect]}`,
    { p: plan_path, now },
  )) as StepRow[];
}

/** Number of ready top-level steps (pending or expired, lifted dependencies met). */
export async function countReady(c: Conn, plan_path: string, now: string): Promise<number> {
  const r = (await c.get(
    `SELECT
       (SELECT COUNT(*) FROM steps WHERE plan_path = @p AND parent_anchor IS NULL AND status = 'pending' AND unmet_deps = 0)
     + (SELECT COUNT(*) FROM steps WHERE plan_path = @p AND parent_anchor IS NULL AND status IN ${HELD_SQL} AND unmet_deps = 0
          AND ${expiredSql()}) AS n`,
    { p: plan_path, now },
  )) as { n: number };
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
  | 'touches'
>;

export async function insertStep(c: Conn, s: StepStructure): Promise<void> {
  await c.run(
    `INSERT INTO steps (plan_path, anchor, parent_anchor, top_anchor, step_id, step_index, depth, title, commit_message,
       touches)
     VALUES (@plan_path, @anchor, @parent_anchor, @top_anchor, @step_id, @step_index, @depth, @title, @commit_message,
       @touches)`,
    s,
  );
}

/** Re-initialization: structure columns of a kept row (status and claim handled separately). */
export async function updateStepStructure(c: Conn, s: StepStructure): Promise<void> {
  await c.run(
    `UPDATE steps SET parent_anchor = @parent_anchor, top_anchor = @top_anchor, step_id = @step_id, step_index = @step_index,
       depth = @depth, title = @title, commit_message = @commit_message, touches = @touches
     WHERE plan_path = @plan_path AND anchor = @anchor`,
    s,
  );
}

/** Prose refresh: titles, labels, commit messages and Touches only. */
export async function updateStepProse(
  c: Conn,
  plan_path: string,
  anchor: string,
  p: { title: string; step_id: string; commit_message: string | null; touches: string | null },
): Promise<void> {
  await c.run(
    'UPDATE steps SET title = ?, step_id = ?, commit_message = ?, touches = ? WHERE plan_path = ? AND anchor = ?',
    [p.title, p.step_id, p.commit_message, p.touches, plan_path, anchor],
  );
}

/** A step's Touches as stored: a JSON array, or null for none (docs/state.md §3.12). */
export function touchesColumn(touches: readonly string[]): string | null {
  return touches.length ? JSON.stringify(touches) : null;
}

/**
 * Back to a fresh pending row (init --force): `failures` 0, `attempt` kept, as `state reset` keeps it, so the
 * next claim's number (and its log files) never repeats one from before (docs/state.md §3.6).
 */
export async function resetStepFully(c: Conn, plan_path: string, anchor: string): Promise<void> {
  await c.run(
    `UPDATE steps SET status = 'pending', claimed_by = NULL, claimed_at = NULL, lease_expires_at = NULL, heartbeat_at = NULL,
       started_at = NULL, completed_at = NULL, commit_hash = NULL, complete_reason = NULL, failures = 0,
       previous_owner = NULL, fail_reason = NULL, completed_via = NULL, ${CLEAR_REVIEW} WHERE plan_path = ? AND anchor = ?`,
    [plan_path, anchor],
  );
}

/** A top-level row becomes a substep (init --force): claim columns cleared in the same statement. */
export async function clearClaimColumns(
  c: Conn,
  plan_path: string,
  anchor: string,
  parent_anchor: string,
): Promise<void> {
  await c.run(
    `UPDATE steps SET parent_anchor = ?, claimed_by = NULL, claimed_at = NULL, lease_expires_at = NULL, heartbeat_at = NULL,
       attempt = 0, failures = 0, status = CASE WHEN status IN ('claimed', 'failed', 'needs_human') THEN 'pending' ELSE status END, ${CLEAR_REVIEW}
     WHERE plan_path = ? AND anchor = ?`,
    [parent_anchor, plan_path, anchor],
  );
}

export async function deleteStep(c: Conn, plan_path: string, anchor: string): Promise<void> {
  // A step the plan no longer has takes its ledger rows with it, as its artifacts (docs/state.md §2).
  for (const t of ['step_artifacts', 'step_usage', 'step_refactors', 'checklist_items']) {
    await c.run(`DELETE FROM ${t} WHERE plan_path = ? AND step_anchor = ?`, [plan_path, anchor]);
  }
  await c.run('DELETE FROM steps WHERE plan_path = ? AND anchor = ?', [plan_path, anchor]);
}

// ---- claims ---------------------------------------------------------------------------------------

export interface ClaimParams {
  plan_path: string;
  anchor: string;
  worktree: string;
  now: string;
  lease: string;
}

/** pending → claimed, attempt + 1: the row as it is now, or undefined when it was not pending. */
export async function claimPending(c: Conn, p: ClaimParams): Promise<StepRow | undefined> {
  return await c.get<StepRow>(
    `UPDATE steps SET status = 'claimed', claimed_by = @worktree, claimed_at = @now, lease_expires_at = @lease,
       heartbeat_at = NULL, started_at = NULL, attempt = attempt + 1
     WHERE plan_path = @plan_path AND anchor = @anchor AND parent_anchor IS NULL AND status = 'pending'
     RETURNING *`,
    p,
  );
}

/** Takeover of another worktree's expired claim: failures + 1, attempt + 1, old owner recorded; the new row. */
export async function takeover(c: Conn, p: ClaimParams & { old_owner: string }): Promise<StepRow | undefined> {
  return await c.get<StepRow>(
    `UPDATE steps SET status = 'claimed', previous_owner = claimed_by, claimed_by = @worktree, claimed_at = @now,
       lease_expires_at = @lease, heartbeat_at = NULL, started_at = NULL, attempt = attempt + 1, failures = failures + 1
     WHERE plan_path = @plan_path AND anchor = @anchor AND parent_anchor IS NULL AND status IN ${HELD_SQL}
       AND claimed_by = @old_owner AND ${expiredSql()}
     RETURNING *`,
    p,
  );
}

/** A takeover that reaches the cap: the step fails instead (claim cleared, failures + 1). */
export async function failExpired(
  c: Conn,
  p: { plan_path: string; anchor: string; old_owner: string; now: string; reason: string },
): Promise<number> {
  return await c.run(
    `UPDATE steps SET status = 'failed', previous_owner = claimed_by, claimed_by = NULL, claimed_at = NULL,
       lease_expires_at = NULL, heartbeat_at = NULL, started_at = NULL, failures = failures + 1, fail_reason = @reason
     WHERE plan_path = @plan_path AND anchor = @anchor AND parent_anchor IS NULL AND status IN ${HELD_SQL}
       AND claimed_by = @old_owner AND ${expiredSql()}`,
    p,
  );
}

/** Renew the lease of a held top-level step owned by `worktree`. */
export async function renewLease(c: Conn, p: ClaimParams & { heartbeat: boolean }): Promise<number> {
  return await c.run(
    `UPDATE steps SET lease_expires_at = @lease, heartbeat_at = CASE WHEN @heartbeat = 1 THEN @now ELSE heartbeat_at END
     WHERE plan_path = @plan_path AND anchor = @anchor AND parent_anchor IS NULL AND status IN ${HELD_SQL}
       AND claimed_by = @worktree`,
    { ...p, heartbeat: p.heartbeat ? 1 : 0 },
  );
}

/** claimed → in_progress for the owner. */
export function startTop(
  c: Conn,
  p: { plan_path: string; anchor: string; worktree: string; attempt: number; now: string },
): void {
  c.later(
    `UPDATE steps SET status = 'in_progress', started_at = @now
     WHERE plan_path = @plan_path AND anchor = @anchor AND parent_anchor IS NULL AND status = 'claimed'
       AND claimed_by = @worktree AND attempt = @attempt`,
    p,
  );
}

/** A substep: pending → in_progress. */
export function startSub(c: Conn, p: { plan_path: string; anchor: string; now: string }): void {
  c.later(
    `UPDATE steps SET status = 'in_progress', started_at = @now
     WHERE plan_path = @plan_path AND anchor = @anchor AND parent_anchor IS NOT NULL AND status = 'pending'`,
    p,
  );
}

/**
 * Any non-completed step → completed. With `owner`, a top-level row must be held by that worktree (the
 * guard of `state complete`); substeps carry no claim.
 */

export async function completeRow(
  c: Conn,
  p: {
    plan_path: string;
    anchor: string;
    now: string;
    commit_hash: string | null;
    reason: string | null;
    via: 'complete' | 'force' | 'reconcile';
    owner: string | null;
  },
): Promise<number> {
  return await c.run(
    `UPDATE steps SET status = 'completed', completed_at = @now, commit_hash = @commit_hash, complete_reason = @reason,
       completed_via = @via, ${CLEAR_REVIEW}
     WHERE plan_path = @plan_path AND anchor = @anchor AND status <> 'completed'
       AND (CAST(@owner AS TEXT) IS NULL OR parent_anchor IS NOT NULL OR (claimed_by = @owner AND status IN ${HELD_SQL}))`,
    p,
  );
}

export async function setCommitHash(c: Conn, plan_path: string, anchor: string, hash: string): Promise<number> {
  return await c.run("UPDATE steps SET commit_hash = ? WHERE plan_path = ? AND anchor = ? AND status = 'completed'", [
    hash,
    plan_path,
    anchor,
  ]);
}

/** End a held claim: back to pending (release, fail below the cap) or failed; claim cleared. */
/**
 * The holder's claim ends (release: pending; fail: pending or failed). A release (a run stopping) keeps a
 * human's approval of the kept commit; a failed attempt ends it, and the step is redone.
 */
export async function endClaim(
  c: Conn,
  p: {
    plan_path: string;
    anchor: string;
    worktree: string;
    status: 'pending' | 'failed';
    failures_delta: number;
    fail_reason: string | null;
  },
): Promise<number> {
  return await c.run(
    `UPDATE steps SET status = @status, claimed_by = NULL, claimed_at = NULL, lease_expires_at = NULL, heartbeat_at = NULL,
       started_at = NULL, failures = failures + @failures_delta, fail_reason = @fail_reason,
       review_commit = CASE WHEN @failures_delta > 0 THEN NULL ELSE review_commit END,
       human_decision = CASE WHEN @failures_delta > 0 THEN NULL ELSE human_decision END
     WHERE plan_path = @plan_path AND anchor = @anchor AND parent_anchor IS NULL AND status IN ${HELD_SQL}
       AND claimed_by = @worktree`,
    p,
  );
}

/** Admin reset of a top-level step that is not completed: pending, claim and counters cleared. */
export async function resetTop(c: Conn, plan_path: string, anchor: string): Promise<number> {
  return await c.run(
    `UPDATE steps SET status = 'pending', claimed_by = NULL, claimed_at = NULL, lease_expires_at = NULL, heartbeat_at = NULL,
       started_at = NULL, fail_reason = NULL, failures = 0, ${CLEAR_REVIEW}
     WHERE plan_path = ? AND anchor = ? AND parent_anchor IS NULL AND status <> 'completed'`,
    [plan_path, anchor],
  );
}

/**
 * The descendants a discarded attempt takes back (discardedSql) go back to pending; returns the anchors of
 * those that were in progress and of those that were completed.
 */
export async function descendantsToPending(
  c: Conn,
  plan_path: string,
  top_anchor: string,
): Promise<{ started: string[]; completed: string[] }> {
  const where = `plan_path = ? AND top_anchor = ? AND parent_anchor IS NOT NULL AND ${discardedSql()}`;
  const rows = (await c.all(`SELECT anchor, status FROM steps WHERE ${where} ORDER BY step_index`, [
    plan_path,
    top_anchor,
  ])) as { anchor: string; status: string }[];
  await c.run(
    `UPDATE steps SET status = 'pending', started_at = NULL, completed_at = NULL, completed_via = NULL,
       complete_reason = NULL WHERE ${where}`,
    [plan_path, top_anchor],
  );
  return {
    started: rows.filter((r) => r.status === 'in_progress').map((r) => r.anchor),
    completed: rows.filter((r) => r.status === 'completed').map((r) => r.anchor),
  };
}

/**
 * The owner's claim ends in `needs_human` (docs/state.md §3.11): claim columns cleared, the kept commit
 * recorded, an earlier decision consumed. Fenced like endClaim: only the holder's row changes.
 */
export async function escalateTop(
  c: Conn,
  p: { plan_path: string; anchor: string; worktree: string; review_commit: string; reason: string },
): Promise<number> {
  return await c.run(
    `UPDATE steps SET status = 'needs_human', claimed_by = NULL, claimed_at = NULL, lease_expires_at = NULL,
       heartbeat_at = NULL, started_at = NULL, fail_reason = @reason, review_commit = @review_commit,
       human_decision = NULL, human_notes = NULL
     WHERE plan_path = @plan_path AND anchor = @anchor AND parent_anchor IS NULL AND status IN ${HELD_SQL}
       AND claimed_by = @worktree`,
    p,
  );
}

/** A human's decision on a `needs_human` step (docs/state.md §3.11); answers the rows changed (0 or 1). */
export async function decideTop(
  c: Conn,
  p: {
    plan_path: string;
    anchor: string;
    status: 'pending' | 'failed';
    human_decision: 'approved' | null;
    human_notes: string | null;
    keep_commit: boolean;
    fail_reason: string | null;
  },
): Promise<number> {
  return await c.run(
    `UPDATE steps SET status = @status, human_decision = @human_decision, human_notes = @human_notes,
       review_commit = CASE WHEN @keep_commit = 1 THEN review_commit ELSE NULL END, fail_reason = @fail_reason
     WHERE plan_path = @plan_path AND anchor = @anchor AND parent_anchor IS NULL AND status = 'needs_human'`,
    { ...p, keep_commit: p.keep_commit ? 1 : 0 },
  );
}

/** The per-plan key of the Touches lock (PostgreSQL advisory class 5, docs/state.md §3.12). */
const touchesKey = (plan_path: string) => `tugcode:touches:${plan_path}`;

/**
 * PostgreSQL: takes the plan's Touches lock when `declared` (the plan declares Touches), or, when the caller
 * cannot tell (undefined), when one of its top-level steps has Touches (a look through the plan's rows);
 * says whether it did. A claim calls it before it locks any row: claims of such a plan then take turns, and
 * one never waits for a row another claim holds while that claim waits for this lock (a deadlock).
 */
export async function lockTouches(c: Conn, plan_path: string, declared: boolean | undefined): Promise<boolean> {
  if (declared === false) return false;
  const r = await c.get(
    `SELECT pg_advisory_xact_lock(5, hashtext(@key)) AS l${
      declared
        ? ''
        : ' WHERE EXISTS (SELECT 1 FROM steps WHERE plan_path = @p AND parent_anchor IS NULL AND touches IS NOT NULL)'
    }`,
    { key: touchesKey(plan_path), p: plan_path },
  );
  return r !== undefined;
}

/**
 * The Touches of the plan's top-level steps held under a live lease (docs/state.md §3.12). On PostgreSQL
 * the caller holds the plan's Touches lock (lockTouches), or it is taken here: a plan whose first Touches
 * this very claim's prose refresh wrote. So two claims never both miss the other's; SQLite's writers are
 * serialized anyway.
 */
export async function heldTouches(
  c: Conn,
  plan_path: string,
  now: string,
  locked: boolean,
): Promise<{ anchor: string; touches: string }[]> {
  if (c.dialect === 'postgres' && !locked)
    await c.get('SELECT pg_advisory_xact_lock(5, hashtext(?)) AS l', [touchesKey(plan_path)]);
  return (await c.all(
    `SELECT anchor, touches FROM steps WHERE plan_path = @p AND parent_anchor IS NULL AND status IN ${HELD_SQL}
       AND touches IS NOT NULL AND NOT (${expiredSql()})`,
    { p: plan_path, now },
  )) as { anchor: string; touches: string }[];
}
