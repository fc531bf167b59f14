import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { commitStep } from '../../src/gitflow/commit.js';
import { mergePlan } from '../../src/gitflow/merge.js';
import { createWorktree } from '../../src/gitflow/worktree.js';
import { git } from '../helpers/repo.js';
import { flowCtx, PLAN_PATH, planRepo, stepRows, workOn } from './helpers.js';

describe('integration branch (commit --integrate)', () => {
  it('lets two worktrees build on each other, and merge brings the integration branch back', async () => {
    const root = planRepo();
    const a = (await createWorktree(flowCtx(root), { plan: 'demo' })).worktree_path;
    const b = (await createWorktree(flowCtx(root, '2026-03-01T10:01:00.000Z'), { plan: 'demo', new: true }))
      .worktree_path;

    const att1 = await workOn(flowCtx(root), a, 'step-1');
    writeFileSync(join(a, 'alpha.txt'), 'alpha\n');
    const c1 = await commitStep(flowCtx(a), {
      worktree: a,
      plan: PLAN_PATH,
      step: 'step-1',
      message: 'feat: alpha',
      attempt: att1,
      integrate: true,
    });
    expect(c1).toMatchObject({ integrated: true, integration_branch: 'tugplan/demo', state_updated: true });
    expect(git(root, 'rev-parse', 'tugplan/demo').trim()).toBe(c1.commit_hash);
    expect(git(root, 'config', 'branch.tugplan/demo.tugplan').trim()).toBe(PLAN_PATH);

    // B never passes --integrate: the existing integration branch is enough. Its step commit is rebased
    // onto step-1, so B builds on A's work.
    const att2 = await workOn(flowCtx(root), b, 'step-2');
    writeFileSync(join(b, 'beta.txt'), 'beta\n');
    const c2 = await commitStep(flowCtx(b), {
      worktree: b,
      plan: PLAN_PATH,
      step: 'step-2',
      message: 'feat: beta',
      attempt: att2,
    });
    expect(c2).toMatchObject({ integrated: true, state_updated: true, plan_completed: true });
    expect(git(root, 'rev-parse', 'tugplan/demo').trim()).toBe(c2.commit_hash);
    expect(readFileSync(join(b, 'alpha.txt'), 'utf8')).toBe('alpha\n');
    expect((await stepRows(flowCtx(root))).map((s) => s.commit_hash)).toEqual([c1.commit_hash, c2.commit_hash]);

    const m = await mergePlan(flowCtx(root), { plan: 'demo' });
    expect(m).toMatchObject({ merged: true, branch: 'tugplan/demo', into: 'main' });
    expect(m.branches_deleted.sort()).toEqual([
      'tugplan/demo',
      'tugplan/demo--20260301-100000',
      'tugplan/demo--20260301-100100',
    ]);
    expect(m.worktrees_removed.sort()).toEqual([a, b].sort());
  });

  it('a rebase conflict aborts, keeps the commit on the worktree branch and reports integration_conflict', async () => {
    const root = planRepo();
    const a = (await createWorktree(flowCtx(root), { plan: 'demo' })).worktree_path;
    const b = (await createWorktree(flowCtx(root, '2026-03-01T10:01:00.000Z'), { plan: 'demo', new: true }))
      .worktree_path;
    const att1 = await workOn(flowCtx(root), a, 'step-1');
    writeFileSync(join(a, 'shared.txt'), 'from a\n');
    await commitStep(flowCtx(a), {
      worktree: a,
      plan: PLAN_PATH,
      step: 'step-1',
      message: 'feat: a',
      attempt: att1,
      integrate: true,
    });
    const integTip = git(root, 'rev-parse', 'tugplan/demo').trim();

    const att2 = await workOn(flowCtx(root), b, 'step-2');
    writeFileSync(join(b, 'shared.txt'), 'from b\n');
    const c2 = await commitStep(flowCtx(b), {
      worktree: b,
      plan: PLAN_PATH,
      step: 'step-2',
      message: 'feat: b',
      attempt: att2,
    });
    expect(c2).toMatchObject({
      committed: true,
      integrated: false,
      state_update_failed: true,
      state_failure_reason: 'integration_conflict',
    });
    expect(c2.state_error?.error.details).toMatchObject({ files: ['shared.txt'] });
    expect(git(b, 'rev-parse', 'HEAD').trim()).toBe(c2.commit_hash);
    expect(git(b, 'status', '--porcelain')).toBe('');
    expect(git(root, 'rev-parse', 'tugplan/demo').trim()).toBe(integTip);
    expect((await stepRows(flowCtx(root))).find((s) => s.anchor === 'step-2')?.status).toBe('in_progress');
  });

  it('skips integration when strict completion would refuse', async () => {
    const root = planRepo();
    const a = (await createWorktree(flowCtx(root), { plan: 'demo' })).worktree_path;
    writeFileSync(join(a, 'alpha.txt'), 'alpha\n');
    const c = await commitStep(flowCtx(a), {
      worktree: a,
      plan: PLAN_PATH,
      step: 'step-1',
      message: 'feat: alpha',
      integrate: true,
    });
    expect(c).toMatchObject({
      integrated: false,
      integration_branch: 'tugplan/demo',
      state_update_failed: true,
      state_failure_reason: 'ownership',
    });
    expect(git(root, 'branch', '--list', 'tugplan/demo')).toBe('');
  });
});

describe('reconcile after a rebase', () => {
  it('finds the step by its trailers under the new hash', async () => {
    const root = planRepo();
    const wt = (await createWorktree(flowCtx(root), { plan: 'demo' })).worktree_path;
    await workOn(flowCtx(root), wt, 'step-1');
    writeFileSync(join(wt, 'alpha.txt'), 'a\n');
    git(wt, 'add', '-A');
    git(wt, 'commit', '-q', '-m', 'feat: alpha\n\nTug-Step: step-1\nTug-Plan: .tugtool/tugplan-demo.md');
    const old = git(wt, 'rev-parse', 'HEAD').trim();
    writeFileSync(join(root, 'main.txt'), 'm\n');
    git(root, 'add', '-A');
    git(root, 'commit', '-q', '-m', 'main moves on');
    git(wt, 'rebase', '-q', 'main');
    const rebased = git(wt, 'rev-parse', 'HEAD').trim();
    expect(rebased).not.toBe(old);
    await createWorktree(flowCtx(root, '2026-03-01T13:00:00.000Z'), { plan: 'demo', reuse: true });
    expect((await stepRows(flowCtx(root))).find((s) => s.anchor === 'step-1')).toMatchObject({
      status: 'completed',
      commit_hash: rebased,
    });
  });
});

const PARALLEL_PLAN = `## Phase 1.0: Parallel {#phase-par}

**Purpose:** two independent steps.

### Execution Steps {#execution-steps}

#### Step 1: Left {#step-1}

**Depends on:** (none)

**Tasks:**
- [ ] left

#### Step 2: Right {#step-2}

**Depends on:** (none)

**Tasks:**
- [ ] right
`;

describe('parallel commits by hand', () => {
  it('two tugcode commit processes integrating at once both land on the integration branch', async () => {
    const { spawn } = await import('node:child_process');
    const { CLI } = await import('../helpers/cli.js');
    const root = planRepo(PARALLEL_PLAN);
    const a = (await createWorktree(flowCtx(root), { plan: 'demo' })).worktree_path;
    const b = (await createWorktree(flowCtx(root, '2026-03-01T10:01:00.000Z'), { plan: 'demo', new: true }))
      .worktree_path;
    const att = [await workOn(flowCtx(root), a, 'step-1'), await workOn(flowCtx(root), b, 'step-2')];
    writeFileSync(join(a, 'left.txt'), 'l\n');
    writeFileSync(join(b, 'right.txt'), 'r\n');
    const run = (wt: string, step: string, attempt: number) =>
      new Promise<{ code: number | null; out: string }>((resolve) => {
        const p = spawn(
          process.execPath,
          [
            CLI,
            'commit',
            '--json',
            '--integrate',
            '--plan',
            'demo',
            '--step',
            step,
            '--message',
            `feat: ${step}`,
            '--attempt',
            String(attempt),
          ],
          {
            cwd: wt,
            env: { ...process.env, NODE_ENV: 'test', TUGCODE_NOW: '2026-03-01T10:05:00.000Z' },
          },
        );
        let out = '';
        p.stdout.on('data', (d: Buffer) => (out += d.toString()));
        p.on('close', (code) => resolve({ code, out }));
      });
    const [ra, rb] = await Promise.all([run(a, 'step-1', att[0]!), run(b, 'step-2', att[1]!)]);
    const ja = JSON.parse(ra.out);
    const jb = JSON.parse(rb.out);
    expect([ra.code, rb.code]).toEqual([0, 0]);
    expect([ja.integrated, jb.integrated, ja.state_updated, jb.state_updated]).toEqual([true, true, true, true]);
    const onInteg = git(root, 'log', '--format=%(trailers:key=Tug-Step,valueonly)', 'tugplan/demo')
      .split('\n')
      .filter(Boolean)
      .sort();
    expect(onInteg).toEqual(['step-1', 'step-2']);
    expect(git(root, 'ls-tree', '--name-only', 'tugplan/demo').split('\n')).toEqual(
      expect.arrayContaining(['left.txt', 'right.txt']),
    );
    expect([ja.plan_completed || jb.plan_completed]).toEqual([true]);
  });
});

describe('the integration lock', () => {
  it('is Busy (exit 4) when another process holds it past the timeout, and runs nothing', async () => {
    const { withIntegrationLock } = await import('../../src/gitflow/integrate.js');
    const root = planRepo();
    let ran = false;
    await withIntegrationLock(root, async () => {
      await expect(
        withIntegrationLock(
          root,
          () => {
            ran = true;
          },
          300,
        ),
      ).rejects.toMatchObject({ code: 'Busy', exitCode: 4 });
    });
    expect(ran).toBe(false);
    await withIntegrationLock(root, () => {
      ran = true;
    });
    expect(ran).toBe(true);
  });
});
