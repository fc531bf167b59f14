/**
 * doctor names a step commit nothing will integrate (docs/git.md §4.2, §7): a claimed step whose commit is on
 * its worktree's branch only (a blocked or killed `tugcode commit --integrate`, or its `git commit` outliving
 * it), and a tugplan worktree stopped mid-rebase; each with the command that finishes it.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { WarningSink } from '../../src/contract/envelope.js';
import { fixedClock, parseInstant } from '../../src/clock.js';
import { runDoctor, type DoctorCheck } from '../../src/gitflow/doctor.js';
import { runCli, runJson } from '../helpers/cli.js';
import { git, writeFiles } from '../helpers/repo.js';
import { startedStepWithOpenCheckpoint, step1CommitArgs, T0 } from './helpers.js';

const env = { TUGCODE_NOW: T0 };

async function checks(root: string): Promise<Record<string, DoctorCheck>> {
  const d = await runDoctor({
    cwd: root,
    env: { ...process.env, NODE_ENV: 'test' },
    clock: fixedClock(parseInstant(T0)!),
    warnings: new WarningSink(),
    loadConfig: (repo) => loadConfig(repo.mainRoot, {}, new WarningSink()),
    kernel: false,
  });
  return Object.fromEntries(d.checks.map((c) => [c.name, c]));
}

describe('doctor and a step commit left off the integration branch', () => {
  it('warns about the claimed step whose HEAD commit is not integrated; its fix finishes the step; then it passes', async () => {
    const { root, wt } = await startedStepWithOpenCheckpoint();
    expect((await checks(root))['unintegrated-step-commits']?.status).toBe('pass');
    const r = runJson('commit', step1CommitArgs(wt, '--integrate'), { cwd: root, env });
    expect(r.json.state_failure_reason).toBe('open_items');
    const c = (await checks(root))['unintegrated-step-commits']!;
    expect(c.status).toBe('warn');
    expect(c.message).toContain(
      `.tugtool/tugplan-demo.md step-1: ${(r.json.commit_hash as string).slice(0, 12)} in ${wt}`,
    );
    expect(c.fix).toBe(
      `tugcode commit --worktree ${wt} --plan .tugtool/tugplan-demo.md --step step-1 --attempt 1 --integrate`,
    );
    runCli(['state', 'update', 'demo', 'step-1', '--worktree', wt, '--complete-remaining'], { cwd: root, env });
    const argv = c.fix.split(' ').slice(1);
    expect(runCli(argv, { cwd: root, env }).code).toBe(0);
    expect((await checks(root))['unintegrated-step-commits']?.status).toBe('pass');
  });

  it('warns about a tugplan worktree stopped mid-rebase, with --continue/--abort', async () => {
    const { root, wt } = await startedStepWithOpenCheckpoint();
    expect((await checks(root))['worktrees-settled']?.status).toBe('pass');
    git(wt, 'add', '-A');
    git(wt, 'commit', '-qm', 'wip');
    writeFiles(wt, {});
    const r0 = spawnSync('git', ['rebase', '-i', 'HEAD~1'], {
      cwd: wt,
      env: { ...process.env, GIT_SEQUENCE_EDITOR: 'sed -i s/^pick/edit/' },
      encoding: 'utf8',
    });
    expect(r0.status, r0.stderr).toBe(0);
    const c = (await checks(root))['worktrees-settled']!;
    expect(c.status).toBe('warn');
    expect(c.message).toContain(`${wt} (rebase)`);
    expect(c.fix).toContain(`git -C ${wt} rebase --continue (after resolving) or --abort`);
    git(wt, 'rebase', '--abort');
    expect((await checks(root))['worktrees-settled']?.status).toBe('pass');
  });
});
