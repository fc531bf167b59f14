/**
 * simple-git stays off the hot state path (docs/quality.md §2, src/git/fast.ts): the state commands that
 * need git facts use the few synchronous calls of fast.ts, while the git flows load simple-git.
 */
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { packagesLoaded } from '../helpers/imports.js';
import { git, tempRepo } from '../helpers/repo.js';

describe('simple-git on the hot path', () => {
  it('is not loaded by state claim, heartbeat, complete --commit or reconcile; it is by the git flows', () => {
    const root = tempRepo({ '.tugtool/tugplan-a.md': '# A\n\n#### Step 1: One\n\n**Tasks:**\n- [ ] x\n' });
    expect(runCli(['init'], { cwd: root }).code).toBe(0);
    git(root, 'add', '-A');
    git(root, 'commit', '-q', '-m', 'plan');
    git(root, 'branch', 'tugplan/a'); // the integration branch: claim reads its tip
    expect(runCli(['state', 'init', 'a'], { cwd: root }).code).toBe(0);
    const hot = [
      ['state', 'claim', 'a', '--worktree', '.'],
      ['state', 'heartbeat', 'a', 'step-1', '--worktree', '.'],
      ['state', 'complete', 'a', 'step-1', '--worktree', '.', '--commit', 'HEAD', '--force', 'test'],
      ['state', 'reconcile', 'a'],
    ];
    for (const args of hot) {
      const loaded = packagesLoaded(args, root);
      expect(loaded.has('better-sqlite3'), args.join(' ')).toBe(true);
      expect(loaded.has('simple-git'), args.join(' ')).toBe(false);
    }
    expect(packagesLoaded(['worktree', 'list'], root).has('simple-git')).toBe(true);
  });
});
