/**
 * `git worktree list` while another git adds a work tree (src/git/exec.ts): git dies when it reads the new
 * tree's admin directory half made (`failed to read .git/worktrees/<id>/commondir`, an empty file git has
 * created but not written yet). A run's worker listed the trees (the outside check) while the run added the
 * next worker's tree, and the run ended with GitError (exit 10). The listing is tried again instead, by
 * both runners: the asynchronous one of the flows and the synchronous one of the state commands (their
 * `--worktree` lookup, and the repo resolver's fallback in a linked tree).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gitRunner } from '../../src/git/exec.js';
import { listWorktrees, resolveRepoWithGit } from '../../src/git/fast.js';
import { useGitThread } from '../../src/git/git-thread.js';
import { gitWorktrees, resolveRepo } from '../../src/git/repo.js';
import { which } from '../../src/kernel/backends/python/interpreter.js';
import { git, tempDir, tempRepo } from '../helpers/repo.js';

/**
 * A repository with a linked tree whose admin directory is as `git worktree add` has it for a moment (its
 * `commondir` created, still empty), and a `git` on PATH that runs the real one, then (after a listing)
 * finishes that file as the adding git would, and records each listing's exit code.
 */
function halfAdded() {
  const root = tempRepo();
  const tree = join(tempDir(), 'w');
  git(root, 'worktree', 'add', '--quiet', '-b', 'w', tree);
  // Another linked tree, whole, to start from (the half-made one is no work tree git can run in).
  const other = join(tempDir(), 'v');
  git(root, 'worktree', 'add', '--quiet', '-b', 'v', other);
  const commondir = join(root, '.git', 'worktrees', 'w', 'commondir');
  writeFileSync(commondir, '');
  const bin = tempDir();
  const log = join(bin, 'listings');
  writeFileSync(log, '');
  const real = which('git', process.env)!;
  writeFileSync(
    join(bin, 'git'),
    `#!/bin/sh
${JSON.stringify(real)} "$@"
rc=$?
case " $* " in
  *" worktree list "*) echo $rc >> ${JSON.stringify(log)}; printf '../..\\n' > ${JSON.stringify(commondir)} ;;
esac
exit $rc
`,
    { mode: 0o755 },
  );
  const env = { PATH: `${bin}:${process.env.PATH}` };
  return { root, tree, other, env, listings: () => readFileSync(log, 'utf8').split('\n').filter(Boolean) };
}

describe('git worktree list beside a work tree being added', () => {
  it.each([
    ['simple-git', false],
    ['the git thread (the driver)', true],
  ])('is tried again once the admin directory is written (%s)', async (_name, threaded) => {
    const { root, tree, other, env, listings } = halfAdded();
    const end = threaded ? useGitThread(env) : null;
    try {
      const trees = await gitWorktrees(gitRunner(env), resolveRepo(root, {}));
      expect(trees.map((t) => t.path).sort()).toEqual([root, tree, other].sort());
    } finally {
      await end?.();
    }
    // The first listing met the half-made directory and failed as git does; the second found it written.
    expect(listings()).toEqual(['128', '0']);
  });

  it('is tried again by the synchronous runner of the state commands (their --worktree lookup)', () => {
    const { root, tree, other, env, listings } = halfAdded();
    const trees = listWorktrees(resolveRepo(root, {}), env);
    expect(trees.map((t) => t.path).sort()).toEqual([root, tree, other].sort());
    expect(listings()).toEqual(['128', '0']);
  });

  it("is tried again by the repo resolver's fallback in another linked tree", () => {
    const { root, other, env, listings } = halfAdded();
    const r = resolveRepoWithGit(other, env);
    expect(r).toMatchObject({ worktreeRoot: other, mainRoot: root, isLinkedWorktree: true });
    expect(listings()).toEqual(['128', '0']);
  });
});
