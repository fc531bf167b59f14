import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { commitStep } from '../../src/gitflow/commit.js';
import { listTugWorktrees, removeWorktree } from '../../src/gitflow/worktree-admin.js';
import { createWorktree } from '../../src/gitflow/worktree.js';
import { git, writeFiles } from '../helpers/repo.js';
import { claimOnly, flowCtx, PLAN, planRepo, snapshot, stepRows, T0, workOn } from './helpers.js';

describe('worktree create refusals leave nothing behind', () => {
  let root: string;
  beforeAll(() => {
    root = planRepo();
  });

  it('refuses a plan that is not committed on the base branch', async () => {
    writeFiles(root, { '.tugtool/tugplan-fresh.md': PLAN });
    const before = snapshot(root);
    await expect(createWorktree(flowCtx(root), { plan: 'fresh' })).rejects.toMatchObject({
      code: 'PlanNotCommitted',
      exitCode: 4,
    });
    expect(snapshot(root)).toBe(before);
    rmSync(join(root, '.tugtool/tugplan-fresh.md'));
  });

  it("refuses when the main checkout's copy differs from the commit", async () => {
    writeFiles(root, { '.tugtool/tugplan-demo.md': PLAN + '\nedited\n' });
    const before = snapshot(root);
    await expect(createWorktree(flowCtx(root), { plan: 'demo' })).rejects.toMatchObject({
      code: 'PlanNotCommitted',
      details: expect.objectContaining({ reason: expect.stringContaining('differs') }),
    });
    expect(snapshot(root)).toBe(before);
    git(root, 'checkout', '--', '.tugtool/tugplan-demo.md');
  });

  it('refuses a missing base branch, a plan path outside the repository and an invalid plan', async () => {
    const before = snapshot(root);
    await expect(createWorktree(flowCtx(root), { plan: 'demo', base: 'nope' })).rejects.toMatchObject({
      code: 'InvalidArgument',
      exitCode: 2,
      details: expect.objectContaining({ base_branch: 'nope' }),
    });
    await expect(createWorktree(flowCtx(root), { plan: '../../etc/passwd.md' })).rejects.toMatchObject({
      code: 'InvalidArgument',
    });
    await expect(createWorktree(flowCtx(root), { plan: 'demo', name: 'w1' })).rejects.toMatchObject({
      code: 'InvalidArgument',
    });
    await expect(createWorktree(flowCtx(root), { plan: 'demo', reuse: true, new: true })).rejects.toMatchObject({
      code: 'InvalidArgument',
    });
    expect(snapshot(root)).toBe(before);
  });

  it('refuses a plan with validator errors', async () => {
    writeFiles(root, { '.tugtool/tugplan-broken.md': '## Phase: nothing here\n\nno steps\n' });
    git(root, 'add', '-A');
    git(root, 'commit', '-q', '-m', 'broken plan');
    const before = snapshot(root);
    await expect(createWorktree(flowCtx(root), { plan: 'broken' })).rejects.toMatchObject({
      code: 'PlanInvalid',
      exitCode: 4,
    });
    expect(snapshot(root)).toBe(before);
  });

  it('removes the worktree, branch and config it made when state init fails after git worktree add', async () => {
    // A corrupt state.db makes `state init` fail after the worktree exists.
    writeFileSync(join(root, '.tugtool/state.db'), 'this is not sqlite');
    try {
      const before = snapshot(root);
      await expect(createWorktree(flowCtx(root), { plan: 'demo' })).rejects.toMatchObject({ code: 'DatabaseError' });
      expect(snapshot(root)).toBe(before);
      expect(existsSync(join(root, '.tugtree'))).toBe(false);
      expect(git(root, 'branch', '--list', 'tugplan/*')).toBe('');
    } finally {
      rmSync(join(root, '.tugtool/state.db'));
    }
  });
});

describe('a second worktree for the same plan', () => {
  let root: string;
  let first: string;
  beforeAll(async () => {
    root = planRepo();
    first = (await createWorktree(flowCtx(root), { plan: 'demo' })).worktree_path;
  });

  it('is refused with WorktreeExists, and nothing changes', async () => {
    const before = snapshot(root);
    await expect(createWorktree(flowCtx(root, '2026-03-01T11:00:00.000Z'), { plan: 'demo' })).rejects.toMatchObject({
      code: 'WorktreeExists',
      exitCode: 4,
      details: expect.objectContaining({ worktree_path: first }),
    });
    expect(snapshot(root)).toBe(before);
  });

  it('is the same one with --reuse', async () => {
    const r = await createWorktree(flowCtx(root, '2026-03-01T11:00:00.000Z'), { plan: 'demo', reuse: true });
    expect(r).toMatchObject({
      worktree_path: first,
      reused: true,
      state_initialized: true,
      all_steps: ['step-1', 'step-2'],
      ready_steps: ['step-1'],
    });
  });

  it('is a new one with --new; in the same second it gets the next free name, a taken --name is refused', async () => {
    const r = await createWorktree(flowCtx(root, '2026-03-01T11:00:00.000Z'), { plan: 'demo', new: true });
    expect(r.branch_name).toBe('tugplan/demo--20260301-110000');
    expect(r.reused).toBe(false);
    const again = await createWorktree(flowCtx(root, '2026-03-01T11:00:00.000Z'), { plan: 'demo', new: true });
    expect(again.branch_name).toBe('tugplan/demo--20260301-110000-2');
    const before = snapshot(root);
    await expect(
      createWorktree(flowCtx(root), { plan: 'demo', new: true, name: '20260301-110000' }),
    ).rejects.toMatchObject({ code: 'WorktreeExists', details: expect.objectContaining({ branch: r.branch_name }) });
    expect(snapshot(root)).toBe(before);
  });
});

describe('worktree list and remove', () => {
  let root: string;
  let wt: string;
  let other: string;
  beforeAll(async () => {
    root = planRepo();
    wt = (await createWorktree(flowCtx(root), { plan: 'demo' })).worktree_path;
    other = (await createWorktree(flowCtx(root, '2026-03-01T10:05:00.000Z'), { plan: 'demo', new: true }))
      .worktree_path;
  });

  it('lists nothing, and creates no state.db, in a repository without worktrees', async () => {
    const fresh = planRepo();
    expect(await listTugWorktrees(flowCtx(fresh))).toEqual({ worktrees: [] });
    expect(existsSync(join(fresh, '.tugtool/state.db'))).toBe(false);
  });

  it('lists both worktrees with their plan, dirty flag and held steps', async () => {
    await claimOnly(flowCtx(root), other, 'step-1');
    writeFileSync(join(wt, 'scratch.txt'), 'x');
    const { worktrees } = await listTugWorktrees(flowCtx(root));
    expect(
      worktrees.map((w) => [w.worktree_path, w.dirty, w.plan_path, w.claimed_steps.map((c) => c.step_anchor)]),
    ).toEqual([
      [wt, true, '.tugtool/tugplan-demo.md', []],
      [other, false, '.tugtool/tugplan-demo.md', ['step-1']],
    ]);
  });

  it('refuses a dirty tree', async () => {
    const before = snapshot(root);
    await expect(removeWorktree(flowCtx(root), wt)).rejects.toMatchObject({ code: 'WorktreeDirty', exitCode: 4 });
    expect(snapshot(root)).toBe(before);
    rmSync(join(wt, 'scratch.txt'));
  });

  it('refuses a branch with commits merged nowhere', async () => {
    writeFileSync(join(wt, 'work.txt'), 'w');
    git(wt, 'add', '-A');
    git(wt, 'commit', '-q', '-m', 'unmerged work');
    const before = snapshot(root);
    await expect(removeWorktree(flowCtx(root), wt)).rejects.toMatchObject({
      code: 'WorktreeUnmerged',
      exitCode: 4,
      details: expect.objectContaining({ count: 1 }),
    });
    expect(snapshot(root)).toBe(before);
  });

  it('refuses a tree that holds a live claim', async () => {
    const before = snapshot(root);
    await expect(removeWorktree(flowCtx(root), 'tugplan__demo--20260301-100500')).rejects.toMatchObject({
      code: 'WorktreeHasClaims',
      exitCode: 4,
    });
    expect(snapshot(root)).toBe(before);
  });

  it('refuses anything that is not a worktree under .tugtree/', async () => {
    await expect(removeWorktree(flowCtx(root), root)).rejects.toMatchObject({ code: 'WorktreeNotFound', exitCode: 3 });
    await expect(removeWorktree(flowCtx(root), 'no-such-tree')).rejects.toMatchObject({ code: 'WorktreeNotFound' });
  });

  it('says "cannot remove the main checkout" for the main root, not that it is no worktree', async () => {
    const before = snapshot(root);
    const e = await removeWorktree(flowCtx(root), root).catch((x: Error) => x);
    expect(e).toMatchObject({ code: 'WorktreeNotFound', details: expect.objectContaining({ worktree: root }) });
    expect((e as Error).message).toBe(
      `cannot remove the main checkout ${root}: tugcode removes only the worktrees under .tugtree/`,
    );
    expect(snapshot(root)).toBe(before);
  });

  it('--force releases the claim, removes only that worktree and its branch, and reports the tip', async () => {
    const tip = git(other, 'rev-parse', 'HEAD').trim();
    const r = await removeWorktree(flowCtx(root), 'tugplan/demo--20260301-100500', { force: true });
    expect(r).toMatchObject({
      removed: true,
      worktree_path: other,
      branch: 'tugplan/demo--20260301-100500',
      branch_deleted: true,
      branch_tip: tip,
      released_claims: [{ plan_path: '.tugtool/tugplan-demo.md', step_anchor: 'step-1' }],
    });
    expect(existsSync(other)).toBe(false);
    expect(existsSync(wt)).toBe(true);
    expect(git(root, 'branch', '--list', '--format=%(refname:short)', 'tugplan/*').trim()).toBe(
      'tugplan/demo--20260301-100000',
    );
    expect((await stepRows(flowCtx(root))).find((s) => s.anchor === 'step-1')).toMatchObject({
      status: 'pending',
      claimed_by: null,
    });
    const { log, openStateContext, closeStateContext } = await import('../../src/state/index.js');
    const ctx = flowCtx(root);
    const s = openStateContext({
      repoRoot: root,
      workTree: root,
      clock: ctx.clock,
      config: ctx.config,
      warnings: ctx.warnings,
      command: 'test',
      mode: 'read',
      env: ctx.env,
    });
    try {
      const events = (await log(s, { plan: '.tugtool/tugplan-demo.md' })).events;
      expect(events.at(-1)).toMatchObject({ command: 'worktree remove', actor: 'admin', step_anchor: 'step-1' });
    } finally {
      await closeStateContext(s);
    }
  });

  it('removes a clean, merged worktree without --force', async () => {
    git(wt, 'reset', '-q', '--hard', 'main');
    const r = await removeWorktree(flowCtx(root), wt);
    expect(r).toMatchObject({ removed: true, branch_deleted: true, released_claims: [] });
    expect(existsSync(join(root, '.tugtree', 'tugplan__demo--20260301-100000'))).toBe(false);
  });
});

describe('healing a commit whose completion never ran', () => {
  it('worktree create --reuse completes the step from the trailer', async () => {
    const root = planRepo();
    const wt = (await createWorktree(flowCtx(root), { plan: 'demo' })).worktree_path;
    await workOn(flowCtx(root), wt, 'step-1');
    // The commit lands, the process "dies" before state complete: commit by hand with the trailers.
    writeFileSync(join(wt, 'alpha.txt'), 'a\n');
    git(wt, 'add', '-A');
    git(wt, 'commit', '-q', '-m', 'feat: alpha\n\nTug-Step: step-1\nTug-Plan: .tugtool/tugplan-demo.md');
    const hash = git(wt, 'rev-parse', 'HEAD').trim();
    expect((await stepRows(flowCtx(root))).find((s) => s.anchor === 'step-1')?.status).toBe('in_progress');
    // Three hours later the lease has expired, so reconcile may settle the step.
    const r = await createWorktree(flowCtx(root, '2026-03-01T13:00:00.000Z'), { plan: 'demo', reuse: true });
    expect(r.ready_steps).toEqual(['step-2']);
    expect((await stepRows(flowCtx(root))).find((s) => s.anchor === 'step-1')).toMatchObject({
      status: 'completed',
      commit_hash: hash,
    });
  });
});

void T0;
void commitStep;

describe('worktree create run inside a linked worktree', () => {
  it("resolves the plan against the main checkout, never against the worktree's own copy", async () => {
    const root = planRepo();
    const first = (await createWorktree(flowCtx(root), { plan: 'demo' })).worktree_path;
    const args = ['demo', '.tugtool/tugplan-demo.md', join(first, '.tugtool', 'tugplan-demo.md')];
    for (const [i, plan] of args.entries()) {
      const r = await createWorktree(flowCtx(first), { plan, new: true, name: `n${i}` });
      expect(r).toMatchObject({
        worktree_path: join(root, '.tugtree', `tugplan__demo--n${i}`),
        plan_path: '.tugtool/tugplan-demo.md',
        base_branch: 'main',
        ready_steps: ['step-1'],
        reused: false,
      });
    }
    // From a subdirectory of the worktree, a path relative to it.
    const r = await createWorktree(flowCtx(join(first, '.tugtool')), {
      plan: './tugplan-demo.md',
      new: true,
      name: 'sub',
    });
    expect(r.plan_path).toBe('.tugtool/tugplan-demo.md');

    // A plan that only the worktree has is not committed on the base branch.
    writeFiles(first, { '.tugtool/tugplan-mine.md': PLAN });
    await expect(createWorktree(flowCtx(first), { plan: 'mine', new: true })).rejects.toMatchObject({
      code: 'PlanNotCommitted',
      details: expect.objectContaining({ plan_path: '.tugtool/tugplan-mine.md' }),
    });
  });
});
