/**
 * A step commit whose integration conflicted, rebased onto the integration branch and resolved by hand, then
 * committed again (docs/git.md §4.2): the rerun makes no new commit (`committed: false`), even with
 * `--allow-empty`, and integrates and completes the step's one commit. A second commit would give the step
 * two `Tug-Step` commits on the integration branch.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { runCli, runJson } from '../helpers/cli.js';
import { git, writeFiles } from '../helpers/repo.js';
import { planRepo } from './helpers.js';

const T1 = '2026-03-01T10:00:00.000Z';
const T2 = '2026-03-01T10:01:00.000Z';

/** Claim, start and finish the items of the next ready step in `wt` through the CLI; its anchor and attempt. */
function workOnNext(root: string, wt: string): { step: string; attempt: string } {
  const c = runJson('state claim', ['state', 'claim', 'demo', '--worktree', wt], { cwd: root }).json;
  expect(c.claimed).toBe(true);
  const step: string = c.step_anchor;
  const attempt = String(c.attempt);
  runJson('state start', ['state', 'start', 'demo', step, '--worktree', wt, '--attempt', attempt], { cwd: root });
  runJson(
    'state update',
    ['state', 'update', 'demo', step, '--worktree', wt, '--attempt', attempt, '--complete-remaining'],
    { cwd: root },
  );
  return { step, attempt };
}

const commit = (root: string, wt: string, w: { step: string; attempt: string }, msg: string, ...more: string[]) =>
  runJson(
    'commit',
    ['commit', '--worktree', wt, '--plan', 'demo', '--step', w.step, '--attempt', w.attempt, '--message', msg, ...more],
    { cwd: root },
  ).json;

/** `Tug-Step` values of the commits on `ref`, oldest first. */
const stepsOn = (root: string, ref: string) =>
  git(root, 'log', '--reverse', '--format=%(trailers:key=Tug-Step,valueonly)', ref)
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);

/**
 * Two worktrees of the plan editing the same line: the first commit is integrated; the second's
 * `tugcode commit` arguments (add `--message` and `--integrate`) meet the conflict.
 */
function conflictingCommit(): { root: string; args: string[] } {
  const root = planRepo();
  const a = runJson('worktree create', ['worktree', 'create', 'demo', '--reuse'], {
    cwd: root,
    env: { TUGCODE_NOW: T1 },
  }).json.worktree_path;
  const b = runJson('worktree create', ['worktree', 'create', 'demo', '--new'], {
    cwd: root,
    env: { TUGCODE_NOW: T2 },
  }).json.worktree_path;
  const w1 = workOnNext(root, a);
  writeFiles(a, { 'shared.txt': 'from a\n' });
  commit(root, a, w1, 'feat: a', '--integrate');
  const w2 = workOnNext(root, b);
  writeFiles(b, { 'shared.txt': 'from b\n' });
  const args = ['commit', '--worktree', b, '--plan', 'demo', '--step', w2.step, '--attempt', w2.attempt];
  return { root, args };
}

describe('commit again after a resolved integration conflict', () => {
  for (const allowEmpty of [false, true]) {
    it(`makes no new commit${allowEmpty ? ' even with --allow-empty' : ''}: it integrates and completes the step's one commit`, () => {
      const root = planRepo();
      const env1 = { TUGCODE_NOW: T1 };
      const a = runJson('worktree create', ['worktree', 'create', 'demo', '--reuse'], { cwd: root, env: env1 }).json
        .worktree_path;
      const b = runJson('worktree create', ['worktree', 'create', 'demo', '--new'], {
        cwd: root,
        env: { TUGCODE_NOW: T2 },
      }).json.worktree_path;

      const w1 = workOnNext(root, a);
      writeFiles(a, { 'shared.txt': 'from a\n' });
      expect(commit(root, a, w1, 'feat: a', '--integrate')).toMatchObject({ integrated: true, state_updated: true });

      // B works on the base, not on the integration tip: its change conflicts with A's.
      const w2 = workOnNext(root, b);
      expect(w2.step).toBe('step-2');
      writeFiles(b, { 'shared.txt': 'from b\n' });
      const c2 = commit(root, b, w2, 'feat: b', '--integrate');
      expect(c2).toMatchObject({ committed: true, integrated: false, state_failure_reason: 'integration_conflict' });

      // docs/git.md §4.2: rebase onto the integration branch, resolve, continue.
      const rebase = spawnSync('git', ['rebase', 'tugplan/demo'], { cwd: b, encoding: 'utf8' });
      expect(rebase.status).not.toBe(0);
      writeFiles(b, { 'shared.txt': 'from a and b\n' });
      git(b, 'add', 'shared.txt');
      git(b, '-c', 'core.editor=true', 'rebase', '--continue');
      const rebased = git(b, 'rev-parse', 'HEAD').trim();

      const again = commit(root, b, w2, 'feat: b', '--integrate', ...(allowEmpty ? ['--allow-empty'] : []));
      expect(again).toMatchObject({
        committed: false,
        commit_hash: rebased,
        integrated: true,
        state_updated: true,
        state_update_failed: false,
        plan_completed: true,
      });
      expect(git(b, 'rev-parse', 'HEAD').trim()).toBe(rebased);
      expect(git(root, 'rev-parse', 'tugplan/demo').trim()).toBe(rebased);
      expect(stepsOn(root, 'tugplan/demo')).toEqual(['step-1', 'step-2']);
      expect(git(root, 'show', 'tugplan/demo:shared.txt')).toBe('from a and b\n');
    });
  }

  it('in text, the conflict says what to do next: rebase, resolve, the same commit again (not state reconcile)', () => {
    const { root, args } = conflictingCommit();
    const r = runCli([...args, '--message', 'feat: b', '--integrate'], { cwd: root });
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain('state reconcile');
    expect(r.stdout).toContain(
      '  next: in the worktree of tugplan/demo--20260301-100100: git rebase tugplan/demo, resolve shared.txt, ' +
        'git add it and git rebase --continue; then run this tugcode commit --integrate again',
    );
  });

  it('the conflict is worded as the rebase it was, not a merge (docs/git.md §4.2)', () => {
    const { root, args } = conflictingCommit();
    const j = runJson('commit', [...args, '--message', 'feat: b', '--integrate'], { cwd: root }).json;
    const branch = 'tugplan/demo--20260301-100100';
    const said =
      `rebasing ${branch} onto tugplan/demo conflicts in shared.txt; the rebase was aborted and the commit ` +
      `stays on ${branch}`;
    expect(j.state_error.error).toMatchObject({
      code: 'MergeConflict',
      message: said,
      details: { branch, into: 'tugplan/demo', files: ['shared.txt'], rebase: 'aborted' },
    });
    const r = runCli([...args, '--integrate'], { cwd: root });
    expect(r.stdout).toContain(`state NOT updated (integration_conflict): ${said}\n`);
    expect(r.stdout + r.stderr).not.toContain('merge was aborted');
  });

  it('--allow-empty still makes an empty commit when HEAD is not an unintegrated commit of this step', () => {
    const root = planRepo();
    const a = runJson('worktree create', ['worktree', 'create', 'demo', '--reuse'], { cwd: root }).json.worktree_path;
    const w1 = workOnNext(root, a);
    const head = git(a, 'rev-parse', 'HEAD').trim();
    const c = commit(root, a, w1, 'chore: nothing to change', '--integrate', '--allow-empty');
    expect(c).toMatchObject({ committed: true, integrated: true, state_updated: true });
    expect(git(a, 'rev-parse', 'HEAD~1').trim()).toBe(head);
    expect(stepsOn(root, 'tugplan/demo')).toEqual(['step-1']);
  });
});
