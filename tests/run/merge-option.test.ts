/**
 * `tugcode run --merge` (docs/run.md §1 item 6, docs/git.md §5): the finished plan is merged into its base; a
 * dirty base checkout is refused before any work; a merge that fails at the end keeps the run's summary;
 * `--keep-worktrees` keeps the worker worktrees also when merging.
 */
import { appendFileSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git } from '../helpers/repo.js';
import { gitSnapshot, implementerScript, nodeImplementer, planText, runJsonl, runRepo, step } from './helpers.js';

const PLAN = planText([step(1, 'One'), step(2, 'Two', { deps: [1] })]);

describe('tugcode run --merge', () => {
  it('merges the finished plan into main; with --keep-worktrees the worker worktrees stay', () => {
    const root = runRepo(PLAN);
    const r = runJsonl(root, [
      'demo',
      '--workers',
      '2',
      '--merge',
      '--keep-worktrees',
      '--implementer',
      implementerScript().argv,
    ]);
    expect(r.events.at(-1), r.stderr).toMatchObject({ type: 'summary', status: 'ok' });
    expect(git(root, 'log', '-1', '--format=%P', 'main').trim().split(' ')).toHaveLength(2); // a merge commit
    expect(existsSync(join(root, 'step-2.txt'))).toBe(true);
    const trees = git(root, 'worktree', 'list');
    expect(trees).toContain('tugplan__demo--w1');
    // A chain of two steps keeps one worker busy: no second tree was made (docs/run.md §1 item 3).
    expect(trees).not.toContain('tugplan__demo--w2');
  });

  it('refuses a dirty main checkout before claiming anything', () => {
    const root = runRepo(PLAN, 'demo', { 'notes.txt': 'notes\n' });
    appendFileSync(join(root, 'notes.txt'), 'uncommitted\n');
    const before = gitSnapshot(root);
    const r = runJsonl(root, ['demo', '--merge', '--implementer', implementerScript().argv]);
    expect(r.code).toBe(4);
    expect(r.events).toHaveLength(1);
    expect(r.events[0]).toMatchObject({ type: 'summary', status: 'error', error: { code: 'WorktreeDirty' } });
    expect(gitSnapshot(root)).toEqual(before);
    expect(existsSync(join(root, '.tugtool', 'state.db'))).toBe(false);
  });

  it('keeps the completed steps and commits in the summary when the merge at the end fails', () => {
    // The user's own post-commit hook, there before the run, edits the main checkout when step-2's commit is
    // made: the merge refuses the uncommitted change. (Not an agent or a checkpoint: a change outside the
    // worktree while one runs is OutsideWrite, docs/agents.md §1.6.)
    const plan = planText([step(1, 'One'), step(2, 'Two', { deps: [1] })]);
    const root = runRepo(plan, 'demo', { 'notes.txt': 'notes\n' });
    const hook = join(root, '.git', 'hooks', 'post-commit');
    writeFileSync(
      hook,
      `#!/bin/sh\ngit log -1 --format=%B | grep -q '^Tug-Step: step-2$' && echo edited >> '${join(root, 'notes.txt')}'\nexit 0\n`,
      { mode: 0o755 },
    );
    const impl = nodeImplementer(`writeFileSync(join(wt, step + '.txt'), step + '\\n');`);
    const r = runJsonl(root, ['demo', '--workers', '1', '--merge', '--implementer', impl.argv]);
    const summary = r.events.at(-1);
    expect(r.code).toBe(4);
    expect(summary).toMatchObject({ type: 'summary', status: 'error', error: { code: 'WorktreeDirty' } });
    expect([...summary.steps_completed].sort()).toEqual(['step-1', 'step-2']);
    expect(summary.commits).toHaveLength(2);
    expect(summary.workers).toHaveLength(1);
  });
});
