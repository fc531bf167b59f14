/**
 * `merge` of a plan merged already (docs/git.md §5): its branches are gone, so there is nothing to merge;
 * when every step commit is on the target, it answers "already merged" (exit 0, changing nothing), as for a
 * branch already contained in the target, not BranchNotFound with a hint to implement the plan first.
 */
import { describe, expect, it } from 'vitest';
import { runCli, runJson } from '../helpers/cli.js';
import { git } from '../helpers/repo.js';
import { finishPlan, planRepo } from './helpers.js';

describe('merge again after the plan was merged', () => {
  it('answers already merged, exit 0, nothing changed; the text says so', async () => {
    const root = planRepo();
    await finishPlan(root, [{}, {}], { integrate: true });
    expect(runCli(['merge', 'demo'], { cwd: root }).code).toBe(0);
    const main = git(root, 'rev-parse', 'main').trim();
    for (const dry of [[], ['--dry-run']]) {
      const r = runJson('merge', ['merge', 'demo', ...dry], { cwd: root });
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(r.json).toMatchObject({
        merged: dry.length === 0,
        already_merged: true,
        merge_commit: null,
        branch: 'tugplan/demo',
        into: 'main',
        steps_included: ['step-1', 'step-2'],
        worktrees_removed: [],
        branches_deleted: [],
      });
    }
    const text = runCli(['merge', 'demo'], { cwd: root });
    expect(text.stdout).toContain('already merged tugplan/demo into main: 2 step(s)');
    expect(git(root, 'rev-parse', 'main').trim()).toBe(main);
  });

  it('a plan never run still gets BranchNotFound', () => {
    const root = planRepo();
    runCli(['state', 'init', 'demo'], { cwd: root });
    const r = runJson('merge', ['merge', 'demo', '--force'], { cwd: root });
    expect(r.json.error.code).toBe('BranchNotFound');
  });
});
