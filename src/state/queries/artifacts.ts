/** SQL reading `step_artifacts` (the board's step detail, docs/board.md §4); the append is in events.ts. */
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
