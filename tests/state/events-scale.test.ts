/**
 * A long-lived state.db (docs/state.md §4): the reads of one step's events go through the step's index, so
 * their cost follows the step's events, not the plan's. On a plan with 20,000 events (1,000 steps run a few
 * times), every statement that `state log --step`, the board's step detail and `state fail`'s attempt count
 * issue is looked at with EXPLAIN QUERY PLAN: none walks the plan's events (idx_events_plan).
 */
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openWrite, type OpenedDb } from '../../src/state/db.js';
import { countEvents, failedAttemptEvents, listEvents } from '../../src/state/queries/events.js';
import type { Conn, Params } from '../../src/state/sql/conn.js';
import { appendRunEvents } from '../helpers/events.js';
import { tempDir } from '../helpers/repo.js';

const PLAN = '.tugtool/tugplan-big.md';
const STEPS = 1000;
const RUNS = 5;

let db: OpenedDb | undefined;
afterAll(async () => {
  await db?.close();
});

/** The real connection, with each statement's query plan noted before it runs. */
class Explained implements Conn {
  readonly dialect = 'sqlite' as const;
  readonly plans: { sql: string; plan: string[] }[] = [];
  constructor(private readonly c: Conn) {}
  private async explain(sql: string, params?: Params) {
    const rows = await this.c.all<{ detail: string }>(`EXPLAIN QUERY PLAN ${sql}`, params);
    this.plans.push({ sql, plan: rows.map((r) => r.detail) });
  }
  async get<T>(sql: string, params?: Params) {
    await this.explain(sql, params);
    return this.c.get<T>(sql, params);
  }
  async all<T>(sql: string, params?: Params) {
    await this.explain(sql, params);
    return this.c.all<T>(sql, params);
  }
  run(sql: string, params?: Params) {
    return this.c.run(sql, params);
  }
  later(sql: string, params?: Params) {
    this.c.later(sql, params);
  }
}

describe("one step's events in a long-lived state.db", () => {
  it('are read through idx_events_step, never by walking every event of the plan', async () => {
    db = openWrite(join(tempDir('tugcode-events-'), 'state.db'), { create: true });
    // Each run: every step claimed, started, completed (the driver's events), step-7 failing once.
    await db.write(async (c) => appendRunEvents(c, { plan_path: PLAN, runs: RUNS, steps: STEPS, failing: 7 }));
    const plan = await db.read((c) => countEvents(c, { plan_path: PLAN }));
    expect(plan).toBe(RUNS * (3 * STEPS + 1));

    const c = new Explained(db);
    const step = { plan_path: PLAN, step_anchor: 'step-7' };
    const latest = await db.read(() => listEvents(c, { ...step, limit: 3 }));
    expect(latest.map((e) => e.command)).toEqual(['state start', 'state fail', 'state complete']);
    const first = await db.read(() => listEvents(c, { ...step, after_id: 0, limit: 2 }));
    expect(first.map((e) => e.command)).toEqual(['state claim', 'state start']);
    expect(await db.read(() => countEvents(c, { ...step, before_id: latest[0]!.id }))).toBe(4 * RUNS - 3);
    expect(await db.read(() => countEvents(c, { ...step, after_id: first[1]!.id }))).toBe(4 * RUNS - 2);
    const failed = await db.read(() => failedAttemptEvents(c, PLAN, 'step-7'));
    expect(failed.map((e) => JSON.parse(e.details_json).reason)).toEqual(['run 1', 'run 2', 'run 3', 'run 4', 'run 5']);

    expect(c.plans).toHaveLength(5);
    for (const { sql, plan } of c.plans) {
      expect(plan.join(' | '), sql).toMatch(/idx_events_step \(plan_path=\? AND step_anchor=\?\)/);
      expect(plan.join(' | '), sql).not.toMatch(/idx_events_plan|SCAN events/);
    }
  }, 60_000);
});
