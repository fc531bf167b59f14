/**
 * Step arguments accept `step-2` or `#step-2` (docs/output.md §5) in every command that takes a step, all
 * through the one anchor normalizer (src/plan/anchors.ts). `state claim --step '#step-1'` used to answer
 * StepNotFound. Every command here is a process of the built CLI.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { runJson } from '../helpers/cli.js';
import { git, writeFiles } from '../helpers/repo.js';
import { planRepo, T0 } from '../gitflow/helpers.js';

const env = { TUGCODE_NOW: T0 };

describe("every command that takes a step accepts '#step-N'", () => {
  let root: string;
  let wt: string;
  const run = (command: string, args: string[], input?: string) => {
    const r = runJson(command, args, { cwd: wt, env, ...(input === undefined ? {} : { input }) });
    expect(r.json.status, `${args.join(' ')}\n${r.stdout}${r.stderr}`).toBe('ok');
    return r.json;
  };
  const st = (args: string[], input?: string) => run(`state ${args[0]}`, ['state', ...args], input);

  beforeAll(() => {
    root = planRepo();
    const r = runJson('worktree create', ['worktree', 'create', 'demo'], { cwd: root, env });
    expect(r.json.status, r.stdout + r.stderr).toBe('ok');
    wt = r.json.worktree_path;
  });

  it('claim --step, start, heartbeat, update, artifact, show --step, log --step and commit --step', () => {
    expect(st(['claim', 'demo', '--worktree', '.', '--step', '#step-1'])).toMatchObject({
      claimed: true,
      step_anchor: 'step-1',
    });
    expect(st(['start', 'demo', '#step-1', '--worktree', '.'])).toMatchObject({ step_anchor: 'step-1' });
    expect(st(['heartbeat', 'demo', '#step-1', '--worktree', '.'])).toMatchObject({ step_anchor: 'step-1' });
    expect(st(['update', 'demo', '#step-1', '--worktree', '.', '--all', 'completed'])).toMatchObject({
      step_anchor: 'step-1',
      updated: 1,
    });
    expect(
      st(['artifact', 'demo', '#step-1', '--worktree', '.', '--kind', 'coder_report', '--summary-file', '-'], 'done'),
    ).toMatchObject({ recorded: true, step_anchor: 'step-1' });
    const show = st(['show', 'demo', '--step', '#step-1']);
    expect(show.plans[0].steps.map((s: { anchor: string }) => s.anchor)).toEqual(['step-1']);
    const log = st(['log', 'demo', '--step', '#step-1']);
    expect(log.events.length).toBeGreaterThan(0);
    expect(new Set(log.events.map((e: { step_anchor: string }) => e.step_anchor))).toEqual(new Set(['step-1']));

    writeFiles(wt, { 'alpha.txt': 'alpha\n' });
    expect(run('commit', ['commit', '--plan', 'demo', '--step', '#step-1', '--message', 'feat: alpha'])).toMatchObject({
      committed: true,
      state_updated: true,
    });
    expect(git(wt, 'log', '-1', '--format=%B')).toContain('Tug-Step: step-1\n');
  });

  it('release, fail, reset and complete', () => {
    st(['claim', 'demo', '--worktree', '.', '--step', '#step-2']);
    expect(st(['release', 'demo', '#step-2', '--worktree', '.'])).toMatchObject({ step_anchor: 'step-2' });
    st(['claim', 'demo', '--worktree', '.', '--step', '#step-2']);
    expect(st(['fail', 'demo', '#step-2', '--worktree', '.', '--reason', 'red'])).toMatchObject({
      step_anchor: 'step-2',
    });
    expect(st(['reset', 'demo', '#step-2'])).toMatchObject({ reset: true, step_anchor: 'step-2' });
    st(['claim', 'demo', '--worktree', '.', '--step', '#step-2']);
    st(['start', 'demo', '#step-2', '--worktree', '.']);
    st(['update', 'demo', '#step-2', '--worktree', '.', '--complete-remaining']);
    expect(st(['complete', 'demo', '#step-2', '--worktree', '.', '--commit', 'HEAD'])).toMatchObject({
      step_anchor: 'step-2',
      plan_completed: true,
    });
  });
});
