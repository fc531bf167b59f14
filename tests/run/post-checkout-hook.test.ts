/**
 * `tugcode run` in a repository whose post-checkout hook refuses the worker worktrees (git runs it once a new
 * tree is checked out): the error names the hook, and the run leaves nothing behind, neither the half-made
 * worker trees and their branches and config nor the integration branch it made (docs/run.md §1; a failed
 * command changes nothing).
 */
import { chmodSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { git, tempDir } from '../helpers/repo.js';
import { planRepo, T0 } from '../gitflow/helpers.js';
import { planText, step } from './helpers.js';

const env = { TUGCODE_NOW: T0 };

function writeHook(dir: string, body: string): string {
  const path = join(dir, 'post-checkout');
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}

/** What the run must leave as it found it. */
function gitState(root: string): string[] {
  return [git(root, 'worktree', 'list', '--porcelain'), git(root, 'branch', '-a'), git(root, 'config', '--list')];
}

function summaryOf(r: { stdout: string }) {
  return JSON.parse(r.stdout.trim().split('\n').pop()!);
}

describe('run refused by a post-checkout hook', () => {
  it('.git/hooks/post-checkout: GitError naming the hook; worktrees, branches and config as before', () => {
    const root = planRepo();
    const hook = writeHook(join(root, '.git', 'hooks'), 'echo "hook says no" >&2\nexit 3');
    const before = gitState(root);
    const r = runCli(['run', 'demo', '--json', '--workers', '2'], { cwd: root, env });
    expect(r.code).toBe(10);
    const summary = summaryOf(r);
    expect(summary.error).toMatchObject({
      code: 'GitError',
      details: { hook, hook_name: 'post-checkout', exit_code: 3, stderr: 'hook says no\n' },
    });
    expect(summary.error.message).toContain(`its post-checkout hook ${hook} exited 3: hook says no`);
    expect(summary.error.hint).toContain(`chmod -x ${hook}`);
    expect(gitState(root)).toEqual(before);
    expect(existsSync(join(root, '.tugtree', 'tugplan__demo--w1'))).toBe(false);
    // The text mode names it too.
    const text = runCli(['run', 'demo', '--workers', '2'], { cwd: root, env });
    expect(text.stderr).toContain(`hint: fix what ${hook} reports`);
    expect(gitState(root)).toEqual(before);
  });

  it('a hook under core.hooksPath that refuses only the second worker: the first tree goes too', () => {
    // step-1 and step-2 can run together (a plan declaring no dependency at all would be a chain): the run
    // makes a second worker's tree (docs/run.md §1 item 3).
    const root = planRepo(planText([step(1, 'One'), step(2, 'Two'), step(3, 'Three', { deps: [1] })]));
    const hooks = tempDir();
    const hook = writeHook(hooks, 'case "$PWD" in *--w2) exit 1;; esac\nexit 0');
    git(root, 'config', 'core.hooksPath', hooks);
    const before = gitState(root);
    const r = runCli(['run', 'demo', '--json', '--workers', '2', '--implementer', 'false'], { cwd: root, env });
    expect(r.code).not.toBe(0);
    const summary = summaryOf(r);
    expect(summary.error).toMatchObject({ code: 'GitError', details: { hook, hook_name: 'post-checkout' } });
    expect(summary.error.message).toContain(`hook ${hook} exited 1 without a word`);
    expect(gitState(root)).toEqual(before);
  });
});
