/**
 * A worker's uncommitted work moves onto an integration tip that moved while it worked (`git reset --keep`,
 * run/worktrees.ts catchUpTree), so its commit integrates as a fast-forward. Whenever git could not do that
 * without a merge, the tree must be exactly as the implementer left it (the integration then rebases).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gitRunner } from '../../src/git/exec.js';
import { catchUpTree, type WorkerTree } from '../../src/run/worktrees.js';
import { git, tempDir, tempRepo } from '../helpers/repo.js';

/** main with a.txt and c.txt; a worker worktree at main; the integration tip one commit on (changing c.txt). */
function setup(tipFiles: Record<string, string> = { 'c.txt': 'c from the other worker\n' }) {
  const root = tempRepo({ 'a.txt': 'a\n', 'c.txt': 'c\n' });
  const base = git(root, 'rev-parse', 'HEAD').trim();
  const W = join(tempDir(), 'w1');
  git(root, 'worktree', 'add', '-q', '-b', 'worker', W, base);
  // The other worker's step, integrated while this one worked.
  const other = join(tempDir(), 'w2');
  git(root, 'worktree', 'add', '-q', '-b', 'integration', other, base);
  for (const [f, text] of Object.entries(tipFiles)) writeFileSync(join(other, f), text);
  git(other, 'add', '-A');
  git(other, 'commit', '-q', '-m', 'other step');
  const tip = git(other, 'rev-parse', 'HEAD').trim();
  const tree: WorkerTree = { worker: 'w1', k: 1, path: W, branch: 'worker', base };
  return { W, base, tip, tree, g: gitRunner(process.env) };
}

const status = (W: string) => git(W, 'status', '--porcelain', '--untracked-files=all');

describe('catching a worker tree up with a moved integration tip', () => {
  it('moves the uncommitted work onto the tip: changes, new files and the other step all there', async () => {
    const { W, tip, tree, g } = setup();
    writeFileSync(join(W, 'a.txt'), 'a changed here\n');
    writeFileSync(join(W, 'b.txt'), 'new here\n');
    expect(await catchUpTree(g, tree, tip)).toBe(true);
    expect(git(W, 'rev-parse', 'HEAD').trim()).toBe(tip);
    expect(tree.base).toBe(tip);
    expect(readFileSync(join(W, 'c.txt'), 'utf8')).toBe('c from the other worker\n');
    expect(readFileSync(join(W, 'a.txt'), 'utf8')).toBe('a changed here\n');
    expect(status(W).split('\n').filter(Boolean).sort()).toEqual([' M a.txt', '?? b.txt']);
  });

  it('leaves the tree as it was when a file changed on both sides', async () => {
    const { W, base, tip, tree, g } = setup();
    writeFileSync(join(W, 'c.txt'), 'c changed here too\n');
    const before = status(W);
    expect(await catchUpTree(g, tree, tip)).toBe(false);
    expect(git(W, 'rev-parse', 'HEAD').trim()).toBe(base);
    expect(tree.base).toBe(base);
    expect(readFileSync(join(W, 'c.txt'), 'utf8')).toBe('c changed here too\n');
    expect(status(W)).toBe(before);
  });

  it('leaves the tree as it was when an untracked file is in the way', async () => {
    const { W, base, tip, tree, g } = setup({ 'd.txt': 'd from the other worker\n' });
    writeFileSync(join(W, 'd.txt'), 'd made here\n');
    expect(await catchUpTree(g, tree, tip)).toBe(false);
    expect(git(W, 'rev-parse', 'HEAD').trim()).toBe(base);
    expect(readFileSync(join(W, 'd.txt'), 'utf8')).toBe('d made here\n');
  });

  it('never drops commits the implementer made itself', async () => {
    const { W, tip, tree, g } = setup();
    writeFileSync(join(W, 'a.txt'), 'committed by the implementer\n');
    git(W, 'commit', '-q', '-am', 'implementer commit');
    const head = git(W, 'rev-parse', 'HEAD').trim();
    expect(await catchUpTree(g, tree, tip)).toBe(false);
    expect(git(W, 'rev-parse', 'HEAD').trim()).toBe(head);
  });

  it('does nothing when the tip did not move', async () => {
    const { W, base, tree, g } = setup();
    writeFileSync(join(W, 'a.txt'), 'a changed here\n');
    expect(await catchUpTree(g, tree, base)).toBe(false);
    expect(existsSync(join(W, 'c.txt'))).toBe(true);
    expect(git(W, 'rev-parse', 'HEAD').trim()).toBe(base);
  });
});
