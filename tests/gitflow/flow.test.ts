import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { commitStep } from '../../src/gitflow/commit.js';
import { mergePlan } from '../../src/gitflow/merge.js';
import { createWorktree } from '../../src/gitflow/worktree.js';
import { git } from '../helpers/repo.js';
import { flowCtx, PLAN_PATH, planRepo, stepRows, workOn } from './helpers.js';

describe('create → commit two steps → merge', () => {
  let root: string;
  let wt: string;
  let branch: string;
  const hashes: string[] = [];

  beforeAll(async () => {
    root = planRepo();
    const ctx = flowCtx(root);
    const created = await createWorktree(ctx, { plan: 'demo' });
    wt = created.worktree_path;
    branch = created.branch_name;
    for (const [i, step] of ['step-1', 'step-2'].entries()) {
      const attempt = await workOn(ctx, wt, step);
      writeFileSync(join(wt, `file${i}.txt`), `content ${i}\n`);
      const c = await commitStep(flowCtx(wt), {
        worktree: wt,
        plan: PLAN_PATH,
        step,
        message: `feat: step ${i + 1}`,
        attempt,
      });
      expect(c.state_update_failed, JSON.stringify(c.state_error)).toBe(false);
      hashes.push(c.commit_hash);
    }
  });

  it('creates the worktree on a tugplan branch with its plan recorded in the branch config', () => {
    expect(branch).toMatch(/^tugplan\/demo--20260301-100000$/);
    expect(wt).toBe(join(root, '.tugtree', 'tugplan__demo--20260301-100000'));
    expect(git(root, 'config', `branch.${branch}.tugplan`).trim()).toBe(PLAN_PATH);
    expect(git(root, 'config', `branch.${branch}.tugbase`).trim()).toBe('main');
  });

  it('completes each step in state with its commit hash', async () => {
    const rows = await stepRows(flowCtx(root));
    expect(rows.map((r) => [r.anchor, r.status, r.commit_hash])).toEqual([
      ['step-1', 'completed', hashes[0]],
      ['step-2', 'completed', hashes[1]],
    ]);
  });

  it('writes one implementation-log file per step and trailers on each commit', () => {
    expect(existsSync(join(wt, '.tugtool/implementation-log/demo/step-1.md'))).toBe(true);
    const msg = git(wt, 'log', '-1', '--format=%B', hashes[1]!);
    expect(msg).toBe('feat: step 2\n\nTug-Step: step-2\nTug-Plan: .tugtool/tugplan-demo.md\n\n');
  });

  it('merges into main with both commits, the regenerated index, and removes the worktree and branch', async () => {
    const r = await mergePlan(flowCtx(root), { plan: 'demo' });
    expect(r.merged).toBe(true);
    expect(r.steps_included).toEqual(['step-1', 'step-2']);
    expect(r.worktrees_removed).toEqual([wt]);
    expect(r.branches_deleted).toEqual([branch]);
    expect(existsSync(wt)).toBe(false);
    expect(git(root, 'branch', '--list', 'tugplan/*').trim()).toBe('');
    for (const h of hashes) expect(git(root, 'merge-base', '--is-ancestor', h, 'main')).toBe('');
    expect(git(root, 'log', '-1', '--format=%P', 'main').trim().split(' ')).toHaveLength(2);
    expect(readFileSync(join(root, 'file1.txt'), 'utf8')).toBe('content 1\n');
    const index = readFileSync(join(root, '.tugtool/tugplan-implementation-log.md'), 'utf8');
    expect(index).toContain('[step-1: Add alpha](implementation-log/demo/step-1.md)');
    expect(index).toContain('[step-2: Add beta](implementation-log/demo/step-2.md)');
    expect(git(root, 'status', '--porcelain').trim()).toBe('');
    const steps = git(root, 'log', '--format=%(trailers:key=Tug-Step,valueonly)', 'main').split('\n').filter(Boolean);
    expect(steps.sort()).toEqual(['step-1', 'step-2']);
    const { planRows } = await import('../../src/gitflow/state-bridge.js');
    expect((await planRows(flowCtx(root))).map((p) => [p.plan_path, p.status])).toEqual([[PLAN_PATH, 'done']]);
  });
});
