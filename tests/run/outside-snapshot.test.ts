/**
 * The outside snapshot (src/run/outside-check.ts, docs/agents.md §1.6) reads refs and worktrees from git's
 * files and keeps the tracked files of `.tugtool/` while the index is unchanged: it must equal the snapshot
 * git's own answers give, and follow the index when it changes.
 */
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gitRunner } from '../../src/git/exec.js';
import { setBranchPlan } from '../../src/git/branch-config.js';
import { outsideChanges, parseGitConfig, snapshotOutside, type OutsideScope } from '../../src/run/outside-check.js';
import { git, tempDir, tempRepo } from '../helpers/repo.js';

const g = gitRunner({ ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@e' });

/** A main checkout with a plan tracked in .tugtool/, an untracked note, a user's worktree, a worker's tree. */
function setUp() {
  const root = tempRepo({ '.tugtool/tugplan-demo.md': '# plan\n', 'src.txt': 'one\n' });
  writeFileSync(join(root, '.tugtool', 'notes.md'), 'untracked\n');
  const user = join(tempDir(), 'user-wt');
  git(root, 'worktree', 'add', '-q', '-b', 'feature', user);
  const worker = join(root, '.tugtree', 'tugplan__demo--w1');
  mkdirSync(join(root, '.tugtree'), { recursive: true });
  git(root, 'worktree', 'add', '-q', '-b', 'tugplan/demo--w1', worker);
  git(root, 'tag', 'v1');
  git(root, 'pack-refs', '--all');
  git(root, 'branch', 'loose');
  const scope: OutsideScope = {
    mainRoot: root,
    commonDir: join(root, '.git'),
    worktree: worker,
    runRefs: (ref) => ref.startsWith('refs/heads/tugplan/'),
    runWorktrees: (path) => path === worker,
    baseRef: 'refs/heads/main',
  };
  return { root, user, worker, scope };
}

describe('snapshotOutside', () => {
  it("equals the snapshot from git's own answers (for-each-ref, worktree list, ls-files)", async () => {
    const { root, user, scope } = setUp();
    writeFileSync(join(user, 'src.txt'), 'changed in the user worktree\n');
    writeFileSync(join(root, 'src.txt'), 'changed in main\n');
    const files = await snapshotOutside(g, scope);
    const byGit = await snapshotOutside(g, { ...scope, commonDir: undefined });
    expect([...files.entries()].sort()).toEqual([...byGit.entries()].sort());
    expect([...files.keys()]).toEqual(
      expect.arrayContaining(['ref refs/tags/v1', 'ref refs/heads/loose', '.tugtool/notes.md', 'main src.txt']),
    );
    expect([...files.keys()].some((k) => k.startsWith(`worktree ${user}:`))).toBe(true);
    expect([...files.keys()].some((k) => k.includes('tugplan__demo--w1') || k.includes('tugplan/demo'))).toBe(false);
  });

  it('follows the index: a .tugtool/ file staged or committed between snapshots is seen as git sees it', async () => {
    const { root, scope } = setUp();
    const first = await snapshotOutside(g, scope);
    expect(outsideChanges(first, await snapshotOutside(g, scope))).toEqual([]);
    git(root, 'add', '.tugtool/notes.md');
    const staged = await snapshotOutside(g, scope);
    expect(staged).toEqual(await snapshotOutside(g, { ...scope, commonDir: undefined }));
    expect(outsideChanges(first, staged)).toEqual(['.tugtool/notes.md']);
    git(root, 'commit', '-q', '-m', 'notes');
    writeFileSync(join(root, '.tugtool', 'notes.md'), 'edited after the commit\n');
    const edited = await snapshotOutside(g, scope);
    expect(edited).toEqual(await snapshotOutside(g, { ...scope, commonDir: undefined }));
    // Tracked now: seen through the status (` M`), not the walk of untracked .tugtool/ files.
    expect(edited.get('main .tugtool/notes.md')).toMatch(/^1 \.M /);
  });
});

describe('the common git directory in the snapshot (docs/agents.md §1.6)', () => {
  it('a planted hook, info/ file, config key and per-worktree config are changes, named by file and key', async () => {
    const { root, user, scope } = setUp();
    git(root, 'config', 'extensions.worktreeConfig', 'true');
    const before = await snapshotOutside(g, scope);
    const common = join(root, '.git');
    writeFileSync(join(common, 'hooks', 'post-commit'), '#!/bin/sh\necho HOOKRAN\n');
    chmodSync(join(common, 'hooks', 'post-commit'), 0o755);
    writeFileSync(join(common, 'info', 'attributes'), '* filter=evil\n');
    git(root, 'config', '--local', 'alias.zz', '!echo pwned');
    git(root, 'config', 'core.hooksPath', '/tmp/elsewhere');
    git(user, 'config', '--worktree', 'core.fsmonitor', 'echo hi');
    const after = await snapshotOutside(g, scope);
    expect(after).toEqual(await snapshotOutside(g, { ...scope, commonDir: undefined }));
    expect(outsideChanges(before, after)).toEqual([
      '.git/config: alias.zz',
      '.git/config: core.hookspath',
      '.git/hooks/post-commit',
      '.git/info/attributes',
      '.git/worktrees/user-wt/config.worktree: core.fsmonitor',
    ]);
  });

  it("the run's own config and work trees are not: worker branches made and removed, their branch config", async () => {
    const { root, worker, scope } = setUp();
    // With per-worktree config on, `git worktree add` copies the main config.worktree into the new tree.
    git(root, 'config', 'extensions.worktreeConfig', 'true');
    git(root, 'config', '--worktree', 'user.name', 'main only');
    await setBranchPlan(g, root, 'tugplan/demo--w1', '.tugtool/tugplan-demo.md', 'main');
    const isRun = (p: string) => p.includes('tugplan__demo--w');
    const run: OutsideScope = {
      ...scope,
      runWorktrees: isRun,
      runRefs: (ref) => ref.startsWith('refs/heads/tugplan/'),
    };
    const before = await snapshotOutside(g, run);
    // Another worker makes its tree (config first, as the run does), a third is made and removed again, the
    // integration branch is made with its config, and the first worker's tree and branch go.
    const w2 = join(root, '.tugtree', 'tugplan__demo--w2');
    await setBranchPlan(g, root, 'tugplan/demo--w2', '.tugtool/tugplan-demo.md', 'main');
    git(root, 'worktree', 'add', '-q', '--force', '--no-track', '-B', 'tugplan/demo--w2', w2, 'main');
    const w3 = join(root, '.tugtree', 'tugplan__demo--w3');
    await setBranchPlan(g, root, 'tugplan/demo--w3', '.tugtool/tugplan-demo.md', 'main');
    git(root, 'worktree', 'add', '-q', '--force', '--no-track', '-B', 'tugplan/demo--w3', w3, 'main');
    git(root, 'worktree', 'remove', '--force', w3);
    git(root, 'branch', '-D', 'tugplan/demo--w3');
    git(root, 'branch', '--no-track', 'tugplan/demo', 'main');
    await setBranchPlan(g, root, 'tugplan/demo', '.tugtool/tugplan-demo.md', 'main');
    const other = { ...run, worktree: w2 };
    expect(outsideChanges(before, await snapshotOutside(g, run))).toEqual([]);
    // Seen from the second worker: the first one's tree and branch go.
    const mid = await snapshotOutside(g, other);
    expect([...mid.keys()]).toContain('.git/worktrees/tugplan__demo--w2/config.worktree: user.name');
    git(root, 'worktree', 'remove', '--force', worker);
    git(root, 'branch', '-D', 'tugplan/demo--w1');
    expect(outsideChanges(mid, await snapshotOutside(g, other))).toEqual([]);
    // A section of a branch that is not the run's still counts.
    git(root, 'config', 'branch.main.remote', 'origin');
    expect(outsideChanges(mid, await snapshotOutside(g, other))).toEqual(['.git/config: branch.main.remote']);
  });
});

describe('parseGitConfig', () => {
  it('reads a config file as git does (git config --list)', () => {
    const text = [
      '\uFEFF# a comment',
      '; another',
      '[core]',
      '\tbare = false ; trailing comment',
      '\tEditor = "vim  -u" # quoted spaces kept',
      '[Section.Sub] key = inline after the header',
      '[alias]',
      '\tzz = !echo \\"pwned\\" \\',
      '  continued\\tline',
      '\tflag',
      '[branch "Feature/X \\"q\\""]',
      '\tremote = origin',
      '\tmulti = one',
      '\tmulti = two   ',
      '[include]',
      '\tpath = "a;b#c"',
      '',
    ].join('\r\n');
    const dir = tempDir();
    const file = join(dir, 'config');
    writeFileSync(file, text);
    const byGit = new Map<string, (string | null)[]>();
    for (const e of git(dir, 'config', '--file', file, '--list', '-z').split('\0')) {
      if (!e) continue;
      const nl = e.indexOf('\n');
      const [k, v] = nl < 0 ? [e, null] : [e.slice(0, nl), e.slice(nl + 1)];
      byGit.set(k, [...(byGit.get(k) ?? []), v]);
    }
    expect(parseGitConfig(text)).toEqual(byGit);
    expect(parseGitConfig('[core\n')).toBeNull();
    expect(parseGitConfig('key = outside a section\n')).toBeNull();
    expect(parseGitConfig('[a]\nk = "unterminated\n')).toBeNull();
  });
});
