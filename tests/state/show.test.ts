import { cpSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { init } from '../../src/state/init.js';
import { claim } from '../../src/state/claim.js';
import { start } from '../../src/state/start.js';
import { update } from '../../src/state/update.js';
import { complete } from '../../src/state/complete.js';
import { fail } from '../../src/state/release.js';
import { artifact } from '../../src/state/artifact.js';
import { reconcile } from '../../src/state/reconcile.js';
import { show } from '../../src/state/show.js';
import { renderShow } from '../../src/state/show-text.js';
import { tempDir } from '../helpers/repo.js';
import { T0, at, fakeWorktrees, planRepo, planText, withCtx } from './helpers.js';

/** A worktree directory with a given name (the text shows the owner's last path component). */
function namedWorktree(root: string, name: string): string {
  const d = join(tempDir('tugcode-show-'), name);
  mkdirSync(d);
  cpSync(join(root, '.tugtool'), join(d, '.tugtool'), { recursive: true, filter: (s) => !s.includes('state.db') });
  return d;
}

// The seed mock, with each item's 0-based ordinal (`state update --task N`, issue 22 item 24).
const SEED_MOCK = `Plan: .tugtool/tugplan-demo.md [active]

Step 0: Create API client [completed]
  Tasks:       2/2  ████████████ 100%
  Tests:       1/1  ████████████ 100%
  Checkpoints: 2/2  ████████████ 100%
  Commit: abc123d

Step 1: Add caching layer [in_progress] (claimed by worktree-A)
  Tasks:       1/3  ████░░░░░░░░  33%
    task 0 [x] Implement cache store
    task 1 [ ] Add cache invalidation    ← in_progress
    task 2 [ ] Wire up to API client
  Tests:       0/1  ░░░░░░░░░░░░   0%
    test 0 [ ] Cache test
  Checkpoints: 0/1  ░░░░░░░░░░░░   0%
    checkpoint 0 [ ] npm test
  Lease: expires in 1h 45m

  Step 1.1: Cache store implementation [completed]
    Tasks:       2/2  ████████████ 100%
    Tests:       1/1  ████████████ 100%

  Step 1.2: Cache invalidation [in_progress]
    Tasks:       0/2  ░░░░░░░░░░░░   0%
    Tests:       0/1  ░░░░░░░░░░░░   0%

Step 2: Add monitoring [pending] (blocked by: step-1)
  Tasks:       0/2  ░░░░░░░░░░░░   0%
  Tests:       0/1  ░░░░░░░░░░░░   0%
  Checkpoints: 0/1  ░░░░░░░░░░░░   0%

Overall: 1/3 steps complete (33%)
`;

describe('state show', () => {
  it('renders the seed mock: bars, substeps indented, items of the active step, lease and footer', async () => {
    const root = planRepo();
    const W = namedWorktree(root, 'worktree-A');
    const p = { plan: 'demo', worktree: W };
    await withCtx(root, { now: T0 }, async (ctx) => {
      await init(ctx, { plan: 'demo' });
      await claim(ctx, p);
      await update(ctx, { ...p, step: 'step-0', complete_remaining: true });
      await complete(ctx, { ...p, step: 'step-0', commit: 'abc123d'.padEnd(40, '0') });
      await claim(ctx, p);
      await update(ctx, { ...p, step: 'step-1-1', complete_remaining: true });
      await start(ctx, { ...p, step: 'step-1-2' });
      await update(ctx, {
        ...p,
        step: 'step-1',
        items: [
          { kind: 'task', ordinal: 0, status: 'completed' },
          { kind: 'task', ordinal: 1, status: 'in_progress' },
        ],
      });
    });
    const now = at(15 * 60);
    const text = await withCtx(root, { now, mode: 'read' }, async (ctx) =>
      renderShow(await show(ctx, { plan: 'demo' }), { now, color: false }),
    );
    expect(text).toBe(SEED_MOCK);
  });

  it('annotates forced, reconciled, failed and expired steps, attempts and failures', async () => {
    const plan = planText(
      ['1', '2', '3', '4', '5'].map((id) => ({ id, title: `Step title ${id}`, deps: [], tasks: ['t'] })),
    );
    const root = planRepo({ '.tugtool/tugplan-demo.md': plan });
    const [W1, W2, W3] = fakeWorktrees(root, 3) as [string, string, string];
    await withCtx(root, { now: T0, maxAttempts: 2 }, async (ctx) => {
      await init(ctx, { plan: 'demo' });
      await claim(ctx, { plan: 'demo', worktree: W1, step: 'step-1' });
      await complete(ctx, {
        plan: 'demo',
        step: 'step-1',
        worktree: W1,
        force: 'reviewer approved with minor caveats',
      });
      await reconcile(ctx, {
        plan: 'demo',
        commits: [{ hash: 'f'.repeat(40), committer_time: 1, steps: ['step-2'], plans: ['.tugtool/tugplan-demo.md'] }],
      });
      await claim(ctx, { plan: 'demo', worktree: W2, step: 'step-3', lease_seconds: 60 });
      await claim(ctx, { plan: 'demo', worktree: W3, step: 'step-4' });
      await fail(ctx, { plan: 'demo', step: 'step-4', worktree: W3, reason: 'tests red' });
    });
    await withCtx(root, { now: at(120), maxAttempts: 2 }, async (ctx) => {
      await claim(ctx, { plan: 'demo', worktree: W3, step: 'step-4' });
      await fail(ctx, { plan: 'demo', step: 'step-4', worktree: W3, reason: 'still red' });
      await claim(ctx, { plan: 'demo', worktree: W1, step: 'step-3', lease_seconds: 60 });
    });
    const now = at(120 + 60 + 300);
    const text = await withCtx(root, { now, mode: 'read' }, async (ctx) =>
      renderShow(await show(ctx, { plan: 'demo', items: 'none' }), { now, color: false }),
    );
    const owner = W1.split('/').pop();
    expect(text).toBe(`Plan: .tugtool/tugplan-demo.md [active]

Step 1: Step title 1 [completed] (forced: "reviewer approved with minor caveats")
  Tasks:       1/1  ████████████ 100%

Step 2: Step title 2 [completed] (reconciled)
  Tasks:       1/1  ████████████ 100%
  Commit: fffffff

Step 3: Step title 3 [claimed] (claimed by ${owner}) (attempt 2) (failures: 1)
  Tasks:       0/1  ░░░░░░░░░░░░   0%
  Lease: EXPIRED 5m ago

Step 4: Step title 4 [failed] (failed: "still red") (attempt 2) (failures: 2)
  To run it again: tugcode state reset .tugtool/tugplan-demo.md step-4
  Tasks:       0/1  ░░░░░░░░░░░░   0%

Step 5: Step title 5 [pending]
  Tasks:       0/1  ░░░░░░░░░░░░   0%

Overall: 2/5 steps complete (40%)
`);
  });

  it('mirrors the text in JSON, giving substeps the owner and lease of their top-level step', async () => {
    const root = planRepo();
    const [W] = fakeWorktrees(root, 1) as [string];
    await withCtx(root, { now: T0 }, async (ctx) => {
      await init(ctx, { plan: 'demo' });
      await claim(ctx, { plan: 'demo', worktree: W });
    });
    const r = await withCtx(root, { now: T0, mode: 'read' }, (ctx) => show(ctx, { plan: 'demo', step: 'step-1' }));
    expect(r.plans[0]!.steps.map((s) => s.anchor)).toEqual(['step-1', 'step-1-1', 'step-1-2']);
    const all = await withCtx(root, { now: T0, mode: 'read' }, (ctx) => show(ctx, {}));
    const s0 = all.plans[0]!.steps[0]!;
    expect(s0).toMatchObject({
      anchor: 'step-0',
      status: 'claimed',
      claimed_by: W,
      lease_expires_at: at(7200),
      lease_expired: false,
      attempt: 1,
    });
    expect(s0.items).toHaveLength(5);
    expect(all.plans[0]!.steps[1]!.items).toEqual([]);
    expect(all.plans[0]!.steps[4]!.blocked_by).toEqual(['step-1']);
    expect(all.plans[0]!.overall).toEqual({ steps_completed: 0, steps_total: 3, percent: 0 });
  });

  it("lists a --step view's artifacts under the step that has them, their summary's first line in the text", async () => {
    const root = planRepo();
    const [W] = fakeWorktrees(root, 1) as [string];
    const long = `${'x'.repeat(120)}\nsecond line`;
    await withCtx(root, { now: T0 }, async (ctx) => {
      await init(ctx, { plan: 'demo' });
      await claim(ctx, { plan: 'demo', worktree: W, step: 'step-0' });
      await complete(ctx, { plan: 'demo', worktree: W, step: 'step-0', force: 'skip' });
      await claim(ctx, { plan: 'demo', worktree: W });
      await artifact(ctx, { plan: 'demo', step: 'step-1-1', worktree: W, kind: 'note', summary: long, content: 'ok' });
    });
    const view = (step: string) =>
      withCtx(root, { now: T0, mode: 'read' }, (ctx) => show(ctx, { plan: 'demo', step, items: 'none' }));
    const r = await view('step-1');
    const [top, sub, other] = r.plans[0]!.steps;
    expect([top!.counts.artifacts, top!.artifacts]).toEqual([0, []]);
    expect(sub!.artifacts).toEqual([
      { id: 1, kind: 'note', summary: long, content_length: 2, recorded_at: T0, recorded_by: W, attempt: 1 },
    ]);
    expect(other!.artifacts).toEqual([]);
    expect((await view('step-1-2')).plans[0]!.steps[0]!.artifacts).toEqual([]);
    const text = renderShow(r, { now: T0, color: false });
    expect(text).toContain(
      `    Artifacts (content: tugcode state export .tugtool/tugplan-demo.md):\n` +
        `      #1 note 2026-03-01T10:00:00Z (attempt 1, by ${W.split('/').pop()}): ${'x'.repeat(99)}…\n`,
    );
    expect(text).not.toContain('second line');
  });

  it('shows nothing, and creates nothing, when there is no state.db', async () => {
    const root = planRepo();
    const r = await withCtx(root, { mode: 'read' }, (ctx) => show(ctx, {}));
    expect(r).toEqual({ plans: [] });
    await expect(withCtx(root, { mode: 'read' }, (ctx) => show(ctx, { plan: 'demo' }))).rejects.toMatchObject({
      code: 'PlanNotInitialized',
    });
    await expect(withCtx(root, { mode: 'read' }, (ctx) => show(ctx, { plan: 'nope' }))).rejects.toMatchObject({
      code: 'PlanNotFound',
    });
  });
});
