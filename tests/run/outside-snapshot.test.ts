/**
 * The outside snapshot (src/run/outside-check.ts, docs/agents.md §1.6) reads refs and worktrees from git's
 * files and keeps the tracked files of `.tugtool/` while the index is unchanged: it must equal the snapshot
 * git's own answers give, and follow the index when it changes.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gitRunner } from '../../src/git/exec.js';
import { outsideChanges, snapshotOutside, type OutsideScope } from '../../src/run/outside-check.js';
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
