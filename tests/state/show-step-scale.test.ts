/**
 * `state show <plan> --step` on a long plan (docs/state.md §5.1): the driver asks for it for every unit it
 * runs (the brief), the board for every step detail opened. It reads the step's subtree and the rows its
 * blockers name, not the plan: the rows its statements return stay a handful on a 1,000-step plan, and its
 * answer is the whole plan's view cut to the subtree.
 */
import { cpSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { claim } from '../../src/state/claim.js';
import { update } from '../../src/state/update.js';
import { tempDir } from '../helpers/repo.js';
import { init } from '../../src/state/init.js';
import { complete } from '../../src/state/complete.js';
import { show } from '../../src/state/show.js';
import type { Conn, Database, Params } from '../../src/state/sql/conn.js';
import type { StateContext } from '../../src/state/context.js';
import { planRepo, planText, withCtx, type StepSpec } from './helpers.js';

/** The real store, with the rows each statement of a read returned counted, and its query plan noted. */
function counted(db: Database): { db: Database; rows: () => number; plans: string[] } {
  let rows = 0;
  const plans: string[] = [];
  const explain = async (c: Conn, sql: string, p?: Params) => {
    const steps = await c.all<{ detail: string }>(`EXPLAIN QUERY PLAN ${sql}`, p);
    plans.push(`${sql.replace(/\s+/g, ' ')}\n  ${steps.map((s) => s.detail).join(' | ')}`);
  };
  const wrap = (c: Conn): Conn => ({
    dialect: c.dialect,
    get: async <T>(sql: string, p?: Params) => {
      await explain(c, sql, p);
      const r = await c.get<T>(sql, p);
      if (r !== undefined) rows++;
      return r;
    },
    all: async <T>(sql: string, p?: Params) => {
      await explain(c, sql, p);
      const r = await c.all<T>(sql, p);
      rows += r.length;
      return r;
    },
    run: (sql: string, p?: Params) => c.run(sql, p),
    later: (sql: string, p?: Params) => c.later(sql, p),
  });
  const out = Object.create(db) as Database;
  out.read = (fn) => db.read((c) => fn(wrap(c)));
  out.write = (fn, o) => db.write((c) => fn(wrap(c)), o);
  return { db: out, rows: () => rows, plans };
}

/**
 * 1,000 steps, two tasks each, each depending on the one before; step-500 has two substeps, the second
 * depending on the first and on step-498 (outside its subtree).
 */
function longPlan(): string {
  const steps: StepSpec[] = [];
  for (let i = 1; i <= 1000; i++) {
    steps.push({ id: String(i), deps: i > 1 ? [`step-${i - 1}`] : [], tasks: ['write', 'wire'] });
    if (i === 500)
      steps.push(
        { id: '500.1', level: 5, tasks: ['a'] },
        { id: '500.2', level: 5, deps: ['step-500-1', 'step-498'], tasks: ['b'] },
      );
  }
  return planText(steps);
}

/** Statements that read a table of the plan's rows by the plan alone (the plans row and the usage ledger aside). */
const planWide = (plans: string[]) =>
  plans.filter((p) =>
    /(SCAN|SEARCH) (?!plans\b|step_usage\b)\w+[^|]*\(plan_path=\?\)|SCAN (steps|checklist_items|step_deps|step_lifted_deps|events)\b/.test(
      p,
    ),
  );

describe('state show --step on a 1,000-step plan', () => {
  it("reads the step's subtree, not the plan; the answer is the plan's view cut to it", async () => {
    const root = planRepo({ '.tugtool/tugplan-long.md': longPlan() });
    await withCtx(root, {}, async (ctx) => {
      expect((await init(ctx, { plan: 'long' })).steps_created).toBe(1002);
      // step-1 done: step-2 is no longer blocked (its blocker's row is read from outside its subtree).
      const W = join(tempDir('tugcode-show-'), 'w');
      mkdirSync(W);
      cpSync(join(root, '.tugtool'), join(W, '.tugtool'), { recursive: true, filter: (f) => !f.includes('state.db') });
      await claim(ctx, { plan: 'long', worktree: W });
      await update(ctx, { plan: 'long', worktree: W, step: 'step-1', complete_remaining: true });
      await complete(ctx, { plan: 'long', worktree: W, step: 'step-1', commit: 'abc123d'.padEnd(40, '0') });
      const whole = (await show(ctx, { plan: 'long', items: 'all' })).plans[0]!;
      expect(whole.steps).toHaveLength(1002);
      for (const step of ['step-500', 'step-500-2', 'step-2', 'step-1000']) {
        const c = counted(ctx.store!);
        const one: StateContext = { ...ctx, store: c.db };
        const view = (await show(one, { plan: 'long', step, items: 'all' })).plans[0]!;
        const keep = step === 'step-500' ? ['step-500', 'step-500-1', 'step-500-2'] : [step];
        expect(view.steps.map((s) => s.anchor)).toEqual(keep);
        expect(view.steps).toEqual(whole.steps.filter((s) => keep.includes(s.anchor)));
        expect({ ...view, steps: [] }).toEqual({ ...whole, steps: [] });
        // The plan's 1,002 steps, 2,003 items and 1,001 dependencies are not read: a few dozen rows.
        expect(c.rows(), step).toBeLessThan(40);
        // Nor walked: no statement reads a table of the plan's rows by the plan alone (the plan's own row, and
        // the ledger's usage rows, summed for the plan's total, aside).
        expect(planWide(c.plans), step).toEqual([]);
      }
      const sub = (await show(ctx, { plan: 'long', step: 'step-500-2' })).plans[0]!.steps[0]!;
      expect(sub.blocked_by).toEqual(['step-498', 'step-500-1']);
      expect((await show(ctx, { plan: 'long', step: 'step-2' })).plans[0]!.steps[0]!.blocked_by).toEqual([]);
      expect((await show(ctx, { plan: 'long', step: 'step-3' })).plans[0]!.steps[0]!.blocked_by).toEqual(['step-2']);
    });
  }, 120_000);

  it("state update of a substep reads its step's subtree, not the plan's items and refactors", async () => {
    const steps: StepSpec[] = [];
    for (let i = 1; i <= 1000; i++) {
      steps.push({ id: String(i), deps: [], tasks: ['write', 'wire'] });
      if (i === 500) steps.push({ id: '500.1', level: 5, deps: [], tasks: ['a', 'b'] });
    }
    const root = planRepo({ '.tugtool/tugplan-wide.md': planText(steps) });
    await withCtx(root, {}, async (ctx) => {
      await init(ctx, { plan: 'wide' });
      const W = join(tempDir('tugcode-show-'), 'w');
      mkdirSync(W);
      cpSync(join(root, '.tugtool'), join(W, '.tugtool'), { recursive: true, filter: (f) => !f.includes('state.db') });
      const p = { plan: 'wide', worktree: W };
      expect((await claim(ctx, { ...p, step: 'step-500' })).claimed).toBe(true);
      const c = counted(ctx.store!);
      await update({ ...ctx, store: c.db }, { ...p, step: 'step-500-1', complete_remaining: true });
      expect(planWide(c.plans)).toEqual([]);
      expect((await show(ctx, { plan: 'wide', step: 'step-500-1' })).plans[0]!.steps[0]!.status).toBe('completed');
    });
  }, 120_000);
});
