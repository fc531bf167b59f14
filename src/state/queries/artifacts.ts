/**
 * SQL reading `step_artifacts` (the board's step detail, docs/board.md §4; `state show`, docs/state.md §5.1);
 * the append is in events.ts.
 */
import type { Conn } from '../sql/conn.js';

export interface ArtifactListRow {
  id: number;
  step_anchor: string;
  kind: string;
  summary: string;
  /** The first `content_max` characters of the content (null when it has none). */
  content: string | null;
  /** The content's whole length in characters. */
  content_length: number | null;
  recorded_at: string;
}

/** The latest `limit` artifacts of a top-level step and its substeps, oldest first, their content cut. */
export async function artifactsOfTop(
  c: Conn,
  f: { plan_path: string; top_anchor: string; limit: number; content_max: number },
): Promise<ArtifactListRow[]> {
  const rows = (await c.all(
    `SELECT id, step_anchor, kind, summary, substr(content, 1, @content_max) AS content,
            length(content) AS content_length, recorded_at
       FROM step_artifacts
      WHERE plan_path = @plan_path
        AND step_anchor IN (SELECT anchor FROM steps WHERE plan_path = @plan_path AND top_anchor = @top_anchor)
      ORDER BY id DESC LIMIT @limit`,
    f,
  )) as ArtifactListRow[];
  return rows.reverse().map((r) => ({
    ...r,
    id: Number(r.id),
    content_length: r.content_length === null ? null : Number(r.content_length),
  }));
}

/** An artifact's event: `state artifact` and `refactor run-step` put its `artifact_id` in the details. */
const ARTIFACT_EVENT = {
  sqlite: "json_extract(details_json, '$.artifact_id') IS NOT NULL",
  postgres: "(details_json::jsonb ->> 'artifact_id') IS NOT NULL",
} as const;

/** One artifact as `state show --step` lists it (docs/state.md §5.1): no content, only its length. */
export interface ArtifactSummaryRow {
  id: number;
  step_anchor: string;
  kind: string;
  summary: string;
  /** The content's length in characters; null when it has none. */
  content_length: number | null;
  recorded_at: string;
  /** Its event's actor (the owner's worktree) and attempt; null when no event names it. */
  recorded_by: string | null;
  attempt: number | null;
}

/**
 * Every artifact of a top-level step and its substeps, oldest first, with who recorded it. The row holds no
 * actor; its event does. They are paired by step, time and order within the same instant, not by the
 * event's `artifact_id`: `state import` gives the rows new ids but keeps the events' details as they were.
 */
export async function artifactSummariesOfTop(
  c: Conn,
  f: { plan_path: string; top_anchor: string },
): Promise<ArtifactSummaryRow[]> {
  const rows = await c.all<Record<string, unknown>>(
    `WITH a AS (
       SELECT id, step_anchor, kind, summary, length(content) AS content_length, recorded_at,
              ROW_NUMBER() OVER (PARTITION BY step_anchor, recorded_at ORDER BY id) AS n
         FROM step_artifacts
        WHERE plan_path = @plan_path
          AND step_anchor IN (SELECT anchor FROM steps WHERE plan_path = @plan_path AND top_anchor = @top_anchor)),
     e AS (
       SELECT step_anchor, at, actor, attempt,
              ROW_NUMBER() OVER (PARTITION BY step_anchor, at ORDER BY id) AS n
         FROM events
        WHERE plan_path = @plan_path
          AND step_anchor IN (SELECT step_anchor FROM a)
          AND at IN (SELECT recorded_at FROM a)
          AND ${ARTIFACT_EVENT[c.dialect]})
     SELECT a.id, a.step_anchor, a.kind, a.summary, a.content_length, a.recorded_at,
            e.actor AS recorded_by, e.attempt
       FROM a LEFT JOIN e ON e.step_anchor = a.step_anchor AND e.at = a.recorded_at AND e.n = a.n
      ORDER BY a.id`,
    f,
  );
  const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));
  return rows.map((r) => ({
    id: Number(r.id),
    step_anchor: String(r.step_anchor),
    kind: String(r.kind),
    summary: String(r.summary),
    content_length: num(r.content_length),
    recorded_at: String(r.recorded_at),
    recorded_by: r.recorded_by === null || r.recorded_by === undefined ? null : String(r.recorded_by),
    attempt: num(r.attempt),
  }));
}
