/**
 * A step commit whose step still has open checklist items (docs/git.md §4): the commit says what to run
 * next — close the items (`state update … --complete-remaining`, plan, step and worktree filled in), then
 * finish the step (`commit … --integrate` again when it integrates, else `state complete … --commit`) —
 * not `state reconcile`, which cannot complete a step with open items. The command, run as written, does it.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { shellArg } from '../../src/util/shell-arg.js';
import { CLI, runCli, runJson } from '../helpers/cli.js';
import { git } from '../helpers/repo.js';
import { startedStepWithOpenCheckpoint, step1CommitArgs, T0 } from './helpers.js';

const PLAN_PATH = '.tugtool/tugplan-demo.md';
const env = { TUGCODE_NOW: T0 };

/** The `next:` line of a commit's text, without its `   (comment)`. */
function nextCommand(stdout: string): string {
  const line = stdout.split('\n').find((l) => l.trimStart().startsWith('next: '));
  expect(line, stdout).toBeDefined();
  return line!.trimStart().slice('next: '.length).split('   (')[0]!;
}

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
        `tugcode commit --worktree ${wt} --plan ${PLAN_PATH} --step step-1 --integrate --message integrate`,
    );
    expect(r.stdout).toContain('(or mark each item: --checkpoint 0 completed, or deferred --reason "<why>")');
    const head = git(wt, 'rev-parse', 'HEAD').trim();

    const out = runAsUser(next, root);
    expect(out).toContain('integrated into tugplan/demo');
    expect(out).toContain('state: step completed');
    expect(git(root, 'merge-base', '--is-ancestor', head, 'tugplan/demo')).toBe('');
    expect(stepStatus(root)).toBe('completed');
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
