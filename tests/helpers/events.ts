/**
 * The event log of a plan run many times, written straight through the state's own appendEvent: each run
 * claims, starts and completes every step (the driver's events), `failing` failing once first.
 */
import { appendEvent } from '../../src/state/queries/events.js';
import type { Conn } from '../../src/state/sql/conn.js';

export function appendRunEvents(c: Conn, o: { plan_path: string; runs: number; steps: number; failing: number }): void {
  let t = 0;
  for (let run = 1; run <= o.runs; run++)
    for (let i = 1; i <= o.steps; i++)
      for (const [command, details] of [
        ['state claim', { claimed: true }],
        ['state start', {}],
        ...(i === o.failing ? [['state fail', { failed_attempt: true, reason: `run ${run}` }] as const] : []),
        ['state complete', { completed: true }],
      ] as const)
        appendEvent(c, {
          at: new Date(Date.UTC(2026, 2, 1) + 1000 * t++).toISOString(),
          plan_path: o.plan_path,
          step_anchor: `step-${i}`,
          command,
          actor: `/wt/w${i % 4}`,
          attempt: 1,
          details: { ...details },
        });
}
