/**
 * `run` names its worker branches `tugplan/<slug>--w<k>` and marks them with the branch config it writes
 * (docs/git.md §3). A branch of that name it did not make, with the user's own commit on it, is never moved,
 * reset or deleted: the run refuses before it changes anything (issue 22 item 12).
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, tempDir, writeFiles } from '../helpers/repo.js';
import { implementerScript, planText, runJsonl, runRepo, step } from '../run/helpers.js';
import { snapshot } from './helpers.js';

const PLAN = planText([step(1, 'Alpha'), step(2, 'Beta')]);

/** The user's branch `tugplan/demo--w1` with a commit of their own, not checked out. */
function userBranch(root: string): string {
  git(root, 'switch', '-q', '-c', 'tugplan/demo--w1');
  writeFiles(root, { 'mine.txt': 'my work\n' });
  git(root, 'add', 'mine.txt');
  git(root, 'commit', '-q', '-m', 'my own work');
  const tip = git(root, 'rev-parse', 'HEAD');
  git(root, 'switch', '-q', 'main');
  return tip;
}

describe('run and a worker branch it did not make', () => {
  it('refuses with WorktreeExists (exit 4) and a hint; the branch, its commit and the repository stay as they were', () => {
    const root = runRepo(PLAN);
    const tip = userBranch(root);
    const before = snapshot(root, { objects: false });
    const impl = implementerScript();
    const r = runJsonl(root, ['demo', '--workers', '2', '--implementer', impl.argv]);
    expect(r.code).toBe(4);
    const summary = r.events.at(-1);
    expect(summary.error).toMatchObject({ code: 'WorktreeExists', details: { branch: 'tugplan/demo--w1' } });
    expect(summary.error.message).toContain('was not made by tugcode run');
    expect(summary.error.hint).toBe('rename it (git branch -m tugplan/demo--w1 <new-name>), then run again');
    expect(git(root, 'rev-parse', 'tugplan/demo--w1')).toBe(tip);
    expect(git(root, 'branch', '--list', 'tugplan/demo')).toBe('');
    expect(snapshot(root, { objects: false })).toBe(before);
  });

  it('refuses when the branch is checked out in a worktree of the user, and leaves that tree alone', () => {
    const root = runRepo(PLAN);
    const tip = userBranch(root);
    const mine = join(tempDir(), 'mine');
    git(root, 'worktree', 'add', '-q', mine, 'tugplan/demo--w1');
    writeFiles(mine, { 'draft.txt': 'uncommitted\n' });
    const r = runJsonl(root, ['demo', '--implementer', implementerScript().argv]);
    expect(r.code).toBe(4);
    expect(r.events.at(-1).error.code).toBe('WorktreeExists');
    expect(git(mine, 'rev-parse', 'HEAD')).toBe(tip);
    expect(git(mine, 'status', '--porcelain')).toBe('?? draft.txt\n');
  });

  it('after the branch is renamed the run goes on, and the renamed branch keeps its commit', () => {
    const root = runRepo(PLAN);
    const tip = userBranch(root);
    git(root, 'branch', '-m', 'tugplan/demo--w1', 'mine');
    const r = runJsonl(root, ['demo', '--workers', '2', '--implementer', implementerScript().argv]);
    expect(r.events.at(-1), r.stderr).toMatchObject({ type: 'summary', status: 'ok' });
    expect(git(root, 'rev-parse', 'mine')).toBe(tip);
    // The run's own worker branches are gone again after a successful run.
    expect(git(root, 'branch', '--list', 'tugplan/demo--w*')).toBe('');
  });
});
