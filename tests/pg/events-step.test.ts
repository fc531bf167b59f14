// One step's events on PostgreSQL (src/state/queries/events.ts): the same reads as tests/state/events-scale.test.ts
// (`state log --step` pages and counts, `state fail`'s failed attempts) give the same answers there, and with the
// table's statistics the planner reads them through idx_events_step.
import { describe, expect, it } from 'vitest';
import { countEvents, failedAttemptEvents, listEvents } from '../../src/state/queries/events.js';
import { appendRunEvents } from '../helpers/events.js';
import { createTestDatabase, openStatePg } from '../helpers/pg.js';

const PLAN = '.tugtool/tugplan-big.md';

describe("one step's events on PostgreSQL", () => {
  it('pages, counts and failed attempts of one step among 6,000 events of its plan', async () => {
    const db = await createTestDatabase();
    const pg = (await openStatePg(db.url, 'tug_events_step'))!;
    try {
      await pg.write(async (c) => appendRunEvents(c, { plan_path: PLAN, runs: 3, steps: 500, failing: 7 }));
      await pg.run('ANALYZE events');
      const step = { plan_path: PLAN, step_anchor: 'step-7' };
      const latest = await pg.read((c) => listEvents(c, { ...step, limit: 3 }));
      expect(latest.map((e) => e.command)).toEqual(['state start', 'state fail', 'state complete']);
      const first = await pg.read((c) => listEvents(c, { ...step, after_id: 0, limit: 2 }));
      expect(first.map((e) => e.command)).toEqual(['state claim', 'state start']);
      expect(await pg.read((c) => countEvents(c, { ...step, before_id: latest[0]!.id }))).toBe(12 - 3);
      expect(await pg.read((c) => countEvents(c, { ...step, after_id: first[1]!.id }))).toBe(12 - 2);
      const failed = await pg.read((c) => failedAttemptEvents(c, PLAN, 'step-7'));
      expect(failed.map((e) => JSON.parse(e.details_json).reason)).toEqual(['run 1', 'run 2', 'run 3']);
      const plan = await pg.all<{ 'QUERY PLAN': string }>(
        'EXPLAIN SELECT * FROM events WHERE plan_path = $1 AND step_anchor = $2 ORDER BY +id DESC LIMIT 50',
        [PLAN, 'step-7'],
      );
      expect(plan.map((r) => r['QUERY PLAN']).join('\n')).toMatch(/idx_events_step/);
    } finally {
      await pg.close();
    }
  }, 120_000);
});
