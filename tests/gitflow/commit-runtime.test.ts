/**
 * `tugcode commit` next to the runtime files that are ignored and present: `.tug/` after a kernel call,
 * `state.db` in the main checkout. git 2.39 refused the old
 * `git add -A -- . ':(exclude).tug'` in both cases (issue 11, harm #1). And a commit that fails leaves
 * nothing behind.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { commitStep } from '../../src/gitflow/commit.js';
import { createWorktree } from '../../src/gitflow/worktree.js';
import { ROOT, runJson } from '../helpers/cli.js';
import { git } from '../helpers/repo.js';
import { flowCtx, PLAN_PATH, planRepo, snapshot, stepRows, T0, workOn } from './helpers.js';

const env = { TUGCODE_NOW: T0 };

/** A kernel call that keeps its session in `.tug/` (a refused one writes nothing, docs/kernel.md §3). */
function kernelCall(cwd: string): void {
  const r = spawnSync(process.execPath, [join(ROOT, 'bin', 'tug.js'), 'snapshot'], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, NODE_ENV: 'test' },
    timeout: 60_000,
  });
  expect(r.status, r.stdout + r.stderr).toBe(0);
  expect(existsSync(join(cwd, '.tug'))).toBe(true);
}

describe('tugcode commit after a kernel call (CLI)', () => {
  it('commits in a worktree whose .tug/ exists and is ignored', async () => {
    const root = planRepo();
    const wt = (await createWorktree(flowCtx(root), { plan: 'demo' })).worktree_path;
    const attempt = await workOn(flowCtx(root), wt, 'step-1');
    writeFileSync(join(wt, 'alpha.txt'), 'alpha\n');
    kernelCall(wt);
    const r = runJson(
      'commit',
      ['commit', '--plan', 'demo', '--step', 'step-1', '--message', 'feat: alpha', '--attempt', String(attempt)],
      { cwd: wt, env },
    );
    expect(r.json).toMatchObject({
      status: 'ok',
      committed: true,
      files_staged: ['.tugtool/implementation-log/demo/step-1.md', 'alpha.txt'],
      state_updated: true,
    });
    expect(git(wt, 'ls-files', '.tug')).toBe('');
    expect(git(wt, 'status', '--porcelain')).toBe('');
  });

  it('commits in the main checkout with --allow-main, where state.db and .tug/ exist and are ignored', async () => {
    const root = planRepo();
    expect(runJson('state init', ['state', 'init', 'demo'], { cwd: root, env }).json.status).toBe('ok');
    const attempt = await workOn(flowCtx(root), root, 'step-1');
    expect(existsSync(join(root, '.tugtool', 'state.db'))).toBe(true);
    writeFileSync(join(root, 'alpha.txt'), 'alpha\n');
    kernelCall(root);
    const r = runJson(
      'commit',
      [
        'commit',
        '--allow-main',
        '--plan',
        'demo',
        '--step',
        'step-1',
        '--message',
        'feat: alpha',
        '--attempt',
        String(attempt),
      ],
      { cwd: root, env },
    );
    expect(r.json).toMatchObject({
      status: 'ok',
      committed: true,
      files_staged: ['.tugtool/implementation-log/demo/step-1.md', 'alpha.txt'],
      state_updated: true,
    });
    expect(git(root, 'ls-files', '.tug', '.tugtool/state.db')).toBe('');
    expect((await stepRows(flowCtx(root))).find((s) => s.anchor === 'step-1')?.status).toBe('completed');
  });

  it('stages deletions and renames too', async () => {
    const root = planRepo();
    const wt = (await createWorktree(flowCtx(root), { plan: 'demo' })).worktree_path;
    const attempt = await workOn(flowCtx(root), wt, 'step-1');
    git(wt, 'mv', 'README.md', 'READ.md'); // a staged rename
    git(wt, 'rm', '-q', '.gitignore'); // a staged deletion
    rmSync(join(wt, '.tugtool', 'tugplan-skeleton.md')); // an unstaged deletion
    writeFileSync(join(wt, 'alpha.txt'), 'alpha\n');
    mkdirSync(join(wt, '.tug'), { recursive: true });
    const r = await commitStep(flowCtx(wt), { plan: 'demo', step: 'step-1', message: 'feat: move', attempt });
    expect(r.files_staged).toEqual([
      '.gitignore',
      '.tugtool/implementation-log/demo/step-1.md',
      '.tugtool/tugplan-skeleton.md',
      'READ.md',
      'alpha.txt',
    ]);
    expect(git(wt, 'ls-files', 'README.md', 'READ.md', '.gitignore', '.tugtool/tugplan-skeleton.md').trim()).toBe(
      'READ.md',
    );
    expect(git(wt, 'status', '--porcelain')).toBe('');
  });
});

/** Everything a failed commit in a worktree could have changed: files (not .git), index, HEAD. */
function treeState(dir: string): string {
  const files = readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => !join(d.parentPath, d.name).startsWith(join(dir, '.git')))
    .map((d) => `${join(d.parentPath, d.name)}${d.isDirectory() ? '/' : ''}`)
    .sort();
  const index = readFileSync(resolve(dir, git(dir, 'rev-parse', '--git-path', 'index').trim())).toString('base64');
  return JSON.stringify({ files, index, head: git(dir, 'rev-parse', 'HEAD'), status: git(dir, 'status', '-uall') });
}

describe('a failed tugcode commit', () => {
  it('leaves the work tree, the index and the refs exactly as they were (no empty log directory)', async () => {
    const root = planRepo();
    const wt = (await createWorktree(flowCtx(root), { plan: 'demo' })).worktree_path;
    const attempt = await workOn(flowCtx(root), wt, 'step-1');
    writeFileSync(join(wt, 'alpha.txt'), 'alpha\n');
    mkdirSync(join(wt, '.tug'), { recursive: true });
    const hooks = join(root, '.git', 'hooks');
    mkdirSync(hooks, { recursive: true });
    writeFileSync(join(hooks, 'pre-commit'), '#!/bin/sh\necho "hook says no" >&2\nexit 1\n');
    chmodSync(join(hooks, 'pre-commit'), 0o755);
    const before = treeState(wt);
    await expect(
      commitStep(flowCtx(wt), { plan: PLAN_PATH, step: 'step-1', message: 'feat: alpha', attempt }),
    ).rejects.toMatchObject({
      code: 'CommitFailed',
      exitCode: 4,
      details: expect.objectContaining({ cause: 'hook', stderr: 'hook says no' }),
    });
    expect(existsSync(join(wt, '.tugtool', 'implementation-log'))).toBe(false);
    expect(treeState(wt)).toBe(before);

    // The same in the main checkout (--allow-main), where state.db is present too.
    writeFileSync(join(root, 'beta.txt'), 'beta\n');
    const main = snapshot(root, { objects: false });
    await expect(
      commitStep(flowCtx(root), { plan: PLAN_PATH, step: 'step-2', message: 'feat: beta', allowMain: true }),
    ).rejects.toMatchObject({ code: 'CommitFailed' });
    expect(existsSync(join(root, '.tugtool', 'implementation-log'))).toBe(false);
    expect(snapshot(root, { objects: false })).toBe(main);
  });
});
