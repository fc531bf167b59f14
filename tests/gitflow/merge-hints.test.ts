/**
 * `merge` of a finished plan named wrong: a --branch or --into that does not exist, or several worktree
 * branches to choose from, is answered with the command that names the right one, and nothing changes.
 */
import { describe, expect, it } from 'vitest';
import { expectError, runJson } from '../helpers/cli.js';
import { createWorktree } from '../../src/gitflow/worktree.js';
import { finishPlan, flowCtx, PLAN_PATH, planRepo, snapshot, T0 } from './helpers.js';

const env = { TUGCODE_NOW: T0 };

describe('merge: the branches named', () => {
  it('--branch, --into and several worktree branches carry a hint', async () => {
    const root = planRepo();
    const done = await finishPlan(root, [{}, {}]);
    const merge = (...args: string[]) => runJson('merge', ['merge', 'demo', ...args], { cwd: root, env });
    const before = snapshot(root);

    const nob = merge('--branch', 'no-such');
    expectError(nob, 'InvalidArgument', 2);
    expect(nob.json.error.hint).toContain('tugcode worktree list');
    const noi = merge('--into', 'no-such');
    expectError(noi, 'InvalidArgument', 2);
    expect(noi.json.error.hint).toBe('pass --into an existing branch (git branch lists them)');
    expect(snapshot(root)).toBe(before);

    const other = await createWorktree(flowCtx(root, '2026-03-01T11:00:00.000Z'), { plan: 'demo', new: true });
    const two = merge();
    expectError(two, 'InvalidArgument', 2);
    expect(two.json.error.hint).toBe(
      `tugcode merge ${PLAN_PATH} --branch ${other.branch_name}   or   tugcode merge ${PLAN_PATH} --branch ${done.branch}`,
    );
  });
});
