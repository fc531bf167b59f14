import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TugError } from '../../src/contract/errors.js';
import { mergePlan } from '../../src/gitflow/merge.js';
import { createWorktree } from '../../src/gitflow/worktree.js';
import { git, writeFiles } from '../helpers/repo.js';
import { claimOnly, finishPlan, flowCtx, planRepo, snapshot, stepRows, workOn } from './helpers.js';

describe('tugcode merge refusals', () => {
  it('refuses a plan whose steps are not all completed, and changes nothing', async () => {
    const root = planRepo();
    const wt = (await createWorktree(flowCtx(root), { plan: 'demo' })).worktree_path;
    await workOn(flowCtx(root), wt, 'step-1');
    const before = snapshot(root);
    await expect(mergePlan(flowCtx(root), { plan: 'demo' })).rejects.toMatchObject({
      code: 'PlanIncomplete',
      exitCode: 4,
      details: expect.objectContaining({
        incomplete_steps: [
          { step_anchor: 'step-1', status: 'in_progress' },
          { step_anchor: 'step-2', status: 'pending' },
        ],
      }),
    });
    expect(snapshot(root)).toBe(before);
  });

  it('refuses a plan that was never initialized', async () => {
    const root = planRepo();
    await expect(mergePlan(flowCtx(root), { plan: 'demo' })).rejects.toMatchObject({
      code: 'PlanNotInitialized',
      exitCode: 3,
    });
  });

  it('aborts a conflicting merge cleanly: the repository is byte-identical afterwards', async () => {
    const root = planRepo();
    const { wt, branch } = await finishPlan(root, [{ 'README.md': 'from the plan\n' }, { 'b.txt': 'b\n' }]);
    writeFileSync(join(root, 'README.md'), 'from main\n');
    git(root, 'commit', '-q', '-am', 'main moves on');
    const before = snapshot(root);
    await expect(mergePlan(flowCtx(root), { plan: 'demo' })).rejects.toMatchObject({
      code: 'MergeConflict',
      exitCode: 4,
      details: expect.objectContaining({ files: ['README.md'], branch, into: 'main' }),
    });
    expect(snapshot(root)).toBe(before);
    expect(existsSync(wt)).toBe(true);
    await expect(mergePlan(flowCtx(root), { plan: 'demo', dryRun: true })).rejects.toMatchObject({
      code: 'MergeConflict',
    });
    expect(snapshot(root)).toBe(before);
  });

  it("hints a way out of a merge conflict that works: the target merged on the plan's branch, then merge again", async () => {
    const root = planRepo();
    const { wt, branch } = await finishPlan(root, [{ 'README.md': 'from the plan\n' }, { 'b.txt': 'b\n' }]);
    writeFileSync(join(root, 'README.md'), 'from main\n');
    git(root, 'commit', '-q', '-am', 'main moves on');
    const e = (await mergePlan(flowCtx(root), { plan: 'demo' }).catch((x: unknown) => x)) as TugError;
    expect(e.hint).toBe(
      `resolve it on ${branch}: in a checkout of it (its worktree, or git switch ${branch}) run git merge main, fix the conflicted files, git add them and git commit; then tugcode merge .tugtool/tugplan-demo.md again from main`,
    );
    spawnSync('git', ['merge', '-q', 'main'], { cwd: wt });
    writeFileSync(join(wt, 'README.md'), 'both\n');
    git(wt, 'commit', '-q', '-am', 'merge main');
    await expect(mergePlan(flowCtx(root), { plan: 'demo' })).resolves.toMatchObject({ merged: true });
    expect(git(root, 'show', 'main:README.md')).toBe('both\n');
  });

  it("refuses when a completed step's commit is not on the branch being merged", async () => {
    const root = planRepo();
    const { hashes } = await finishPlan(root, [{}, {}]);
    const other = await createWorktree(flowCtx(root, '2026-03-01T10:30:00.000Z'), { plan: 'demo', new: true });
    const before = snapshot(root);
    await expect(mergePlan(flowCtx(root), { plan: 'demo', branch: other.branch_name })).rejects.toMatchObject({
      code: 'CommitNotIntegrated',
      exitCode: 4,
      details: expect.objectContaining({ step_anchor: 'step-1', commit_hash: hashes[0] }),
    });
    expect(snapshot(root)).toBe(before);
  });

  it('refuses to merge into a checkout with uncommitted changes to tracked files', async () => {
    const root = planRepo();
    await finishPlan(root, [{}, {}]);
    writeFileSync(join(root, 'README.md'), 'local edit\n');
    const before = snapshot(root);
    await expect(mergePlan(flowCtx(root), { plan: 'demo' })).rejects.toMatchObject({
      code: 'WorktreeDirty',
      exitCode: 4,
    });
    expect(snapshot(root)).toBe(before);
  });

  it('names the untracked file a merge would overwrite, and does not offer --force (which cannot help)', async () => {
    const root = planRepo();
    const { branch } = await finishPlan(root, [{ 'a.txt': 'a\n' }, { 'b.txt': 'b\n' }]);
    writeFileSync(join(root, 'b.txt'), 'mine, untracked\n');
    const before = snapshot(root, { objects: false });
    for (const force of [false, true]) {
      const e = await mergePlan(flowCtx(root), { plan: 'demo', force }).then(
        () => null,
        (x: unknown) => x as { code: string; exitCode: number; message: string; hint?: string; details: object },
      );
      expect(e).toMatchObject({
        code: 'WorktreeDirty',
        exitCode: 4,
        details: expect.objectContaining({ worktree_path: root, branch: 'main', untracked_files: ['b.txt'] }),
      });
      expect(e!.message).toBe(`merging ${branch} into main would overwrite untracked file(s) in ${root}: b.txt`);
      expect(e!.message).not.toContain('uncommitted');
      expect(e!.hint).toContain('move or delete it');
      expect(e!.hint).not.toContain('--force');
      expect(snapshot(root, { objects: false })).toBe(before);
    }
  });
});

describe('tugcode merge', () => {
  it('--dry-run reports the merge and the cleanup without changing anything', async () => {
    const root = planRepo();
    const { wt, branch } = await finishPlan(root, [{}, {}]);
    const before = snapshot(root);
    const r = await mergePlan(flowCtx(root), { plan: 'demo', dryRun: true });
    expect(r).toMatchObject({
      merged: false,
      merge_commit: null,
      dry_run: true,
      branch,
      into: 'main',
      steps_included: ['step-1', 'step-2'],
      worktrees_removed: [wt],
      branches_deleted: [branch],
    });
    expect(snapshot(root)).toBe(before);
  });

  it('verifies a rebased branch by its Tug-Step trailers (patch-equivalent commits)', async () => {
    const root = planRepo();
    const { wt, hashes } = await finishPlan(root, [{ 'a.txt': 'a\n' }, { 'b.txt': 'b\n' }]);
    writeFileSync(join(root, 'main.txt'), 'm\n');
    git(root, 'add', '-A');
    git(root, 'commit', '-q', '-m', 'main moves on');
    git(wt, 'rebase', '-q', 'main');
    const rebased = git(wt, 'rev-parse', 'HEAD').trim();
    expect(rebased).not.toBe(hashes[1]);
    const r = await mergePlan(flowCtx(root), { plan: 'demo' });
    expect(r.merged).toBe(true);
    expect(r.step_commits['step-2']).toBe(rebased);
    expect(git(root, 'merge-base', '--is-ancestor', rebased, 'main')).toBe('');
  });

  it('keeps a worktree with uncommitted changes and a branch with commits not in the merge', async () => {
    const root = planRepo();
    const { wt, branch } = await finishPlan(root, [{}, {}]);
    writeFileSync(join(wt, 'scratch.txt'), 'wip');
    const r = await mergePlan(flowCtx(root), { plan: 'demo' });
    expect(r.merged).toBe(true);
    expect(r.worktrees_removed).toEqual([]);
    expect(r.kept).toEqual([{ branch, worktree_path: wt, reason: 'worktree has uncommitted changes' }]);
    expect(existsSync(join(wt, 'scratch.txt'))).toBe(true);
  });

  it('merges into a branch that is not checked out anywhere, and regenerates the log index in the merge commit', async () => {
    const root = planRepo();
    git(root, 'branch', 'release');
    await finishPlan(root, [{}, {}]);
    const head = git(root, 'rev-parse', 'HEAD').trim();
    const r = await mergePlan(flowCtx(root), { plan: 'demo', into: 'release' });
    expect(r).toMatchObject({ merged: true, into: 'release' });
    expect(git(root, 'rev-parse', 'HEAD').trim()).toBe(head);
    expect(git(root, 'show', 'release:.tugtool/tugplan-implementation-log.md')).toContain('[step-1: Add alpha]');
    expect(git(root, 'log', '-1', '--format=%s', 'release').trim()).toMatch(/^Merge tugplan\/demo--.*: demo$/);
    expect(git(root, 'status', '--porcelain')).toBe('');
  });

  it('--force merges an incomplete plan and keeps the worktree that holds a live claim', async () => {
    const root = planRepo();
    const wt = (await createWorktree(flowCtx(root), { plan: 'demo' })).worktree_path;
    await claimOnly(flowCtx(root), wt, 'step-1');
    writeFiles(wt, { 'x.txt': 'x' });
    git(wt, 'add', '-A');
    git(wt, 'commit', '-q', '-m', 'partial');
    const r = await mergePlan(flowCtx(root), { plan: 'demo', force: true });
    expect(r).toMatchObject({
      merged: true,
      steps_included: [],
      worktrees_removed: [],
      kept: [{ worktree_path: wt, reason: 'worktree holds a live claim' }],
    });
    expect(existsSync(wt)).toBe(true);
    expect((await stepRows(flowCtx(root))).map((s) => s.status)).toEqual(['claimed', 'pending']);
  });
});
