import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { init } from '../../src/state/init.js';
import { claim } from '../../src/state/claim.js';
import { update, type UpdateInput } from '../../src/state/update.js';
import { parseBatch } from '../../src/state/update-input.js';
import { dbPathOf, dump, fakeWorktrees, planRepo, planText, sql, withCtx } from './helpers.js';

let W = '';

async function claimedStep1() {
  const root = planRepo();
  [W] = fakeWorktrees(root, 1) as [string];
  await withCtx(root, {}, async (ctx) => {
    await init(ctx, { plan: 'demo' });
    await claim(ctx, { plan: 'demo', worktree: W, step: 'step-0' });
    await update(ctx, { plan: 'demo', step: 'step-0', worktree: W, complete_remaining: true });
    const { complete } = await import('../../src/state/complete.js');
    await complete(ctx, { plan: 'demo', step: 'step-0', worktree: W });
    await claim(ctx, { plan: 'demo', worktree: W });
  });
  return root;
}

const up = (root: string, step: string, input: Partial<UpdateInput>) =>
  withCtx(root, {}, (ctx) => update(ctx, { plan: 'demo', step, worktree: W, ...input }));

async function refused(root: string, code: string, fn: () => Promise<unknown>) {
  const before = dump(dbPathOf(root));
  await expect(fn()).rejects.toMatchObject({ code });
  expect(dump(dbPathOf(root))).toEqual(before);
}

describe('state update', () => {
  it('changes named items and reports per-kind counts of the step', async () => {
    const root = await claimedStep1();
    const r = await up(root, 'step-1', {
      items: [
        { kind: 'task', ordinal: 0, status: 'completed' },
        { kind: 'task', ordinal: 1, status: 'in_progress' },
        { kind: 'test', ordinal: 0, status: 'deferred' },
      ],
      reason: 'needs a fixture',
    });
    expect(r).toEqual({
      updated: 3,
      step_anchor: 'step-1',
      tasks: { open: 1, in_progress: 1, completed: 1, deferred: 0 },
      tests: { open: 0, in_progress: 0, completed: 0, deferred: 1 },
      checkpoints: { open: 1, in_progress: 0, completed: 0, deferred: 0 },
      step_auto_completed: false,
      auto_completed_steps: [],
    });
    expect(sql(root, "SELECT reason FROM checklist_items WHERE step_anchor = 'step-1' AND kind = 'test'")).toEqual([
      { reason: 'needs a fixture' },
    ]);
  });

  it('appends no event when it changes nothing (a repeated update, an empty batch)', async () => {
    const root = await claimedStep1();
    const events = () => Number(sql(root, 'SELECT COUNT(*) AS n FROM events')[0]!.n);
    const item = [{ kind: 'task' as const, ordinal: 0, status: 'completed' as const }];
    expect((await up(root, 'step-1', { items: item })).updated).toBe(1);
    const n = events();
    const before = dump(dbPathOf(root));
    expect((await up(root, 'step-1', { items: item })).updated).toBe(0);
    expect((await up(root, 'step-1', { items: [], batch: true })).updated).toBe(0);
    expect(events()).toBe(n);
    expect(dump(dbPathOf(root))).toEqual(before);
    // A reason-only change is a change: it is written and recorded.
    await up(root, 'step-1', { items: [{ kind: 'test', ordinal: 0, status: 'deferred' }], reason: 'a' });
    await up(root, 'step-1', { items: [{ kind: 'test', ordinal: 0, status: 'deferred' }], reason: 'b' });
    expect(events()).toBe(n + 2);
  });

  it('validates everything before changing anything', async () => {
    const root = await claimedStep1();
    await refused(root, 'InvalidArgument', () =>
      up(root, 'step-1', { items: [{ kind: 'task', ordinal: 99, status: 'completed' }] }),
    );
    await refused(root, 'InvalidArgument', () =>
      up(root, 'step-1', {
        items: [
          { kind: 'task', ordinal: 0, status: 'completed' },
          { kind: 'test', ordinal: 0, status: 'deferred' },
        ],
      }),
    );
    await refused(root, 'InvalidBatch', () =>
      up(root, 'step-1', {
        items: [
          { kind: 'task', ordinal: 0, status: 'completed' },
          { kind: 'task', ordinal: 0, status: 'open' },
        ],
      }),
    );
    await refused(root, 'InvalidBatch', () =>
      up(root, 'step-1', { batch: true, items: [{ kind: 'task', ordinal: 5, status: 'completed' }] }),
    );
    await refused(root, 'InvalidArgument', () => up(root, 'step-1', {}));
    await up(root, 'step-1', { items: [{ kind: 'task', ordinal: 0, status: 'completed' }] });
    await refused(root, 'InvalidTransition', () =>
      up(root, 'step-1', { items: [{ kind: 'task', ordinal: 0, status: 'open' }] }),
    );
  });

  it('lets per-item changes override bulk ones, and skips done items for a bulk reopen', async () => {
    const root = await claimedStep1();
    await up(root, 'step-1', { items: [{ kind: 'task', ordinal: 2, status: 'completed' }] });
    const r = await up(root, 'step-1', {
      bulk: [
        { kind: 'task', status: 'in_progress' },
        { kind: 'all', status: 'completed' },
      ],
      items: [{ kind: 'test', ordinal: 0, status: 'in_progress' }],
    });
    expect(r.tasks).toEqual({ open: 0, in_progress: 2, completed: 1, deferred: 0 });
    expect(r.tests).toEqual({ open: 0, in_progress: 1, completed: 0, deferred: 0 });
    expect(r.checkpoints).toEqual({ open: 0, in_progress: 0, completed: 1, deferred: 0 });
  });

  it('moves a pending substep to in_progress and auto-completes substeps deepest first', async () => {
    const plan = planText([
      { id: '1', deps: [], tasks: ['parent'] },
      { id: '1.1', level: 5, tasks: ['a'] },
      { id: '1.1.1', level: 6, tasks: ['deep'] },
      { id: '1.1.2', level: 6 },
      { id: '1.2', level: 5, tasks: ['b'] },
    ]);
    const root = planRepo({ '.tugtool/tugplan-demo.md': plan });
    [W] = fakeWorktrees(root, 1) as [string];
    await withCtx(root, {}, async (ctx) => {
      await init(ctx, { plan: 'demo' });
      await claim(ctx, { plan: 'demo', worktree: W });
    });
    const a = await up(root, 'step-1-1-1', { items: [{ kind: 'task', ordinal: 0, status: 'in_progress' }] });
    // Only the updated step's subtree and its substep ancestors are considered: the sibling step-1-1-2 waits.
    expect(a.auto_completed_steps).toEqual([]);
    expect(sql(root, "SELECT status FROM steps WHERE anchor = 'step-1-1-1'")).toEqual([{ status: 'in_progress' }]);
    const b = await up(root, 'step-1-1', { complete_remaining: true });
    expect(b.auto_completed_steps).toEqual(['step-1-1-1', 'step-1-1-2', 'step-1-1']);
    expect(b.step_auto_completed).toBe(true);
    await refused(root, 'InvalidTransition', () =>
      up(root, 'step-1-1', { items: [{ kind: 'task', ordinal: 0, status: 'completed' }] }),
    );
    // --complete-remaining on the top-level step finishes the remaining substep too; the parent never auto-completes.
    const c = await up(root, 'step-1', { complete_remaining: true });
    expect(c.auto_completed_steps).toEqual(['step-1-2']);
    expect(sql(root, 'SELECT anchor, status FROM steps ORDER BY step_index').map((r) => r.status)).toEqual([
      'claimed',
      'completed',
      'completed',
      'completed',
      'completed',
    ]);
  });

  it('parses --batch documents and rejects anything that is not an array of valid entries', () => {
    expect(parseBatch('[{"kind":"tasks","ordinal":1,"status":"deferred","reason":"r"}]')).toEqual([
      { kind: 'task', ordinal: 1, status: 'deferred', reason: 'r' },
    ]);
    for (const bad of [
      '',
      '   ',
      '{}',
      'nope',
      '[1]',
      '[{"kind":"x","ordinal":0,"status":"completed"}]',
      '[{"kind":"task","ordinal":-1,"status":"completed"}]',
      '[{"kind":"task","ordinal":0,"status":"done"}]',
      '[{"kind":"task","ordinal":0,"status":"open","extra":1}]',
    ]) {
      expect(() => parseBatch(bad), bad).toThrow(expect.objectContaining({ code: 'InvalidBatch' }));
    }
  });

  it('never reopens a terminal item and keeps the counts consistent under random update sequences', async () => {
    const root = await claimedStep1();
    const statuses = ['open', 'in_progress', 'completed', 'deferred'] as const;
    const kinds = ['task', 'test', 'checkpoint'] as const;
    const sizes = { task: 3, test: 1, checkpoint: 1 };
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({ kind: fc.constantFrom(...kinds), ordinal: fc.nat(3), status: fc.constantFrom(...statuses) }),
          { minLength: 1, maxLength: 3 },
        ),
        async (changes) => {
          const before = sql<{ kind: string; ordinal: number; status: string }>(
            root,
            "SELECT kind, ordinal, status FROM checklist_items WHERE step_anchor = 'step-1'",
          );
          let r;
          try {
            r = await up(root, 'step-1', { items: changes, reason: 'r' });
          } catch (e) {
            expect(['InvalidArgument', 'InvalidBatch', 'InvalidTransition']).toContain((e as { code: string }).code);
            expect(sql(root, "SELECT kind, ordinal, status FROM checklist_items WHERE step_anchor = 'step-1'")).toEqual(
              before,
            );
            return;
          }
          const after = sql<{ kind: string; ordinal: number; status: string }>(
            root,
            "SELECT kind, ordinal, status FROM checklist_items WHERE step_anchor = 'step-1'",
          );
          for (const b of before) {
            const a = after.find((x) => x.kind === b.kind && x.ordinal === b.ordinal)!;
            if (b.status === 'completed' || b.status === 'deferred')
              expect(['completed', 'deferred']).toContain(a.status);
          }
          for (const k of kinds) {
            const c = r[`${k}s` as 'tasks'];
            expect(c.open + c.in_progress + c.completed + c.deferred).toBe(sizes[k]);
          }
        },
      ),
      { numRuns: 40, seed: 42 },
    );
  });
});
