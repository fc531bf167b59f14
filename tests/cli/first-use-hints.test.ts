/**
 * What a new user meets first, through the built CLI: a mistyped command or subcommand gets the same
 * "did you mean" an unknown flag gets.
 */
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempRepo } from '../helpers/repo.js';

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
});
