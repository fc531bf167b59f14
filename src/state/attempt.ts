/**
 * Discarding an attempt (docs/state.md §3): takeover, release, fail and reset. In the top-level step and
 * its non-completed descendants every item returns to `open` (reason cleared) and the descendants return
 * to `pending`; refactor rows follow docs/kernel.md §7.2. Completed descendants keep their items when their
 * commit is recorded; one completed without a commit was completed inside this attempt and goes back too
 * (docs/state.md §3.5).
 */
import type { Conn } from './sql/conn.js';
import { discardItems } from './queries/items.js';
import { descendantsToPending } from './queries/steps.js';
import { discardRefactors } from './queries/refactors.js';

export interface Discarded {
  /** Items that went back to open: `step_anchor`, kind, ordinal and the status they had. */
  items_reopened: { step_anchor: string; kind: string; ordinal: number; previous_status: string }[];
  /** Substeps that were in progress and went back to pending. */
  substeps_reset: string[];
  /** Substeps that were completed without a commit and went back to pending (only when there were some). */
  substeps_reopened?: string[];
  refactors_reset: number;
}

export async function discardAttempt(c: Conn, plan_path: string, top_anchor: string, now: string): Promise<Discarded> {
  const items = await discardItems(c, plan_path, top_anchor, now);
  const substeps = await descendantsToPending(c, plan_path, top_anchor);
  const refactors = await discardRefactors(c, plan_path, top_anchor, now);
  return {
    items_reopened: items.map((i) => ({
      step_anchor: i.step_anchor,
      kind: i.kind,
      ordinal: i.ordinal,
      previous_status: i.status,
    })),
    substeps_reset: substeps.started,
    ...(substeps.completed.length > 0 ? { substeps_reopened: substeps.completed } : {}),
    refactors_reset: refactors,
  };
}
