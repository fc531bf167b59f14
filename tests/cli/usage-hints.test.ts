/**
 * A user's mistake in a flag or argument is answered with what to do next (docs/output.md §3): a
 * representative set of InvalidArgument and InvalidTransition refusals through the built CLI, each with a
 * hint, and nothing changed.
 */
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { cliRepo, refusedCli, st } from '../state/cli-helpers.js';
import { DEMO_PATH } from '../state/helpers.js';

describe('usage mistakes carry a hint', () => {
  it('flags and arguments of state commands', () => {
    const { root, w1 } = cliRepo();
    const hint = (args: string[], code = 'InvalidArgument', exit = 2) =>
      refusedCli(root, args, code, exit).json.error.hint as string;

    expect(hint(['claim', 'demo', '--worktree', w1, '--bogus'])).toBe(
      'tugcode state claim --help   (its arguments and flags)',
    );
    expect(hint(['claim', 'demo', '--worktree'])).toBe('tugcode state claim --help   (its arguments and flags)');
    expect(hint(['update', 'demo', 'step-0', '--worktree', w1, '--task', '0'])).toBe(
      '--task 0 completed or --task 0:completed (the 0-based ordinal tugcode state show lists); statuses: open, in_progress, completed, deferred',
    );
    expect(hint(['update', 'demo', 'step-0', '--worktree', w1])).toContain('--all-tasks completed');
    expect(hint(['log', '--step', 'step-0'])).toBe(
      'tugcode state log <plan> --step step-0   (tugcode status lists the plans)',
    );
    expect(hint(['show', 'Bad Slug'])).toContain('tugcode validate lists the plans');
    expect(hint(['reconcile', 'demo', '--ref', 'no-such-ref'])).toContain('git branch --list');

    // A claim on a second step while the worktree holds the first: the step's status is where to look.
    expect(st(root, ['claim', 'demo', '--worktree', w1]).json.claimed).toBe(true);
    expect(hint(['claim', 'demo', '--step', 'step-2', '--worktree', w1], 'InvalidTransition', 4)).toBe(
      `tugcode state show ${DEMO_PATH} --step step-2   (its status and who holds it)`,
    );
    expect(hint(['reset', 'demo', 'step-0'], 'InvalidTransition', 4)).toBe(
      `when ${w1} has stopped working on it: tugcode state reset ${DEMO_PATH} step-0 --force (its attempt is discarded); else wait for it (tugcode status)`,
    );
    expect(hint(['complete', 'demo', 'step-0', '--worktree', w1, '--commit', 'abc'])).toContain(
      `git -C ${w1} log --oneline -5`,
    );
  });

  it('flags of run and file flags', () => {
    const { root, w1 } = cliRepo();
    const split = runCli(['run', 'demo', '--implementer', 'agent "unclosed', '--dry-run', '--json'], { cwd: root });
    expect([split.code, split.json.error.code]).toEqual([2, 'InvalidArgument']);
    expect(split.json.error.hint).toContain(`close each quote, e.g. --implementer './agent.sh --model "big one"'`);
    const file = refusedCli(
      root,
      ['artifact', 'demo', 'step-0', '--worktree', w1, '--kind', 'note', '--summary-file', 'no-such-file'],
      'InvalidArgument',
      2,
    );
    expect(file.json.error.hint).toBe(
      '--summary-file names a file this user can read (a relative path is read from the current directory), or - for stdin',
    );
  });
});
