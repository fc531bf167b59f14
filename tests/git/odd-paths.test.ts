/**
 * A repository whose path holds a newline: `git worktree list --porcelain` splits such a path over two
 * lines, so its linked worktrees are read from the `-z` form (docs/output.md §5, `--worktree`).
 */
import { renameSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { listWorktrees } from '../../src/git/fast.js';
import { resolveRepo, resolveWorktreeArg } from '../../src/git/repo.js';
import { git, tempDir, tempRepo } from '../helpers/repo.js';

describe('a repository path with a newline', () => {
  it('lists its worktrees and takes one as --worktree', () => {
    const root = join(tempDir(), 'new\nline');
    renameSync(tempRepo(), root);
    const wt = join(root, '.tugtree', 'w');
    git(root, 'worktree', 'add', '-q', '-b', 'w', wt);
    expect(listWorktrees({ mainRoot: root }).map((t) => [t.path, t.branch])).toEqual([
      [root, 'main'],
      [wt, 'w'],
    ]);
    expect(resolveWorktreeArg(resolveRepo(root, {}), wt)).toBe(wt);
    // git's own answer, as when GIT_CEILING_DIRECTORIES is set (docs/git.md §1)
    expect(resolveRepo(wt, { GIT_CEILING_DIRECTORIES: '/nonexistent' })).toMatchObject({
      mainRoot: root,
      worktreeRoot: wt,
    });
  });
});
