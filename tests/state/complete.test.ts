import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { init } from '../../src/state/init.js';
import { claim } from '../../src/state/claim.js';
import { update } from '../../src/state/update.js';
import { complete } from '../../src/state/complete.js';
import { completionBlocker } from '../../src/state/bridge.js';
import { DEMO, DEMO_STEPS, dbPathOf, dump, fakeWorktrees, planRepo, planText, sql, withCtx } from './helpers.js';

let W = '';
const HASH_A = 'a'.repeat(40);
const HASH_B = 'b'.repeat(40);

async function setup(plan = DEMO) {
  const root = planRepo({ '.tugtool/tugplan-demo.md': plan });
  [W] = fakeWorktrees(root, 1) as [string];
  await withCtx(root, {}, async (ctx) => {
    await init(ctx, { plan: 'demo' });
    await claim(ctx, { plan: 'demo', worktree: W });
  });
  return root;
}

const done = (root: string, step: string, extra: Record<string, unknown> = {}) =>
  withCtx(root, {}, (ctx) => complete(ctx, { plan: 'demo', step, worktree: W, ...extra }));

async function refused(root: string, code: string, fn: () => Promise<unknown>) {
  const before = dump(dbPathOf(root));
  const err = await fn().then(
    () => null,
    (e) => e,
  );
  expect(err).toMatchObject({ code });
  expect(dump(dbPathOf(root))).toEqual(before);
  return err as { details: Record<string, unknown> };
}

describe('state complete', () => {
  it('is strict: open items, incomplete substeps and open refactors are each reported with every missing piece', async () => {
    const plan = planText([
      { id: '1', deps: [], tasks: ['a', 'b'], refactors: ['organize-imports --file src/x.ts'] },
      { id: '1.1', level: 5, tasks: ['c'] },
    ]);
    const root = await setup(plan);
    const e1 = await refused(root, 'ChecklistIncomplete', () => done(root, 'step-1'));
    expect(e1.details.open_items).toEqual([
      { kind: 'task', ordinal: 0, text: 'a', status: 'open' },
      { kind: 'task', ordinal: 1, text: 'b', status: 'open' },
    ]);
    expect(e1.details.incomplete_substeps).toEqual(['step-1-1']);
    expect(e1.details.open_refactors).toEqual([
      { ordinal: 0, op_text: 'organize-imports --file src/x.ts', status: 'open' },
    ]);
    await withCtx(root, {}, (ctx) =>
      update(ctx, { plan: 'demo', step: 'step-1', worktree: W, bulk: [{ kind: 'all', status: 'completed' }] }),
    );
    await refused(root, 'SubstepsIncomplete', () => done(root, 'step-1'));
    await withCtx(root, {}, (ctx) =>
      update(ctx, { plan: 'demo', step: 'step-1-1', worktree: W, complete_remaining: true }),
    );
    await refused(root, 'RefactorsIncomplete', () => done(root, 'step-1'));
    expect(
      await withCtx(root, {}, (ctx) => completionBlocker(ctx, { plan: 'demo', step: 'step-1', worktree: W })),
    ).toMatchObject({ code: 'RefactorsIncomplete' });
  });

  it('forces completion: remaining items completed (deferred kept), substeps completed, refactors skipped, reason recorded', async () => {
    const plan = planText([
      { id: '1', deps: [], tasks: ['a', 'b'], refactors: ['organize-imports --file src/x.ts'] },
      { id: '1.1', level: 5, tasks: ['c'] },
    ]);
    const root = await setup(plan);
    await withCtx(root, {}, (ctx) =>
      update(ctx, {
        plan: 'demo',
        step: 'step-1',
        worktree: W,
        items: [{ kind: 'task', ordinal: 1, status: 'deferred', reason: 'later' }],
      }),
    );
    const r = await done(root, 'step-1', { force: 'reviewer approved', commit: HASH_A });
    expect(r).toEqual({
      completed: true,
      step_anchor: 'step-1',
      commit_hash: HASH_A,
      forced: true,
      force_reason: 'reviewer approved',
      completed_via: 'force',
      incomplete_items_auto_completed: 2,
      already_completed: false,
      plan_completed: true,
      remaining_steps: 0,
    });
    expect(sql(root, 'SELECT step_anchor, status FROM checklist_items ORDER BY id')).toEqual([
      { step_anchor: 'step-1', status: 'completed' },
      { step_anchor: 'step-1', status: 'deferred' },
      { step_anchor: 'step-1-1', status: 'completed' },
    ]);
    expect(
      sql(root, "SELECT status, json_extract(result_json, '$.skipped_reason') AS why FROM step_refactors"),
    ).toEqual([{ status: 'skipped', why: 'forced: reviewer approved' }]);
    expect(sql(root, 'SELECT status FROM plans')).toEqual([{ status: 'done' }]);
    expect(
      sql<{ command: string }>(root, 'SELECT command FROM events ORDER BY id')
        .map((e) => e.command)
        .slice(-2),
    ).toEqual(['test', 'plan_done']);
  });

  it('treats completing a completed step as success, records a missing hash, and warns on a different one', async () => {
    const root = await setup();
    await withCtx(root, {}, (ctx) =>
      update(ctx, { plan: 'demo', step: 'step-0', worktree: W, complete_remaining: true }),
    );
    await done(root, 'step-0');
    const again = await done(root, 'step-0', { commit: HASH_A, worktree: '/elsewhere' });
    expect(again).toMatchObject({ completed: true, already_completed: true, commit_hash: HASH_A, forced: false });
    const before = dump(dbPathOf(root));
    const warned = await withCtx(root, {}, async (ctx) => {
      const r = await complete(ctx, { plan: 'demo', step: 'step-0', worktree: W, commit: HASH_B });
      return { r, warnings: ctx.warnings.items };
    });
    expect(warned.r.commit_hash).toBe(HASH_A);
    expect(warned.warnings.map((w) => w.code)).toEqual(['CommitMismatch']);
    expect(dump(dbPathOf(root))).toEqual(before);
  });

  it('releases dependents: completing step-0 makes step-1 claimable', async () => {
    const root = await setup();
    await withCtx(root, {}, (ctx) =>
      update(ctx, { plan: 'demo', step: 'step-0', worktree: W, complete_remaining: true }),
    );
    expect(await done(root, 'step-0')).toMatchObject({ remaining_steps: 2, plan_completed: false });
    expect(sql(root, 'SELECT anchor, unmet_deps FROM steps WHERE parent_anchor IS NULL ORDER BY step_index')).toEqual([
      { anchor: 'step-0', unmet_deps: 0 },
      { anchor: 'step-1', unmet_deps: 0 },
      { anchor: 'step-2', unmet_deps: 1 },
    ]);
  });

  it('refreshes prose with a warning when only text changed, and refuses a structural change with PlanDrift', async () => {
    const root = await setup();
    const file = join(W, '.tugtool', 'tugplan-demo.md');
    writeFileSync(file, DEMO.replace('Write the client', 'Write the API client'));
    const r = await withCtx(root, {}, async (ctx) => {
      await update(ctx, { plan: 'demo', step: 'step-0', worktree: W, complete_remaining: true });
      return ctx.warnings.items.map((w) => w.code);
    });
    expect(r).toEqual(['PlanProseChanged']);
    expect(
      sql(root, "SELECT text FROM checklist_items WHERE step_anchor = 'step-0' AND kind = 'task' AND ordinal = 0"),
    ).toEqual([{ text: 'Write the API client' }]);
    writeFileSync(file, planText([...DEMO_STEPS, { id: '3', deps: ['step-2'], tasks: ['new'] }]));
    const e = await refused(root, 'PlanDrift', () => done(root, 'step-0'));
    expect(e.details.added_steps).toEqual(['step-3']);
    writeFileSync(file, '');
    const { rmSync } = await import('node:fs');
    rmSync(file);
    await refused(root, 'PlanNotFound', () => done(root, 'step-0'));
  });
});
