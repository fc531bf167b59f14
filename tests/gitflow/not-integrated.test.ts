/**
 * A step commit that `tugcode commit --integrate` could not integrate (an open checkpoint) is said to be
 * NOT integrated; completing the step by hand with it is refused while the integration branch lacks it;
 * the same `tugcode commit --integrate` run again integrates and completes it (docs/git.md, issue 22
 * item 15).
 */
import { describe, expect, it } from 'vitest';
import { expectError, runCli, runJson } from '../helpers/cli.js';
import { git } from '../helpers/repo.js';
import { startedStepWithOpenCheckpoint, snapshot, step1CommitArgs, T0 } from './helpers.js';

const env = { TUGCODE_NOW: T0 };

const commitArgs = (wt: string) => step1CommitArgs(wt, '--integrate');

describe('a step commit left off the integration branch', () => {
  it('commit says plainly that it did not integrate (text and JSON warning); the integration branch exists without it', async () => {
    const { root, wt } = await startedStepWithOpenCheckpoint();
    const r = runCli(commitArgs(wt), { cwd: root, env });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('NOT integrated into tugplan/demo: the commit is only on tugplan/demo--20260301-100000');
    expect(r.stdout).toContain('state NOT updated (open_items)');
    expect(r.stdout + r.stderr).toMatch(/was NOT integrated into tugplan\/demo \(open_items\)/);
    const head = git(wt, 'rev-parse', 'HEAD').trim();
    expect(git(root, 'branch', '--list', 'tugplan/demo')).not.toBe('');
    expect(() => git(root, 'merge-base', '--is-ancestor', head, 'tugplan/demo')).toThrow();
  });

  it('state complete --commit HEAD is refused (CommitNotIntegrated, exit 4, changes nothing); commit again integrates and completes', async () => {
    const { root, wt } = await startedStepWithOpenCheckpoint();
    const first = runJson('commit', commitArgs(wt), { cwd: root, env });
    expect(first.json).toMatchObject({ committed: true, integrated: false, integration_branch: 'tugplan/demo' });
    expect(first.json.warnings.map((w: { code: string }) => w.code)).toEqual(['NotIntegrated']);
    const head = first.json.commit_hash as string;
    const tick = ['state', 'update', 'demo', 'step-1', '--worktree', wt, '--all-checkpoints', 'completed', '--json'];
    expect(runCli(tick, { cwd: root, env }).code).toBe(0);

    const before = snapshot(root);
    const byHand = runJson(
      'state complete',
      ['state', 'complete', 'demo', 'step-1', '--worktree', wt, '--commit', 'HEAD'],
      {
        cwd: root,
        env,
      },
    );
    expectError(byHand, 'CommitNotIntegrated', 4);
    expect(byHand.json.error.details).toMatchObject({ commit_hash: head, branch: 'tugplan/demo' });
    expect(byHand.json.error.hint).toContain(`tugcode commit --worktree ${wt} --plan demo --step step-1 --integrate`);
    expect(snapshot(root)).toBe(before);

    const again = runJson('commit', [...commitArgs(wt).slice(0, -3), '--message', 'integrate', '--integrate'], {
      cwd: root,
      env,
    });
    expect(again.json).toMatchObject({
      committed: false,
      integrated: true,
      state_updated: true,
      plan_completed: true,
      warnings: [],
    });
    expect(git(root, 'rev-parse', 'tugplan/demo').trim()).toBe(again.json.commit_hash);
    expect(git(root, 'log', '--format=%s', 'tugplan/demo', '-1')).toBe('feat: alpha\n');
    // A third time there is nothing to do: NothingToCommit as before.
    expectError(runJson('commit', commitArgs(wt), { cwd: root, env }), 'NothingToCommit', 4);
  });
});
