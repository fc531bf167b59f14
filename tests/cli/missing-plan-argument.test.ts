/**
 * A command called without its plan says a plan is needed and how to list the plans, even when a required
 * flag is missing too (commander checks flags first, so `state claim` alone only named `--worktree`).
 */
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempRepo } from '../helpers/repo.js';

describe('a missing plan argument', () => {
  it.each([[['state', 'claim']], [['state', 'claim', '--worktree', '.']], [['state', 'start']], [['state', 'init']]])(
    '%j says a plan is needed and how to list plans',
    (argv) => {
      const r = runCli([...argv, '--json'], { cwd: tempRepo() });
      expect(r.code).toBe(2);
      expect(r.json.error.code).toBe('InvalidArgument');
      expect(r.json.error.message).toMatch(
        new RegExp(
          `^${argv.slice(0, 2).join(' ')} needs a plan \\(its path or slug\\): tugcode ${argv.slice(0, 2).join(' ')} .*<plan>`,
        ),
      );
      expect(r.json.error.hint).toBe('tugcode status   (lists the plans)');
    },
  );

  it('names a missing step after the plan', () => {
    const r = runCli(['state', 'start', 'demo', '--json'], { cwd: tempRepo() });
    expect(r.json.error.message).toMatch(/^state start needs <step>: tugcode state start .*<plan> <step>/);
  });

  it('ends the JSON Lines of run with the same error', () => {
    const r = runCli(['run', '--json'], { cwd: tempRepo() });
    expect(r.code).toBe(2);
    const last = JSON.parse(r.stdout.trim().split('\n').at(-1)!);
    expect(last.error.message).toMatch(/^run needs a plan/);
  });
});
