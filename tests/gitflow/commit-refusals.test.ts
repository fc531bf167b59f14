/**
 * What git refuses around a step commit is named for what it is, with exit 4 and a hint, never a bare
 * GitError (exit 10); and `merge` answers a plan never implemented, or a worktree git cannot open, plainly
 * (issue 22 items 17, 18).
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createWorktree } from '../../src/gitflow/worktree.js';
import { expectError, runJson } from '../helpers/cli.js';
import { git, writeFiles } from '../helpers/repo.js';
import { implementerScript, planText, runJsonl, runRepo, step } from '../run/helpers.js';
import { finishPlan, flowCtx, planRepo, snapshot, step1CommitArgs, T0, workOn } from './helpers.js';

const env = { TUGCODE_NOW: T0 };

async function readyToCommit(): Promise<{ root: string; wt: string; attempt: number }> {
  const root = planRepo();
  const wt = (await createWorktree(flowCtx(root), { plan: 'demo' })).worktree_path;
  const attempt = await workOn(flowCtx(root), wt, 'step-1');
  writeFiles(wt, { 'alpha.txt': 'a\n' });
  return { root, wt, attempt };
}

const commit = (wt: string, attempt: number) =>
  runJson('commit', step1CommitArgs(wt, '--attempt', String(attempt)), { cwd: wt, env });

describe('tugcode commit refused by git', () => {
  it('a failing pre-commit hook: CommitFailed (exit 4, cause hook) with a hint; nothing committed or staged', async () => {
    const { root, wt, attempt } = await readyToCommit();
    const hook = join(root, '.git', 'hooks', 'pre-commit');
    writeFileSync(hook, '#!/bin/sh\necho "lint failed" >&2\nexit 1\n');
    chmodSync(hook, 0o755);
    const head = git(wt, 'rev-parse', 'HEAD');
    const r = commit(wt, attempt);
    expectError(r, 'CommitFailed', 4);
    expect(r.json.error.details.cause).toBe('hook');
    expect(r.json.error.message).toBe(`a git hook refused the commit in ${wt}: lint failed`);
    expect(r.json.error.hint).toBe(
      'fix what the hook reports (its first line is above; --json gives all of it in error.details.stderr), then run the same tugcode commit again',
    );
    expect(r.json.error.hint).not.toContain('--no-verify');
    expect(git(wt, 'rev-parse', 'HEAD')).toBe(head);
    expect(git(wt, 'diff', '--cached', '--name-only')).toBe('');
  });

  it('a hook that fails silently: the hint says so and how to see why, not "its output is above"', async () => {
    const { root, wt, attempt } = await readyToCommit();
    const hook = join(root, '.git', 'hooks', 'pre-commit');
    writeFileSync(hook, '#!/bin/sh\nexit 1\n');
    chmodSync(hook, 0o755);
    const r = commit(wt, attempt);
    expectError(r, 'CommitFailed', 4);
    expect(r.json.error.details).toMatchObject({ cause: 'hook', stderr: '' });
    const hint = r.json.error.hint as string;
    expect(hint).not.toContain('above');
    expect(hint).not.toContain('--no-verify');
    expect(hint).toContain(`git -C ${wt} hook run pre-commit`);
    expect(hint).toContain('then run the same tugcode commit again');
  });

  it('a commit-msg hook that fails silently: the hint runs that hook by hand, with its message file', async () => {
    const { root, wt, attempt } = await readyToCommit();
    const hook = join(root, '.git', 'hooks', 'commit-msg');
    writeFileSync(hook, '#!/bin/sh\nexit 1\n');
    chmodSync(hook, 0o755);
    const head = git(wt, 'rev-parse', 'HEAD');
    const r = commit(wt, attempt);
    expectError(r, 'CommitFailed', 4);
    expect(r.json.error.details.cause).toBe('hook');
    const hint = r.json.error.hint as string;
    expect(hint).toContain(`git -C ${wt} hook run commit-msg -- <a file holding the message>`);
    expect(hint).not.toContain('pre-commit');
    expect(git(wt, 'rev-parse', 'HEAD')).toBe(head);
  });

  it('commit.gpgsign with a signer that fails: CommitFailed (cause signing), not a hook', async () => {
    const { wt, attempt } = await readyToCommit();
    git(wt, 'config', 'commit.gpgsign', 'true');
    git(wt, 'config', 'gpg.program', 'false');
    const r = commit(wt, attempt);
    expectError(r, 'CommitFailed', 4);
    expect(r.json.error.details.cause).toBe('signing');
    expect(r.json.error.message).toContain('git could not sign the commit');
    expect(r.json.error.hint).toContain('commit.gpgsign');
  });

  it("a stale index.lock of a linked worktree: the hint's rm names the lock git names, and works", async () => {
    const { wt, attempt } = await readyToCommit();
    const lock = git(wt, 'rev-parse', '--path-format=absolute', '--git-path', 'index.lock').trim();
    writeFileSync(lock, '');
    const r = commit(wt, attempt);
    expectError(r, 'CommitFailed', 4);
    expect(r.json.error.details.cause).toBe('index_lock');
    expect(r.json.error.hint).toContain(`delete the stale lock: rm ${lock}`);
    rmSync(lock);
    expect(commit(wt, attempt).json).toMatchObject({ committed: true });
  });
});

describe('tugcode commit in a worktree in the middle of a git operation', () => {
  it('a rebase stopped on an edit: GitOperationInProgress (exit 4), not a detached HEAD; its hints work; nothing written', async () => {
    const { wt, attempt } = await readyToCommit();
    git(wt, 'add', '-A');
    git(wt, 'commit', '-qm', 'wip');
    const r0 = spawnSync('git', ['rebase', '-i', 'HEAD~1'], {
      cwd: wt,
      env: { ...process.env, GIT_SEQUENCE_EDITOR: 'sed -i s/^pick/edit/' },
      encoding: 'utf8',
    });
    expect(r0.status, r0.stderr).toBe(0);
    writeFiles(wt, { 'beta.txt': 'b\n' });
    const before = [git(wt, 'rev-parse', 'HEAD'), git(wt, 'status', '--porcelain'), git(wt, 'ls-files', '-s')];
    const r = commit(wt, attempt);
    expectError(r, 'GitOperationInProgress', 4);
    expect(r.json.error.details).toMatchObject({ worktree: wt, operation: 'rebase' });
    expect(r.json.error.message).toBe(`${wt} is in the middle of git rebase; a step commit would land in it`);
    const hint = r.json.error.hint as string;
    expect(hint).toContain(`git -C ${wt} rebase --continue`);
    expect(hint).toContain(`git -C ${wt} rebase --abort`);
    expect([git(wt, 'rev-parse', 'HEAD'), git(wt, 'status', '--porcelain'), git(wt, 'ls-files', '-s')]).toEqual(before);
    // The hint's way out works, and then the commit does.
    git(wt, 'rebase', '--abort');
    expect(commit(wt, attempt).json.status).toBe('ok');
  });

  it('a merge stopped on a conflict: GitOperationInProgress naming the merge', async () => {
    const { wt, attempt } = await readyToCommit();
    git(wt, 'add', '-A');
    git(wt, 'commit', '-qm', 'one');
    git(wt, 'switch', '-qc', 'other', 'HEAD~1');
    writeFiles(wt, { 'alpha.txt': 'other\n' });
    git(wt, 'add', '-A');
    git(wt, 'commit', '-qm', 'two');
    git(wt, 'switch', '-q', '-');
    expect(spawnSync('git', ['merge', 'other'], { cwd: wt, encoding: 'utf8' }).status).not.toBe(0);
    const r = commit(wt, attempt);
    expectError(r, 'GitOperationInProgress', 4);
    expect(r.json.error.details.operation).toBe('merge');
    expect(r.json.error.hint).toContain(`git -C ${wt} merge --abort`);
  });
});

describe('tugcode commit and a worktree removed under it', () => {
  it('is WorktreeNotFound (exit 3) saying so, not an InternalError', async () => {
    const { root, wt, attempt } = await readyToCommit();
    // The removal lands while git commit runs (from its pre-commit hook), as `worktree remove --force` would.
    const hook = join(root, '.git', 'hooks', 'pre-commit');
    writeFileSync(hook, `#!/bin/sh\nrm -rf '${wt}'\nexit 0\n`);
    chmodSync(hook, 0o755);
    const r = runJson('commit', step1CommitArgs(wt, '--attempt', String(attempt)), { cwd: root, env });
    expectError(r, 'WorktreeNotFound', 3);
    const tip = git(root, 'rev-parse', 'tugplan/demo--20260301-100000').trim();
    expect(r.json.error.details).toMatchObject({ commit_hash: tip, branch: 'tugplan/demo--20260301-100000' });
    expect(r.json.error.details.reason).toContain(
      'the worktree was removed while the commit ran; the commit is on branch',
    );
  });
});

describe('merge of a plan with nothing to merge', () => {
  let root: string;
  beforeAll(() => {
    root = planRepo();
  });

  it('a plan never implemented: BranchNotFound (exit 3) with the command that implements it', () => {
    expect(runJson('state init', ['state', 'init', 'demo'], { cwd: root, env }).code).toBe(0);
    const r = runJson('merge', ['merge', 'demo', '--force'], { cwd: root, env });
    expectError(r, 'BranchNotFound', 3);
    // Run as written, a bare `tugcode run <plan>` would run with no implementer: the hint names a placeholder.
    expect(r.json.error.hint).toBe(
      'implement the plan first: tugcode run .tugtool/tugplan-demo.md --implementer <your implementer> ' +
        '(or tugcode worktree create .tugtool/tugplan-demo.md)',
    );
    // With an implementer configured, the plain command runs it.
    const configured = runJson('merge', ['merge', 'demo', '--force'], {
      cwd: root,
      env: { ...env, TUGCODE_RUN_IMPLEMENTER: 'true' },
    });
    expectError(configured, 'BranchNotFound', 3);
    expect(configured.json.error.hint).toBe(
      'implement the plan first: tugcode run .tugtool/tugplan-demo.md (or tugcode worktree create .tugtool/tugplan-demo.md)',
    );
  });

  it('--dry-run with a worktree whose .git points nowhere: answers, and keeps that worktree with the repair hint', async () => {
    const wt = (await createWorktree(flowCtx(root), { plan: 'demo' })).worktree_path;
    writeFileSync(join(wt, '.git'), 'gitdir: /nonexistent/tugcode-test\n');
    const r = runJson('merge', ['merge', 'demo', '--dry-run', '--force'], { cwd: root, env });
    expect(r.json.kept).toEqual([
      expect.objectContaining({ worktree_path: wt, reason: expect.stringContaining('git worktree repair') }),
    ]);
    rmSync(wt, { recursive: true, force: true });
  });
});

describe('merge in a repository that signs its commits', () => {
  it('signs the merge commit: a signer that fails is CommitFailed (cause signing), nothing changed', async () => {
    const root = planRepo();
    await finishPlan(root, [{}, {}]);
    git(root, 'config', 'commit.gpgsign', 'true');
    git(root, 'config', 'gpg.program', 'false');
    const before = snapshot(root, { objects: false });
    const r = runJson('merge', ['merge', 'demo'], { cwd: root, env });
    expectError(r, 'CommitFailed', 4);
    expect(r.json.error.details.cause).toBe('signing');
    expect(snapshot(root, { objects: false })).toBe(before);
  });
});

describe('run and a commit git refuses', () => {
  it('a signing failure is CommitFailed in the attempt, not HookFailed', () => {
    const root = runRepo(planText([step(1, 'Alpha')]), 'demo', {
      '.tugtool/config.toml': '[state]\nmax_attempts = 1\n',
    });
    git(root, 'add', '-A');
    git(root, 'config', 'commit.gpgsign', 'true');
    git(root, 'config', 'gpg.program', 'false');
    const r = runJsonl(root, ['demo', '--implementer', implementerScript().argv]);
    const failed = r.events.find((e) => e.type === 'attempt_failed');
    expect(failed, r.stdout + r.stderr).toMatchObject({ reason_code: 'CommitFailed' });
    expect(failed.reason).toContain('git could not sign the commit');
  });
});
