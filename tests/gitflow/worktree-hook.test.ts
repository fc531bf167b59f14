/**
 * A post-checkout hook that refuses `git worktree add` (git runs it once the new tree is checked out, and
 * says nothing of its own): `worktree create` names the hook and the way past it, and leaves nothing
 * behind (docs/git.md §3).
 */
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectError, runCli, runJson } from '../helpers/cli.js';
import { git, tempDir } from '../helpers/repo.js';
import { planRepo, snapshot, T0 } from './helpers.js';

const env = { TUGCODE_NOW: T0 };

function writeHook(dir: string, body: string): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'post-checkout');
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}

const create = (root: string) => runJson('worktree create', ['worktree', 'create', 'demo'], { cwd: root, env });

describe('worktree create refused by a post-checkout hook', () => {
  it('.git/hooks/post-checkout: GitError naming the hook, a hint past it, nothing left behind', () => {
    const root = planRepo();
    const hook = writeHook(join(root, '.git', 'hooks'), 'echo "hook says no" >&2\nexit 3');
    const before = snapshot(root);
    const r = create(root);
    expectError(r, 'GitError', 10);
    expect(r.json.error.details).toMatchObject({ hook, hook_name: 'post-checkout', exit_code: 3 });
    expect(r.json.error.message).toContain(`its post-checkout hook ${hook} exited 3: hook says no`);
    expect(r.json.error.hint).toContain(`chmod -x ${hook}`);
    expect(r.json.error.hint).toContain('then run tugcode worktree create again');
    expect(snapshot(root)).toBe(before);
    expect(git(root, 'branch', '--list', 'tugplan/*')).toBe('');
    // The way out the hint names works.
    chmodSync(hook, 0o644);
    expect(create(root).code).toBe(0);
  });

  it('a silent hook under core.hooksPath is named by its path there', () => {
    const root = planRepo();
    const hooks = tempDir();
    const hook = writeHook(hooks, 'exit 1');
    git(root, 'config', 'core.hooksPath', hooks);
    const before = snapshot(root);
    const r = create(root);
    expectError(r, 'GitError', 10);
    expect(r.json.error.details.hook).toBe(hook);
    expect(r.json.error.message).toContain(`hook ${hook} exited 1 without a word`);
    expect(snapshot(root)).toBe(before);
  });

  it("run's worker worktrees: the GitError of git worktree add names the post-checkout hook", () => {
    const root = planRepo();
    const hook = writeHook(join(root, '.git', 'hooks'), 'echo "hook says no" >&2\nexit 3');
    const r = runCli(['run', 'demo', '--json'], { cwd: root, env });
    const summary = JSON.parse(r.stdout.trim().split('\n').pop()!);
    expect(summary.error).toMatchObject({
      code: 'GitError',
      details: { stderr: 'hook says no\n', hook, hook_name: 'post-checkout' },
    });
    expect(summary.error.hint).toContain(`fix what ${hook} reports (git runs it from .git/hooks or core.hooksPath)`);
  });
});
