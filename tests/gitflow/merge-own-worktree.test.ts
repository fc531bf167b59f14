/**
 * `merge` cleans up only what tugcode made (docs/git.md §5): a worktree of the plan's integration branch
 * that the user added by hand outside `.tugtree/` is kept (and so is its branch, which git cannot delete
 * while checked out), reported in `kept`, never removed.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runJson } from '../helpers/cli.js';
import { git, tempDir } from '../helpers/repo.js';
import { finishPlan, planRepo } from './helpers.js';

describe('merge and a worktree the user made by hand', () => {
  it('keeps a clean, merged worktree outside .tugtree/, and its branch', async () => {
    const root = planRepo();
    await finishPlan(root, [{}, {}], { integrate: true });
    const mine = join(tempDir(), 'my integ');
    git(root, 'worktree', 'add', '-q', mine, 'tugplan/demo');
    const r = runJson('merge', ['merge', 'demo'], { cwd: root });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.json.worktrees_removed.some((p: string) => p.endsWith('my integ'))).toBe(false);
    expect(r.json.kept).toContainEqual({
      branch: 'tugplan/demo',
      worktree_path: mine,
      reason: 'checked out in a worktree tugcode did not make (outside .tugtree/)',
    });
    expect(existsSync(join(mine, 'f0.txt'))).toBe(true);
    expect(git(root, 'branch', '--list', 'tugplan/demo').trim()).toBe('+ tugplan/demo');
  });
});
