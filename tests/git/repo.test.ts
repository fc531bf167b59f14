import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { clearRepoCache, resolveRepo, resolveWorktreeArg } from '../../src/git/repo.js';
import { TugError } from '../../src/contract/errors.js';
import { git, tempDir, tempRepo } from '../helpers/repo.js';

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    return (e as TugError).code;
  }
  return 'no error';
}

describe('repo resolver', () => {
  beforeEach(() => clearRepoCache());

  it('finds the main root from a subdirectory', () => {
    const root = tempRepo();
    mkdirSync(join(root, 'a', 'b'), { recursive: true });
    const r = resolveRepo(join(root, 'a', 'b'), {});
    expect(r).toMatchObject({
      worktreeRoot: root,
      mainRoot: root,
      commonDir: join(root, '.git'),
      isLinkedWorktree: false,
    });
  });

  it('finds the main root from inside a linked worktree', () => {
    const root = tempRepo();
    const wt = join(tempDir(), 'wt');
    git(root, 'worktree', 'add', '-q', '-b', 'feature', wt);
    mkdirSync(join(wt, 'sub'));
    const r = resolveRepo(join(wt, 'sub'), {});
    expect(r).toMatchObject({ worktreeRoot: wt, mainRoot: root, isLinkedWorktree: true });
  });

  it('gives the same answer through git when GIT_* variables force the fallback', () => {
    const root = tempRepo();
    const wt = join(tempDir(), 'wt');
    git(root, 'worktree', 'add', '-q', '-b', 'feature', wt);
    const fast = resolveRepo(wt, {});
    clearRepoCache();
    const slow = resolveRepo(wt, { GIT_CEILING_DIRECTORIES: '/nonexistent' });
    expect(slow).toEqual(fast);
  });

  it('canonicalizes a symlinked path to the same roots', () => {
    const root = tempRepo();
    const link = join(tempDir(), 'link');
    symlinkSync(root, link);
    expect(resolveRepo(link, {}).mainRoot).toBe(root);
  });

  it('takes the main checkout, not the common dir parent, for a separate git dir', () => {
    const base = tempDir();
    const work = join(base, 'work');
    git(base, 'init', '-q', '--separate-git-dir', join(base, 'store.git'), work);
    const r = resolveRepo(work, {});
    expect(r.mainRoot).toBe(work);
    expect(r.worktreeRoot).toBe(work);
  });

  it('takes the submodule checkout as the root inside a submodule', () => {
    const sub = tempRepo();
    const sup = tempRepo();
    git(sup, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', sub, 'mod');
    const r = resolveRepo(join(sup, 'mod'), {});
    expect(r.mainRoot).toBe(join(sup, 'mod'));
    expect(r.worktreeRoot).toBe(join(sup, 'mod'));
    expect(r.commonDir).toBe(join(sup, '.git', 'modules', 'mod'));
  });

  it('refuses a directory outside any repository with NotAGitRepository (exit 3)', () => {
    const dir = tempDir();
    let err: TugError | undefined;
    try {
      resolveRepo(dir, { GIT_CEILING_DIRECTORIES: dir });
    } catch (e) {
      err = e as TugError;
    }
    expect(err?.code).toBe('NotAGitRepository');
    expect(err?.exitCode).toBe(3);
  });

  it('says a file is not a directory, and a missing path does not exist', () => {
    const root = tempRepo();
    writeFileSync(join(root, 'f.txt'), 'x');
    expect(() => resolveRepo(join(root, 'f.txt'), {})).toThrow(/f\.txt is not a directory$/);
    expect(() => resolveRepo(join(root, 'nope'), {})).toThrow(/directory .*nope does not exist$/);
  });

  it('refuses to run inside the .git directory and in a bare repository', () => {
    const root = tempRepo();
    const thrown = (dir: string) => {
      try {
        resolveRepo(dir, {});
      } catch (e) {
        return [(e as TugError).code, (e as TugError).hint];
      }
    };
    // `git init`, the hint outside any repository, would nest a new repository in this one.
    expect(thrown(join(root, '.git', 'refs'))).toEqual([
      'NotAGitRepository',
      expect.stringMatching(/from the work tree/),
    ]);
    const bare = join(tempDir(), 'bare.git');
    git(tempDir(), 'init', '-q', '--bare', bare);
    expect(thrown(bare)).toEqual(['NotAGitRepository', expect.stringMatching(/git clone <bare> <dir>/)]);
  });

  it('accepts --worktree for the main checkout and a linked worktree (also via a symlink), else WorktreeNotFound', () => {
    const root = tempRepo();
    const wt = join(tempDir(), 'wt');
    git(root, 'worktree', 'add', '-q', '-b', 'feature', wt);
    const repo = resolveRepo(root, {});
    expect(resolveWorktreeArg(repo, '.', root)).toBe(root);
    expect(resolveWorktreeArg(repo, wt)).toBe(wt);
    const link = join(tempDir(), 'wt-link');
    symlinkSync(wt, link);
    expect(resolveWorktreeArg(repo, link)).toBe(wt);
    expect(code(() => resolveWorktreeArg(repo, join(root, 'nope')))).toBe('WorktreeNotFound');
    expect(code(() => resolveWorktreeArg(repo, tempRepo()))).toBe('WorktreeNotFound');
    mkdirSync(join(root, 'sub'));
    expect(code(() => resolveWorktreeArg(repo, join(root, 'sub')))).toBe('WorktreeNotFound');
  });
});
