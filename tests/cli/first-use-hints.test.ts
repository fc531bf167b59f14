/**
 * What a new user meets first, through the built CLI: a mistyped command or subcommand gets the same
 * "did you mean" an unknown flag gets; a plan named in a repository never set up points at `tugcode init`;
 * a run that fails before it starts prints only its error in text mode (docs/run.md §1.3 keeps the summary
 * line of --json).
 */
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { git, tempRepo } from '../helpers/repo.js';

describe('first-use hints', () => {
  const root = tempRepo();

  it('a mistyped command or subcommand suggests the one meant', () => {
    const cmd = runCli(['stat'], { cwd: root });
    expect(cmd.code).toBe(2);
    expect(cmd.stderr).toContain('UnknownCommand: unknown command "stat"');
    expect(cmd.stderr).toContain('hint: did you mean tugcode state?');

    const sub = runCli(['state', 'shwo', '--json'], { cwd: root });
    expect(sub.code).toBe(2);
    expect(sub.json.error).toMatchObject({ code: 'UnknownCommand', details: { command: 'shwo' } });
    expect(sub.json.error.hint).toMatch(/^did you mean tugcode state show\?.*tugcode state --help/);

    // Nothing close: where the commands are listed, as before.
    expect(runCli(['xyzzy'], { cwd: root }).stderr).toContain('hint: tugcode --help\n');
  });

  it('a plan named before tugcode init points at init, not validate', () => {
    for (const args of [
      ['run', 'x'],
      ['state', 'show', 'x'],
    ]) {
      const r = runCli([...args, '--json'], { cwd: root });
      expect(r.code, r.stderr).toBe(3);
      const error = args[0] === 'run' ? JSON.parse(r.stdout.trim().split('\n').at(-1)!).error : r.json.error;
      expect(error).toMatchObject({
        code: 'PlanNotFound',
        hint: 'tugcode init   (this repository has no .tugtool/ yet)',
      });
    }
  });

  it('a run that fails before it starts prints only the error in text mode; --json keeps its summary line', () => {
    const repo = tempRepo();
    expect(runCli(['init'], { cwd: repo }).code).toBe(0);
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'init');

    const text = runCli(['run', 'nosuch'], { cwd: repo });
    expect(text.code).toBe(3);
    expect(text.stdout).toBe('');
    expect(text.stderr).toMatch(/^tugcode: PlanNotFound: no plan matches "nosuch"\nhint: tugcode validate/);

    const json = runCli(['run', 'nosuch', '--json'], { cwd: repo });
    expect(json.code).toBe(3);
    const lines = json.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      type: 'summary',
      status: 'error',
      steps_completed: [],
      commits: [],
      workers: [],
      error: { code: 'PlanNotFound' },
    });
  });
});
