/**
 * The driver's git answers read from git's files (src/git/ref-files.ts, src/git/ancestry.ts): each one
 * agrees with git, and hands back to git (null / a git call) whatever the files cannot prove.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isAncestorFromFiles } from '../../src/git/ancestry.js';
import { gitRunner } from '../../src/git/exec.js';
import { integrate } from '../../src/gitflow/integrate.js';
import {
  allRefs,
  branchCheckedOut,
  headTip,
  refTip,
  worktreeBranches,
  worktreeRegistered,
} from '../../src/git/ref-files.js';
import { gitWorktrees, resolveRepo } from '../../src/git/repo.js';
import { git, tempDir, tempRepo } from '../helpers/repo.js';

const g = gitRunner({ ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@e' });

function commit(cwd: string, file: string): string {
  writeFileSync(join(cwd, file), `${file}\n`);
  git(cwd, 'add', '-A');
  git(cwd, 'commit', '-q', '-m', file);
  return git(cwd, 'rev-parse', 'HEAD').trim();
}

function gitSaysAncestor(cwd: string, a: string, d: string): boolean {
  try {
    git(cwd, 'merge-base', '--is-ancestor', a, d);
    return true;
  } catch {
    return false;
  }
}

/** main: c0 ← c1 ← c2; side (from c1): s1 ← s2; merge m = c2 + s2 on main. */
function history() {
  const root = tempRepo();
  const c0 = git(root, 'rev-parse', 'HEAD').trim();
  const c1 = commit(root, 'c1');
  git(root, 'switch', '-q', '-c', 'side');
  const s1 = commit(root, 's1');
  const s2 = commit(root, 's2');
  git(root, 'switch', '-q', 'main');
  const c2 = commit(root, 'c2');
  git(root, 'merge', '-q', '--no-edit', 'side');
  const m = git(root, 'rev-parse', 'HEAD').trim();
  return { root, commonDir: join(root, '.git'), all: { c0, c1, c2, s1, s2, m } };
}

describe('isAncestorFromFiles', () => {
  it('agrees with git merge-base --is-ancestor on every pair of loose commits', () => {
    const { root, commonDir, all } = history();
    for (const a of Object.values(all))
      for (const d of Object.values(all)) {
        const files = isAncestorFromFiles(commonDir, a, d);
        expect(files, `${a} → ${d}`).not.toBeNull();
        expect(files, `${a} → ${d}`).toBe(gitSaysAncestor(root, a, d));
      }
  });

  it('answers the driver cases: its commit on the old tip, the tip moved on by another worker', () => {
    const root = tempRepo();
    const base = git(root, 'rev-parse', 'HEAD').trim();
    git(root, 'switch', '-q', '-c', 'worker');
    const mine = commit(root, 'mine');
    git(root, 'switch', '-q', '-c', 'integ', base);
    const moved = commit(root, 'theirs');
    const commonDir = join(root, '.git');
    expect(isAncestorFromFiles(commonDir, base, mine)).toBe(true);
    expect(isAncestorFromFiles(commonDir, moved, mine)).toBe(false);
  });

  it('leaves packed objects, replace refs and shallow clones to git', () => {
    const { root, commonDir, all } = history();
    git(root, 'replace', all.s1, all.c1);
    expect(isAncestorFromFiles(commonDir, all.c2, all.m)).toBeNull();
    git(root, 'replace', '-d', all.s1);
    git(root, 'gc', '-q');
    expect(isAncestorFromFiles(commonDir, all.c0, all.m)).toBeNull();
    writeFileSync(join(commonDir, 'shallow'), `${all.c1}\n`);
    expect(isAncestorFromFiles(commonDir, all.c2, all.m)).toBeNull();
  });
});

describe('ref and HEAD files', () => {
  it('read branch tips and HEAD like git, in the main checkout, a linked worktree and a detached HEAD', async () => {
    const root = tempRepo();
    const wt = join(tempDir(), 'wt');
    git(root, 'worktree', 'add', '-q', '-b', 'feature/x', wt);
    commit(wt, 'x');
    const commonDir = join(root, '.git');
    expect(await refTip(g, commonDir, root, 'feature/x')).toBe(git(root, 'rev-parse', 'feature/x').trim());
    expect(await refTip(g, commonDir, root, 'nope')).toBeNull();
    expect(await headTip(g, root)).toBe(git(root, 'rev-parse', 'HEAD').trim());
    expect(await headTip(g, wt)).toBe(git(wt, 'rev-parse', 'HEAD').trim());
    git(root, 'pack-refs', '--all');
    expect(await refTip(g, commonDir, root, 'feature/x')).toBe(git(root, 'rev-parse', 'feature/x').trim());
    expect(await headTip(g, wt)).toBe(git(wt, 'rev-parse', 'HEAD').trim());
    git(wt, 'switch', '-q', '--detach', 'main');
    expect(await headTip(g, wt)).toBe(git(root, 'rev-parse', 'main').trim());
  });

  it('say which branches a work tree has checked out', () => {
    const root = tempRepo();
    const wt = join(tempDir(), 'wt');
    git(root, 'branch', 'free');
    git(root, 'worktree', 'add', '-q', '-b', 'held', wt);
    const commonDir = join(root, '.git');
    expect(branchCheckedOut(commonDir, 'main')).toBe(true);
    expect(branchCheckedOut(commonDir, 'held')).toBe(true);
    expect(branchCheckedOut(commonDir, 'free')).toBe(false);
    // A half-made admin directory (no HEAD yet): git decides.
    mkdirSync(join(commonDir, 'worktrees', 'half'));
    expect(branchCheckedOut(commonDir, 'free')).toBeNull();
  });

  it('say whether git has a work tree registered at a path, its directory there or not', () => {
    const root = tempRepo();
    const commonDir = join(root, '.git');
    const wt = join(tempDir(), 'wt');
    expect(worktreeRegistered(commonDir, wt)).toBe(false);
    git(root, 'worktree', 'add', '-q', '-b', 'x', wt);
    expect(worktreeRegistered(commonDir, wt)).toBe(true);
    expect(worktreeRegistered(commonDir, join(tempDir(), 'other'))).toBe(false);
    rmSync(wt, { recursive: true, force: true });
    expect(worktreeRegistered(commonDir, wt)).toBe(true);
    git(root, 'worktree', 'prune');
    expect(worktreeRegistered(commonDir, wt)).toBe(false);
  });

  it('list the work trees and their branches as git worktree list does', async () => {
    const root = tempRepo();
    const commonDir = join(root, '.git');
    const a = join(tempDir(), 'a');
    const b = join(tempDir(), 'b');
    const gone = join(tempDir(), 'gone');
    git(root, 'worktree', 'add', '-q', '-b', 'tugplan/x--w1', a);
    git(root, 'worktree', 'add', '-q', '--detach', b);
    git(root, 'worktree', 'add', '-q', '-b', 'tugplan/x--w2', gone);
    rmSync(gone, { recursive: true, force: true });
    const byGit = (await gitWorktrees(g, resolveRepo(root))).map((w) => ({ path: w.path, branch: w.branch }));
    const byFiles = worktreeBranches(commonDir, root);
    const sort = (l: { path: string }[]) => [...l].sort((x, y) => x.path.localeCompare(y.path));
    expect(sort(byFiles!)).toEqual(sort(byGit));
    expect(byFiles).toHaveLength(4);
  });

  it('agree with git about a work tree still being added: no gitdir yet is not listed, no HEAD yet is detached', async () => {
    // What another worker's `git worktree add` leaves for a moment (it writes `locked`, then `gitdir`,
    // then HEAD): the files must answer as git does, not send the caller to git (docs/run.md §1.7).
    const root = tempRepo();
    const commonDir = join(root, '.git');
    const a = join(tempDir(), 'a');
    git(root, 'worktree', 'add', '-q', '-b', 'a', a);
    mkdirSync(join(commonDir, 'worktrees', 'half'));
    writeFileSync(join(commonDir, 'worktrees', 'half', 'locked'), 'initializing\n');
    const b = join(tempDir(), 'b');
    git(root, 'worktree', 'add', '-q', '-b', 'b', b);
    rmSync(join(commonDir, 'worktrees', 'b', 'HEAD'));
    const byGit = (await gitWorktrees(g, resolveRepo(root))).map((w) => ({ path: w.path, branch: w.branch }));
    const byFiles = worktreeBranches(commonDir, root);
    const sort = (l: { path: string }[]) => [...l].sort((x, y) => x.path.localeCompare(y.path));
    expect(byFiles).not.toBeNull();
    expect(sort(byFiles!)).toEqual(sort(byGit));
    expect(byFiles).toHaveLength(3);
    expect(worktreeRegistered(commonDir, a)).toBe(true);
    expect(worktreeRegistered(commonDir, join(tempDir(), 'half'))).toBe(false);
  });

  it('read the named work tree, not the one GIT_DIR & co. point at (git gets them neither)', async () => {
    const root = tempRepo();
    const other = tempRepo();
    commit(other, 'elsewhere');
    const elsewhere = { ...process.env, GIT_DIR: join(other, '.git'), GIT_WORK_TREE: other };
    const moved = gitRunner(elsewhere);
    expect(branchCheckedOut(join(root, '.git'), 'main')).toBe(true);
    expect(await headTip(moved, root)).toBe(git(root, 'rev-parse', 'HEAD').trim());
    expect(await moved.run(['rev-parse', 'HEAD'], root)).toBe(git(root, 'rev-parse', 'HEAD'));
  });
});

/** `git for-each-ref --format='%(refname) %(objectname)'` as a map. */
function forEachRef(root: string): Map<string, string> {
  const lines = git(root, 'for-each-ref', '--format=%(refname) %(objectname)').split('\n').filter(Boolean);
  return new Map(lines.map((l) => l.split(' ') as [string, string]));
}

describe('allRefs', () => {
  it('lists every ref as git for-each-ref does: loose, packed, a loose ref over its packed entry, tags, symbolic refs', async () => {
    const root = tempRepo();
    const commonDir = join(root, '.git');
    const c0 = git(root, 'rev-parse', 'HEAD').trim();
    git(root, 'branch', 'tugplan/x--w1');
    git(root, 'tag', 'light');
    git(root, 'tag', '-a', '-m', 'annotated', 'v1');
    git(root, 'update-ref', 'refs/tugplan/kept/x/step-1/attempt1', c0);
    git(root, 'update-ref', 'refs/remotes/origin/main', c0);
    git(root, 'symbolic-ref', 'refs/remotes/origin/HEAD', 'refs/remotes/origin/main');
    git(root, 'notes', 'add', '-m', 'a note', c0);
    writeFileSync(join(root, 'stashed.txt'), 'x\n');
    git(root, 'add', 'stashed.txt');
    git(root, 'stash', '-q');
    expect(await allRefs(commonDir)).toEqual(forEachRef(root));
    git(root, 'pack-refs', '--all');
    const c1 = commit(root, 'c1'); // main loose again, over its packed entry
    git(root, 'update-ref', 'refs/remotes/origin/main', c1); // a symbolic ref to a loose ref over a packed one
    const refs = await allRefs(commonDir);
    expect(refs).toEqual(forEachRef(root));
    expect(refs!.get('refs/remotes/origin/HEAD')).toBe(c1);
    expect([...refs!.keys()]).toEqual(expect.arrayContaining(['refs/stash', 'refs/tags/v1', 'refs/notes/commits']));
  });

  it('skips lock files as git does (a ref being written keeps its old value)', async () => {
    const root = tempRepo();
    const commonDir = join(root, '.git');
    const heads = join(commonDir, 'refs', 'heads');
    writeFileSync(join(heads, 'main.lock'), '');
    mkdirSync(join(heads, 'dir.lock'));
    writeFileSync(join(heads, 'dir.lock', 'x'), git(root, 'rev-parse', 'HEAD'));
    expect(await allRefs(commonDir)).toEqual(forEachRef(root));
    expect(forEachRef(root).size).toBe(1);
  });

  it('leaves to git what the files cannot say for certain: a broken ref, a dangling symbolic ref, reftable', async () => {
    const root = tempRepo();
    const commonDir = join(root, '.git');
    const heads = join(commonDir, 'refs', 'heads');
    expect(await allRefs(commonDir)).not.toBeNull();
    for (const [file, text] of [
      ['junk', 'not a ref\n'],
      ['dangling', 'ref: refs/heads/nowhere\n'],
      ['-odd name', `${git(root, 'rev-parse', 'HEAD').trim()}\n`],
    ]) {
      writeFileSync(join(heads, file!), text!);
      expect(await allRefs(commonDir), file).toBeNull();
      rmSync(join(heads, file!));
    }
    mkdirSync(join(commonDir, 'reftable'));
    expect(await allRefs(commonDir)).toBeNull();
  });

  it('never misses a ref that git pack-refs moves from its loose file to packed-refs meanwhile', async () => {
    const root = tempRepo();
    const commonDir = join(root, '.git');
    const head = git(root, 'rev-parse', 'HEAD').trim();
    const made = join(tempDir(), 'made');
    writeFileSync(made, '0\n');
    // Each round makes one more loose ref and packs them all: a reader that took packed-refs before the
    // loose files could find a ref in neither.
    const churn = spawn(
      'bash',
      [
        '-c',
        `for i in $(seq 1 80); do git update-ref refs/heads/w$i ${head} && echo $i > '${made}' && git pack-refs --all --prune; done`,
      ],
      { cwd: root, stdio: 'ignore' },
    );
    const ended = new Promise<number | null>((r) => churn.on('exit', r));
    let running = true;
    void ended.then(() => (running = false));
    let reads = 0;
    const missed: string[] = [];
    while (running) {
      const k = Number(readFileSync(made, 'utf8'));
      const refs = await allRefs(commonDir);
      reads++;
      if (!refs) continue; // handed to git: never wrong
      for (let i = 1; i <= k; i++) if (!refs.has(`refs/heads/w${i}`)) missed.push(`w${i} of ${k}`);
    }
    expect(await ended).toBe(0);
    expect(reads).toBeGreaterThan(0);
    expect(missed).toEqual([]);
  });
});

describe('integrate with the integration branch checked out', () => {
  it('merges --ff-only in the work tree holding it (its files follow), whether or not a rebase was needed', async () => {
    const root = tempRepo();
    git(root, 'branch', 'tugplan/demo');
    const holder = join(tempDir(), 'holder');
    git(root, 'worktree', 'add', '-q', holder, 'tugplan/demo');
    const wt = join(tempDir(), 'wt');
    git(root, 'worktree', 'add', '-q', '-b', 'tugplan/demo--w1', wt, 'main');
    commit(wt, 'one.txt');
    const repo = resolveRepo(root, process.env);
    const r = await integrate({ git: g, repo, worktree: wt, integrationBranch: 'tugplan/demo' });
    expect(r).toMatchObject({ integrated: true, rebased: false });
    expect(readFileSync(join(holder, 'one.txt'), 'utf8')).toBe('one.txt\n');
    expect(git(holder, 'status', '--porcelain')).toBe('');
    const wt2 = join(tempDir(), 'wt2');
    git(root, 'worktree', 'add', '-q', '-b', 'tugplan/demo--w2', wt2, 'main');
    commit(wt2, 'two.txt');
    const r2 = await integrate({ git: g, repo, worktree: wt2, integrationBranch: 'tugplan/demo' });
    expect(r2).toMatchObject({ integrated: true, rebased: true });
    expect(readFileSync(join(holder, 'two.txt'), 'utf8')).toBe('two.txt\n');
    expect(git(root, 'rev-parse', 'tugplan/demo').trim()).toBe(git(wt2, 'rev-parse', 'HEAD').trim());
  });
});
