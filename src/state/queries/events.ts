/** SQL for the append-only `events` table and `step_artifacts`. */
import type { ArtifactRow, EventRow } from '../types.js';
import type { Conn } from '../sql/conn.js';

/** A claim event (its details carry `claimed: true`), in each dialect's JSON. */
const CLAIMED_EVENT = {
  sqlite: "json_extract(details_json, '$.claimed') = 1",
  postgres: "(details_json::jsonb ->> 'claimed') = 'true'",
} as const;

/** A failed attempt (`state fail`: its details carry `failed_attempt: true`), in each dialect's JSON. */
const FAILED_ATTEMPT_EVENT = {
  sqlite: "json_extract(details_json, '$.failed_attempt') = 1",
  postgres: "(details_json::jsonb ->> 'failed_attempt') = 'true'",
} as const;

export interface NewEvent {
  at: string;
  plan_path: string | null;
  step_anchor: string | null;
  command: string;
  actor: string;
  attempt: number | null;
  details: Record<string, unknown>;
}

/**
 * The append, per dialect. SQLite has one writer, so ids follow commit order. On PostgreSQL transactions run
 * side by side (claims, owner commands), and an id taken early could commit after a later one: a reader
 * tailing `state log --after-id` would skip it. So the append first takes a transaction lock on the
 * project's events (class 5; the schema is the project's, current_schema()), held to commit: ids are handed
 * out in commit order. Events are appended last in their transactions, so the lock is held briefly.
 */
const APPEND_EVENT = {
  sqlite: `INSERT INTO events (at, plan_path, step_anchor, command, actor, attempt, details_json)
       VALUES (@at, @plan_path, @step_anchor, @command, @actor, @attempt, @details_json)`,
  postgres: `WITH l AS (SELECT pg_advisory_xact_lock(5, hashtext(current_schema())))
       INSERT INTO events (at, plan_path, step_anchor, command, actor, attempt, details_json)
       SELECT CAST(@at AS TEXT), CAST(@plan_path AS TEXT), CAST(@step_anchor AS TEXT), CAST(@command AS TEXT),
         CAST(@actor AS TEXT), CAST(@attempt AS INTEGER), CAST(@details_json AS TEXT) FROM l`,
} as const;

/** Appends the event without waiting for its answer (Conn.later): on PostgreSQL it goes out with the COMMIT. */
export function appendEvent(c: Conn, e: NewEvent): void {
  c.later(APPEND_EVENT[c.dialect], {
    at: e.at,
    plan_path: e.plan_path,
    step_anchor: e.step_anchor,
    command: e.command,
    actor: e.actor,
    attempt: e.attempt,
    details_json: JSON.stringify(e.details),
  });
}

/** Did `actor` ever hold a claim on this step? (claim events carry `claimed: true`.) */
export async function everClaimed(c: Conn, plan_path: string, anchor: string, actor: string): Promise<boolean> {
  return (
    (await c.get(
      `SELECT 1 FROM events WHERE plan_path = ? AND step_anchor = ? AND actor = ? AND ${CLAIMED_EVENT[c.dialect]} LIMIT 1`,
      [plan_path, anchor, actor],
    )) !== undefined
  );
}

/**
 * A step's events are read through idx_events_step (plan_path, step_anchor, …) and sorted: `+id` keeps SQLite
 * from walking idx_events_plan (plan_path, id) instead to save that sort, which reads every event of the plan,
 * thousands after a long run and more with each run of it, to find the few of one step.
 */
const STEP_ORDER = '+id';

/** The failed-attempt events of a step, oldest first. */
export async function failedAttemptEvents(c: Conn, plan_path: string, anchor: string): Promise<EventRow[]> {
  return (await c.all(
    `SELECT * FROM events WHERE plan_path = ? AND step_anchor = ? AND ${FAILED_ATTEMPT_EVENT[c.dialect]} ORDER BY ${STEP_ORDER}`,
    [plan_path, anchor],
  )) as EventRow[];
}

export interface EventFilter {
  plan_path?: string | undefined;
  step_anchor?: string | undefined;
  after_id?: number | undefined;
  since?: string | undefined;
  limit: number;
}

/** The WHERE clause and parameters of a filter (`limit` not included). */
function eventWhere(f: Omit<EventFilter, 'limit'> & { before_id?: number | undefined }) {
  const where: string[] = [];
  // One step's events: through idx_events_step, not the plan's events from the cursor on (STEP_ORDER).
  const id = f.step_anchor !== undefined ? STEP_ORDER : 'id';
  if (f.plan_path !== undefined) where.push('plan_path = @plan_path');
  if (f.step_anchor !== undefined) where.push('step_anchor = @step_anchor');
  if (f.since !== undefined) where.push('at >= @since');
  if (f.after_id !== undefined) where.push(`${id} > @after_id`);
  if (f.before_id !== undefined) where.push(`${id} < @before_id`);
  const params: Record<string, unknown> = {
    plan_path: f.plan_path,
    step_anchor: f.step_anchor,
    since: f.since,
    after_id: f.after_id,
    before_id: f.before_id,
  };
  for (const k of Object.keys(params)) if (params[k] === undefined) delete params[k];
  return { w: where.length ? `WHERE ${where.join(' AND ')}` : '', params, id };
}

/** Without after_id: the latest `limit` events (returned ascending); with it: the first `limit` after it. */
export async function listEvents(c: Conn, f: EventFilter): Promise<EventRow[]> {
  const where = eventWhere(f);
  const { w, id } = where;
  const params = { ...where.params, limit: f.limit };
  if (f.after_id !== undefined) {
    return (await c.all(`SELECT * FROM events ${w} ORDER BY ${id} ASC LIMIT @limit`, params)) as EventRow[];
  }
  const rows = (await c.all(`SELECT * FROM events ${w} ORDER BY ${id} DESC LIMIT @limit`, params)) as EventRow[];
  return rows.reverse();
}

/** How many events match the filter, within `after_id` < id < `before_id` (both optional). */
export async function countEvents(
  c: Conn,
  f: Omit<EventFilter, 'limit'> & { before_id?: number | undefined },
): Promise<number> {
  const { w, params } = eventWhere(f);
  return Number((await c.get<{ n: number | string }>(`SELECT COUNT(*) AS n FROM events ${w}`, params))!.n);
}

export async function insertArtifact(c: Conn, a: Omit<ArtifactRow, 'id'>): Promise<number> {
  return Number(
    (await c.get<{ id: number }>(
      `INSERT INTO step_artifacts (plan_path, step_anchor, kind, summary, content, recorded_at)
       VALUES (@plan_path, @step_anchor, @kind, @summary, @content, @recorded_at) RETURNING id`,
      a,
    ))!.id,
  );
}
