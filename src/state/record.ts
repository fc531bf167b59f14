/** Appending an event through the context (its `command` unless the event names a secondary change). */
import type { StateContext } from './context.js';
import { appendEvent } from './queries/events.js';
import type { Conn } from './sql/conn.js';

export function recordEvent(
  ctx: StateContext,
  c: Conn,
  e: {
    at: string;
    plan_path: string | null;
    step_anchor: string | null;
    actor: string;
    attempt: number | null;
    details: Record<string, unknown>;
    command?: string;
  },
): void {
  appendEvent(c, { ...e, command: e.command ?? ctx.command });
}
