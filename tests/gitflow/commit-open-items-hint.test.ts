/**
 * A step commit whose step still has open checklist items (docs/git.md §4): the commit says what to run
 * next — close the items (`state update … --complete-remaining`, plan, step and worktree filled in), then
 * finish the step (`commit … --integrate` again when it integrates, else `state complete … --commit`) —
 * not `state reconcile`, which cannot complete a step with open items. The command, run as written, does it.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { shellArg } from '../../src/util/shell-arg.js';
import { CLI, runCli, runJson } from '../helpers/cli.js';
import { git, writeFiles } from '../helpers/repo.js';
import { startedStepWithOpenCheckpoint, step1CommitArgs, T0 } from './helpers.js';

const PLAN_PATH = '.tugtool/tugplan-demo.md';
const env = { TUGCODE_NOW: T0 };

/** The `next:` line of a commit's text, without its `   (comment)`. */
function nextCommand(stdout: string): string {
  const line = stdout.split('\n').find((l) => l.trimStart().startsWith('next: '));
  expect(line, stdout).toBeDefined();
  return line!.trimStart().slice('next: '.length).split('   (')[0]!;
}

/** `tugcode commit` of step-1 in `wt` with only the `extra` flags. */
const commitArgs = (wt: string, ...extra: string[]) => [
  'commit',
  '--worktree',
  wt,
  '--plan',
  'demo',
  '--step',
  'step-1',
  ...extra,
];

/** Runs a command line with `tugcode` being the built CLI. */
function runAsUser(command: string, cwd: string) {
  const r = spawnSync('sh', ['-c', `tugcode() { node ${shellArg(CLI)} "$@"; }\n${command}`], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, NODE_ENV: 'test', NO_COLOR: '1', ...env },
  });
  expect(r.status, r.stdout + r.stderr).toBe(0);
  return r.stdout;
}

const stepStatus = (root: string) =>
  runJson('state show', ['state', 'show', 'demo'], { cwd: root, env }).json.plans[0].steps[0].status;

describe('commit of a step with open checklist items', () => {
  it('--integrate: names the state update and the commit to run again; as written they integrate and complete it', async () => {
    const { root, wt } = await startedStepWithOpenCheckpoint();
    const r = runCli(step1CommitArgs(wt, '--integrate'), { cwd: root, env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('state NOT updated (open_items)');
    expect(r.stdout).not.toContain('state reconcile');
    const next = nextCommand(r.stdout);
    expect(next).toBe(
      `tugcode state update ${PLAN_PATH} step-1 --worktree ${wt} --complete-remaining && ` +
        `tugcode commit --worktree ${wt} --plan ${PLAN_PATH} --step step-1 --integrate`,
    );
    expect(r.stdout).toContain('(or mark each item: --checkpoint 0 completed, or deferred --reason "<why>")');
    const head = git(wt, 'rev-parse', 'HEAD').trim();

    const out = runAsUser(next, root);
    expect(out).toContain('integrated into tugplan/demo');
    expect(out).toContain('state: step completed');
    expect(git(root, 'merge-base', '--is-ancestor', head, 'tugplan/demo')).toBe('');
    expect(stepStatus(root)).toBe('completed');
  });

  it('--integrate, with a change made meanwhile: the hint makes the step one commit again, its message kept, its log entry listing all files', async () => {
    const { root, wt } = await startedStepWithOpenCheckpoint();
    const r = runJson('commit', step1CommitArgs(wt, '--integrate'), { cwd: root, env });
    expect(r.json.state_failure_reason).toBe('open_items');
    const first = r.json.commit_hash as string;
    const parent = git(wt, 'rev-parse', `${first}^`).trim();
    const warning = (r.json.warnings as { code: string; message: string }[]).find((w) => w.code === 'NotIntegrated');
    expect(warning?.message).not.toContain('--message');
    writeFiles(wt, { 'beta.txt': 'beta\n' });

    const out = runAsUser(r.json.state_error.error.hint.split('   (')[0], root);
    expect(out).toContain('integrated into tugplan/demo');
    expect(out).toContain('state: step completed');
    // One commit of the step on top of its parent, with the first commit's message and both files.
    const tip = git(root, 'rev-parse', 'tugplan/demo').trim();
    expect(git(root, 'rev-parse', `${tip}^`).trim()).toBe(parent);
    expect(git(root, 'log', '-1', '--format=%s', tip).trim()).toBe('feat: alpha');
    expect(git(root, 'log', '--format=%H', `${parent}..${tip}`).trim().split('\n')).toHaveLength(1);
    const files = git(root, 'show', '--name-only', '--format=', tip).trim().split('\n').sort();
    expect(files).toEqual(['.tugtool/implementation-log/demo/step-1.md', 'alpha.txt', 'beta.txt']);
    const entry = git(root, 'show', `${tip}:.tugtool/implementation-log/demo/step-1.md`);
    expect(entry).toContain('## Summary\n\nfeat: alpha\n');
    expect(entry).toContain('- `alpha.txt`\n- `beta.txt`');
    expect(stepStatus(root)).toBe('completed');
  });

  it('the step commit made again with --message takes the new message; a failing hook puts HEAD back', async () => {
    const { root, wt } = await startedStepWithOpenCheckpoint();
    const first = runJson('commit', step1CommitArgs(wt, '--integrate'), { cwd: root, env }).json.commit_hash as string;
    writeFiles(wt, { 'beta.txt': 'beta\n' });
    const hooks = git(wt, 'rev-parse', '--git-path', 'hooks').trim();
    const hookDir = isAbsolute(hooks) ? hooks : join(wt, hooks);
    mkdirSync(hookDir, { recursive: true });
    writeFileSync(join(hookDir, 'pre-commit'), '#!/bin/sh\nexit 1\n', { mode: 0o755 });
    const failed = runJson('commit', commitArgs(wt, '--integrate', '--message', 'feat: alpha and beta'), {
      cwd: root,
      env,
    });
    expect(failed.json.error.code).toBe('CommitFailed');
    expect(git(wt, 'rev-parse', 'HEAD').trim()).toBe(first);
    expect(git(wt, 'status', '--porcelain').trim()).toBe('?? beta.txt');
    rmSync(join(hookDir, 'pre-commit'));

    const again = runJson('commit', commitArgs(wt, '--integrate', '--message', 'feat: alpha and beta'), {
      cwd: root,
      env,
    });
    expect(again.json).toMatchObject({
      committed: true,
      files_staged: expect.arrayContaining(['alpha.txt', 'beta.txt']),
    });
    expect(git(wt, 'log', '-1', '--format=%s').trim()).toBe('feat: alpha and beta');
    expect(git(wt, 'rev-parse', 'HEAD^').trim()).toBe(git(wt, 'rev-parse', `${first}^`).trim());
  });

  it('without --message and nothing of the step at HEAD: InvalidArgument, nothing written', async () => {
    const { root, wt } = await startedStepWithOpenCheckpoint();
    const before = git(wt, 'status', '--porcelain');
    const r = runJson('commit', commitArgs(wt, '--integrate'), {
      cwd: root,
      env,
    });
    expect(r.code).toBe(2);
    expect(r.json.error).toMatchObject({ code: 'InvalidArgument' });
    expect(r.json.error.message).toContain('--message');
    expect(git(wt, 'status', '--porcelain')).toBe(before);
  });

  it('without integration: names the state update and state complete with this commit; JSON carries the same hint', async () => {
    const { root, wt } = await startedStepWithOpenCheckpoint();
    const r = runJson('commit', step1CommitArgs(wt), { cwd: root, env });
    expect(r.json).toMatchObject({
      committed: true,
      integration_branch: null,
      state_update_failed: true,
      state_failure_reason: 'open_items',
      state_error: { error: { code: 'ChecklistIncomplete', details: { worktree: wt } } },
    });
    const hash = r.json.commit_hash as string;
    const hint = r.json.state_error.error.hint as string;
    expect(hint.split('   (')[0]).toBe(
      `tugcode state update ${PLAN_PATH} step-1 --worktree ${wt} --complete-remaining && ` +
        `tugcode state complete ${PLAN_PATH} step-1 --worktree ${wt} --commit ${hash}`,
    );
    expect(stepStatus(root)).toBe('in_progress');
    runAsUser(hint.split('   (')[0]!, root);
    expect(stepStatus(root)).toBe('completed');
  });
});
