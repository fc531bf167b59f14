import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { init } from '../../src/state/init.js';
import { claim } from '../../src/state/claim.js';
import { update } from '../../src/state/update.js';
import { complete } from '../../src/state/complete.js';
import { prune } from '../../src/state/prune.js';
import {
  DEMO,
  DEMO_PATH,
  DEMO_STEPS,
  T0,
  at,
  dbPathOf,
  dump,
  fakeWorktrees,
  planRepo,
  planText,
  sql,
  withCtx,
} from './helpers.js';

describe('state init', () => {
  it('records steps, items, dependencies and counts in one go, and adds the state.db lines to .gitignore', async () => {
    const root = planRepo();
    const r = await withCtx(root, {}, (ctx) => init(ctx, { plan: 'demo' }));
    expect(r).toMatchObject({
      plan_path: DEMO_PATH,
      steps_created: 5,
      checklist_items_created: 20,
      refactors_created: 0,
      already_initialized: false,
      reinitialized: false,
      implicit_sequential: false,
    });
    expect(r.gitignore_added).toEqual(['.tugtool/state.db', '.tugtool/state.db-wal', '.tugtool/state.db-shm']);
    expect(readFileSync(join(root, '.gitignore'), 'utf8')).toContain('.tugtool/state.db-wal');
    expect(
      sql(
        root,
        'SELECT anchor, parent_anchor, top_anchor, step_id, step_index, depth, unmet_deps FROM steps ORDER BY step_index',
      ),
    ).toEqual([
      {
        anchor: 'step-0',
        parent_anchor: null,
        top_anchor: 'step-0',
        step_id: '0',
        step_index: 0,
        depth: 0,
        unmet_deps: 0,
      },
      {
        anchor: 'step-1',
        parent_anchor: null,
        top_anchor: 'step-1',
        step_id: '1',
        step_index: 1,
        depth: 0,
        unmet_deps: 1,
      },
      {
        anchor: 'step-1-1',
        parent_anchor: 'step-1',
        top_anchor: 'step-1',
        step_id: '1.1',
        step_index: 2,
        depth: 1,
        unmet_deps: 0,
      },
      {
        anchor: 'step-1-2',
        parent_anchor: 'step-1',
        top_anchor: 'step-1',
        step_id: '1.2',
        step_index: 3,
        depth: 1,
        unmet_deps: 0,
      },
      {
        anchor: 'step-2',
        parent_anchor: null,
        top_anchor: 'step-2',
        step_id: '2',
        step_index: 4,
        depth: 0,
        unmet_deps: 1,
      },
    ]);
    expect(sql(root, 'SELECT steps_total, steps_completed, status FROM plans')).toEqual([
      { steps_total: 3, steps_completed: 0, status: 'active' },
    ]);
  });

  it('is idempotent: the same bytes change nothing and append no event', async () => {
    const root = planRepo();
    await withCtx(root, {}, (ctx) => init(ctx, { plan: 'demo' }));
    const before = dump(dbPathOf(root));
    const r = await withCtx(root, { now: at(60) }, (ctx) => init(ctx, { plan: DEMO_PATH }));
    expect(r).toMatchObject({ already_initialized: true, reinitialized: false, steps_created: 0 });
    expect(dump(dbPathOf(root))).toEqual(before);
  });

  it('refreshes prose for the same structure and refuses a new structure without --force', async () => {
    const root = planRepo();
    await withCtx(root, {}, (ctx) => init(ctx, { plan: 'demo' }));
    writeFileSync(join(root, DEMO_PATH), DEMO.replace('Add monitoring', 'Add metrics and monitoring'));
    const r = await withCtx(root, {}, async (ctx) => ({
      r: await init(ctx, { plan: 'demo' }),
      w: ctx.warnings.items.map((w) => w.code),
    }));
    expect(r.r.already_initialized).toBe(true);
    // The demo plan's two W003 validator warnings come first (docs/state.md §4: warnings never stop it).
    expect(r.w).toEqual(['W003', 'W003', 'PlanProseChanged']);
    expect(sql(root, "SELECT title FROM steps WHERE anchor = 'step-2'")).toEqual([
      { title: 'Add metrics and monitoring' },
    ]);
    writeFileSync(join(root, DEMO_PATH), planText(DEMO_STEPS.filter((s) => s.id !== '1.2')));
    const before = dump(dbPathOf(root));
    await expect(withCtx(root, {}, (ctx) => init(ctx, { plan: 'demo' }))).rejects.toMatchObject({
      code: 'PlanDrift',
      details: { removed_steps: ['step-1-2'] },
    });
    expect(dump(dbPathOf(root))).toEqual(before);
  });

  it('re-initializes with --force keeping completed steps and live claims, resetting the rest', async () => {
    const root = planRepo();
    const [W1, W2] = fakeWorktrees(root, 2) as [string, string];
    await withCtx(root, {}, async (ctx) => {
      await init(ctx, { plan: 'demo' });
      await claim(ctx, { plan: 'demo', worktree: W1 });
      await update(ctx, { plan: 'demo', step: 'step-0', worktree: W1, complete_remaining: true });
      await complete(ctx, { plan: 'demo', step: 'step-0', worktree: W1 });
      await claim(ctx, { plan: 'demo', worktree: W2 });
      await update(ctx, {
        plan: 'demo',
        step: 'step-1',
        worktree: W2,
        items: [{ kind: 'task', ordinal: 0, status: 'completed' }],
      });
    });
    const changed = planText([
      ...DEMO_STEPS.filter((s) => s.id !== '2').map((s) =>
        s.id === '1' ? { ...s, tasks: [...s.tasks!, 'a new task'] } : s,
      ),
      { id: '3', deps: ['step-1'], tasks: ['x'] },
    ]);
    writeFileSync(join(root, DEMO_PATH), changed);
    const r = await withCtx(root, { now: at(60) }, (ctx) => init(ctx, { plan: 'demo', force: true }));
    expect(r).toMatchObject({
      reinitialized: true,
      already_initialized: false,
      steps_created: 1,
      checklist_items_created: 2,
    });
    expect(
      sql(root, 'SELECT anchor, status, claimed_by FROM steps WHERE parent_anchor IS NULL ORDER BY step_index'),
    ).toEqual([
      { anchor: 'step-0', status: 'completed', claimed_by: W1 },
      { anchor: 'step-1', status: 'claimed', claimed_by: W2 },
      { anchor: 'step-3', status: 'pending', claimed_by: null },
    ]);
    expect(
      sql(
        root,
        "SELECT ordinal, status FROM checklist_items WHERE step_anchor = 'step-1' AND kind = 'task' ORDER BY ordinal",
      ),
    ).toEqual([
      { ordinal: 0, status: 'completed' },
      { ordinal: 1, status: 'open' },
      { ordinal: 2, status: 'open' },
      { ordinal: 3, status: 'open' },
    ]);
    expect(sql(root, 'SELECT steps_total, steps_completed FROM plans')).toEqual([
      { steps_total: 3, steps_completed: 1 },
    ]);
    // --release-claims resets the live claim too.
    writeFileSync(join(root, DEMO_PATH), changed + '\n');
    await withCtx(root, { now: at(120) }, (ctx) => init(ctx, { plan: 'demo', force: true, release_claims: true }));
    // The attempt number is a fencing token: the reset keeps it, so the next claim is attempt 2, not a second
    // attempt 1 (whose log files would be the first's).
    expect(sql(root, "SELECT status, claimed_by, attempt, failures FROM steps WHERE anchor = 'step-1'")).toEqual([
      { status: 'pending', claimed_by: null, attempt: 1, failures: 0 },
    ]);
    expect(
      sql(root, "SELECT COUNT(*) AS n FROM checklist_items WHERE step_anchor = 'step-1' AND status <> 'open'"),
    ).toEqual([{ n: 0 }]);
  });

  it('refuses an invalid plan with PlanInvalid and creates no file', async () => {
    const root = planRepo({ '.tugtool/tugplan-bad.md': '# nothing here\n' });
    await expect(withCtx(root, { mode: 'read' }, (ctx) => init(ctx, { plan: 'bad' }))).rejects.toMatchObject({
      code: 'PlanInvalid',
    });
    expect(existsSync(dbPathOf(root))).toBe(false);
    expect(existsSync(join(root, '.gitignore'))).toBe(false);
  });

  it('reactivates an archived plan as --force would', async () => {
    const root = planRepo();
    await withCtx(root, {}, (ctx) => init(ctx, { plan: 'demo' }));
    const text = readFileSync(join(root, DEMO_PATH));
    const { rmSync } = await import('node:fs');
    rmSync(join(root, DEMO_PATH));
    expect(await withCtx(root, {}, (ctx) => prune(ctx, { work_trees: [root] }))).toEqual({
      pruned: [DEMO_PATH],
      dry_run: false,
    });
    writeFileSync(join(root, DEMO_PATH), text);
    const r = await withCtx(root, {}, (ctx) => init(ctx, { plan: 'demo' }));
    expect(r.reinitialized).toBe(true);
    expect(sql(root, 'SELECT status FROM plans')).toEqual([{ status: 'active' }]);
    expect(sql<{ command: string }>(root, 'SELECT command FROM events ORDER BY id').map((e) => e.command)).toEqual([
      'test',
      'test',
      'plan_reactivated',
      'test',
    ]);
    void T0;
  });
});
