/** Appending an event through the context (its `command` unless the event names a secondary change). */
import type { StateContext } from './context.js';
import { appendEvent } from './queries/events.js';
import type { Db } from './queries/stmt.js';

export function recordEvent(
  ctx: StateContext,
  db: Db,
  e: {
    at: string;
    plan_path: string | null;
    step_anchor: string | null;
    actor: string;
    attempt: number | null;
    details: Record<string, unknown>;
    command?: string;
  },
): number {
  return appendEvent(db, { ...e, command: e.command ?? ctx.command });
}
