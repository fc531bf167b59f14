/**
 * `worktree create` names: two `--new` in the same second both get a worktree (the second name gets `-2`),
 * also when they race; a branch named `tugplan` that leaves no room for `tugplan/…` is named with a hint
 * (issue 22 item 18).
 */
import { mkdirSync, renameSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliAsync, expectError, runJson } from '../helpers/cli.js';
import { git } from '../helpers/repo.js';
import { planRepo, snapshot, T0 } from './helpers.js';

const env = { TUGCODE_NOW: T0 };

describe('worktree create names', () => {
  it('two --new in the same second, at the same time: two worktrees with distinct names', async () => {
    const root = planRepo();
    expect(runJson('worktree create', ['worktree', 'create', 'demo'], { cwd: root, env }).code).toBe(0);
    const both = await Promise.all([
      cliAsync(root, ['worktree', 'create', 'demo', '--new'], env),
      cliAsync(root, ['worktree', 'create', 'demo', '--new'], env),
    ]);
    for (const r of both) expect(r.code, r.stderr).toBe(0);
    expect(both.map((r) => r.json.branch_name).sort()).toEqual([
      'tugplan/demo--20260301-100000-2',
      'tugplan/demo--20260301-100000-3',
    ]);
    expect(
      git(root, 'worktree', 'list')
        .split('\n')
        .filter((l) => l.includes('.tugtree')),
    ).toHaveLength(3);
  });

  it('--name that is taken is still WorktreeExists, its hint another name (not the --new it was given)', () => {
    const root = planRepo();
    const args = ['worktree', 'create', 'demo', '--new', '--name', 'mine'];
    expect(runJson('worktree create', args, { cwd: root, env }).code).toBe(0);
    const r = runJson('worktree create', args, { cwd: root, env });
    expectError(r, 'WorktreeExists', 4);
    expect(r.json.error.hint).toBe('pass another --name, or leave it out to name the worktree by the time');
    // A directory of that name, with no branch: the message names it once, the hint the same way out.
    mkdirSync(join(root, '.tugtree', 'tugplan__demo--theirs'), { recursive: true });
    const before = snapshot(root);
    const d = runJson('worktree create', ['worktree', 'create', 'demo', '--new', '--name', 'theirs'], {
      cwd: root,
      env,
    });
    expectError(d, 'WorktreeExists', 4);
    expect(d.json.error.message).toBe(
      `the worktree directory already exists: ${join(root, '.tugtree', 'tugplan__demo--theirs')}`,
    );
    expect(d.json.error.hint).toContain('pass another --name');
    expect(snapshot(root)).toBe(before);
  });

  it('a branch named tugplan: WorktreeExists (exit 4) naming it, with a rename hint; nothing changed', () => {
    const root = planRepo();
    git(root, 'branch', 'tugplan');
    const before = snapshot(root);
    const r = runJson('worktree create', ['worktree', 'create', 'demo'], { cwd: root, env });
    expectError(r, 'WorktreeExists', 4);
    expect(r.json.error.message).toContain('a branch named tugplan exists');
    expect(r.json.error.hint).toBe(
      'rename it (git branch -m tugplan <new-name>), then run tugcode worktree create again',
    );
    expect(snapshot(root)).toBe(before);
  });

  it('a plan that is a symlink: PlanNotCommitted saying it is a symlink, with the fix', () => {
    const root = planRepo();
    renameSync(join(root, '.tugtool', 'tugplan-demo.md'), join(root, 'real-plan.md'));
    symlinkSync('../real-plan.md', join(root, '.tugtool', 'tugplan-demo.md'));
    git(root, 'add', '-A');
    git(root, 'commit', '-q', '-m', 'plan as a link');
    const r = runJson('worktree create', ['worktree', 'create', 'demo'], { cwd: root, env });
    expectError(r, 'PlanNotCommitted', 4);
    expect(r.json.error.message).toBe(
      '.tugtool/tugplan-demo.md is a symlink: git commits the link, not the plan it points to',
    );
    expect(r.json.error.hint).toContain('cp --remove-destination');
  });

  it('the main repository moved after worktree create: the error from the worktree says git worktree repair', async () => {
    const root = planRepo();
    const wt = runJson('worktree create', ['worktree', 'create', 'demo'], { cwd: root, env }).json.worktree_path;
    const moved = `${root}-moved`;
    renameSync(root, moved);
    const r = runJson('state show', ['state', 'show', 'demo'], { cwd: wt.replace(root, moved), env });
    expectError(r, 'NotAGitRepository', 3);
    expect(r.json.error.hint).toContain('git worktree repair');
    renameSync(moved, root);
  });
});
