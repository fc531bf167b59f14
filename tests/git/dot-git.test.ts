/**
 * The one reader of a work tree's `.git` entry (src/git/dot-git.ts) and what rests on it: the fast paths of
 * `--worktree` (resolveWorktreeArg) and of a tree's HEAD (headTip) answer as git does, and hand to git a
 * tree that is not what its `.git` file claims (a copy of a worktree, a pruned one).
 */
import { cpSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TugError } from '../../src/contract/errors.js';
import { adminDirOf, gitDirsOf, linkedWorktreeFault } from '../../src/git/dot-git.js';
import { gitRunner } from '../../src/git/exec.js';
import { headTip } from '../../src/git/ref-files.js';
import { resolveRepo, resolveWorktreeArg } from '../../src/git/repo.js';
import { git, tempDir, tempRepo } from '../helpers/repo.js';

function linked() {
  const root = tempRepo();
  const wt = join(tempDir(), 'wt');
  git(root, 'worktree', 'add', '-q', '-b', 'feature', wt);
  const admin = git(wt, 'rev-parse', '--absolute-git-dir').trim();
  return { root, wt, admin, common: join(root, '.git') };
}

describe('the .git reader', () => {
  it('reads a main checkout and a linked worktree as git does', () => {
    const { root, wt, admin, common } = linked();
    expect(gitDirsOf(root)).toEqual({ gitDir: join(root, '.git'), commonDir: common, linked: false });
    expect(gitDirsOf(wt)).toEqual({ gitDir: admin, commonDir: common, linked: true });
    expect(linkedWorktreeFault(wt)).toBeNull();
    expect(linkedWorktreeFault(root)).toEqual({ kind: 'no-git-file' });
    expect(adminDirOf(wt)).toBe(admin);
    expect(adminDirOf(root)).toBeNull();
  });

  it('does not take a copy of a worktree for the worktree it was copied from', () => {
    const { wt, admin } = linked();
    const copy = join(tempDir(), 'copy');
    cpSync(wt, copy, { recursive: true });
    expect(gitDirsOf(copy)).toBeNull();
    expect(linkedWorktreeFault(copy)).toEqual({ kind: 'foreign-admin-dir', admin });
    // It is there (the driver's adoption check), just not git's to act in as itself.
    expect(adminDirOf(copy)).toBe(admin);
  });

  it('says why a .git file names nothing usable', () => {
    const { root, wt, admin } = linked();
    rmSync(admin, { recursive: true });
    expect(linkedWorktreeFault(wt)).toEqual({ kind: 'no-admin-dir' });
    expect(adminDirOf(wt)).toBeNull();
    const fake = join(tempDir(), 'fake');
    mkdirSync(join(fake, 'admin'), { recursive: true });
    writeFileSync(join(fake, '.git'), 'gitdir: admin\n');
    expect(linkedWorktreeFault(fake)).toEqual({ kind: 'not-admin-dir', admin: join(fake, 'admin') });
    // git reads `gitdir: ` only at the start of the file, and the path to its end.
    writeFileSync(join(fake, '.git'), `# a comment\ngitdir: ${join(root, '.git')}\n`);
    expect(linkedWorktreeFault(fake)).toEqual({ kind: 'no-admin-dir' });
    rmSync(join(fake, '.git'));
    expect(linkedWorktreeFault(fake)).toEqual({ kind: 'no-git-file' });
  });
});

describe('what rests on it', () => {
  const code = (f: () => unknown) => {
    try {
      f();
    } catch (e) {
      return (e as TugError).code;
    }
    return null;
  };

  it('refuses a copy of a worktree as --worktree, as `git worktree list` does', () => {
    const { root, wt } = linked();
    const copy = join(tempDir(), 'copy');
    cpSync(wt, copy, { recursive: true });
    const repo = resolveRepo(root, {});
    expect(resolveWorktreeArg(repo, wt)).toBe(wt);
    expect(git(root, 'worktree', 'list', '--porcelain')).not.toContain(copy);
    expect(code(() => resolveWorktreeArg(repo, copy))).toBe('WorktreeNotFound');
  });

  it("answers a copy's HEAD through git, which follows its .git file", async () => {
    const { wt } = linked();
    const copy = join(tempDir(), 'copy');
    cpSync(wt, copy, { recursive: true });
    const g = gitRunner(process.env);
    expect(await headTip(g, copy)).toBe(git(copy, 'rev-parse', 'HEAD').trim());
    expect(await headTip(g, wt)).toBe(git(wt, 'rev-parse', 'HEAD').trim());
  });
});
