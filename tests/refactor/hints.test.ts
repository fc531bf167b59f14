/**
 * `refactor run-step` and `refactor skip` errors carry the catalogue's hint like every other `--json` error
 * (docs/output.md §1–§2): in the envelope's `error.hint` and as a `hint:` line on stderr.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TugError, type ErrorCode } from '../../src/contract/errors.js';
import { runJson } from '../helpers/cli.js';
import { RENAME, runRefactorCli, setup } from './helpers.js';

describe('refactor run-step / skip hints', () => {
  it('a tugcode error names the catalogue hint in the envelope and on stderr', () => {
    const { root, wt } = setup([RENAME]);
    runJson('state init', ['state', 'init', 'demo'], { cwd: root });
    runJson('state claim', ['state', 'claim', 'demo', '--worktree', wt], { cwd: root });
    const cases: [string[], string][] = [
      [['run-step', 'demo', 'step-1', '--worktree', root], 'NotOwner'],
      [['skip', 'demo', 'step-1', '--worktree', root, '--ordinal', '0', '--reason', 'x'], 'NotOwner'],
      [['run-step', 'demo', 'step-1', '--worktree', wt, '--attempt', '7'], 'AttemptMismatch'],
      [['run-step', 'demo', 'step-9', '--worktree', wt], 'StepNotFound'],
      [['run-step', 'nope', 'step-1', '--worktree', wt], 'PlanNotFound'],
      [['run-step', 'demo', 'step-1', '--worktree', join(root, 'no-such-dir')], 'WorktreeNotFound'],
    ];
    for (const [args, code] of cases) {
      const r = runRefactorCli(args, root);
      expect(r.json.error.code, args.join(' ')).toBe(code);
      const hint = new TugError(code as ErrorCode, r.json.error.details).hint;
      expect(hint, `${code} has a catalogue hint`).toBeTruthy();
      expect(r.json.error.hint, args.join(' ')).toBe(hint);
      expect(r.stderr).toContain(`\nhint: ${hint}\n`);
    }
    const notOwner = runRefactorCli(['run-step', 'demo', 'step-1', '--worktree', root], root);
    expect(notOwner.json.error.hint).toMatch(/^tugcode state claim .+ --worktree <your worktree>$/);
  });
});
