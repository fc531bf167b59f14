/**
 * Help and usage errors name the command asked about (docs/output.md §1): `tugcode help <group> <command>`
 * is that command's help, `-C <dir>` changes nothing about which command an error names, and a flag the input
 * table requires says so in the help.
 */
import { describe, expect, it } from 'vitest';
import { INPUT_TABLES } from '../../src/contract/inputs/index.js';
import { runCli } from '../helpers/cli.js';
import { tempDir, tempRepo } from '../helpers/repo.js';

describe('help and usage errors', () => {
  const cwd = tempDir('tugcode-help-');

  it('help <group> <command> prints the command’s help, as <group> help <command> and --help do', () => {
    for (const [group, cmd] of [
      ['state', 'claim'],
      ['state', 'fail'],
      ['worktree', 'create'],
    ] as const) {
      const viaHelp = runCli(['help', group, cmd], { cwd });
      expect(viaHelp.code).toBe(0);
      expect(viaHelp.stdout).toMatch(new RegExp(`^Usage: tugcode ${group} ${cmd} `));
      expect(viaHelp.stdout).toBe(runCli([group, 'help', cmd], { cwd }).stdout);
      expect(viaHelp.stdout).toBe(runCli([group, cmd, '--help'], { cwd }).stdout);
    }
    // One level still works as before, and `help refactor` is the refactor front door's own help.
    expect(runCli(['help', 'state'], { cwd }).stdout).toMatch(/^Usage: tugcode state \[options\] \[command\]/);
    expect(runCli(['help', 'refactor'], { cwd }).stdout).toMatch(/^usage: tugcode refactor <command>/);
    expect(runCli(['help', 'refactor', 'run-step'], { cwd }).stdout).toMatch(/^usage: tugcode refactor run-step /);
  });

  it('help of a command that does not exist is the unknown-command error, as calling it is', () => {
    for (const group of ['state', 'worktree']) {
      const direct = runCli([group, 'bogus', '--json'], { cwd });
      expect(direct.code).toBe(2);
      expect(direct.json.error.code).toBe('UnknownCommand');
      expect(direct.json.error.hint).toBe(`tugcode ${group} --help`);
      for (const args of [
        [group, 'help', 'bogus'],
        ['help', group, 'bogus'],
        [group, 'bogus', '--help'],
      ]) {
        const r = runCli([...args, '--json'], { cwd });
        expect(r.code, args.join(' ')).toBe(2);
        expect(r.json.command, args.join(' ')).toBe(group);
        expect(r.json.error, args.join(' ')).toEqual(direct.json.error);
        const text = runCli(args, { cwd });
        expect(text.stderr, args.join(' ')).toContain('unknown command "bogus"');
        expect(text.stderr, args.join(' ')).not.toContain('needs a subcommand');
        expect(text.stdout, args.join(' ')).toBe('');
      }
    }
    const top = runCli(['help', 'bogus', '--json'], { cwd });
    expect(top.code).toBe(2);
    expect(top.json.error.code).toBe('UnknownCommand');
    // `<group> help` and `<group> help <command>` are help asked: printed, exit 0.
    expect(runCli(['state', 'help'], { cwd })).toMatchObject({ code: 0, stderr: '' });
    expect(runCli(['state', 'help', 'init'], { cwd })).toMatchObject({ code: 0, stderr: '' });
  });

  it('-C <dir> names the same command and hint in a usage error as running in <dir>', () => {
    const repo = tempRepo({ 'README.md': 'x\n' });
    for (const args of [
      ['state', 'bogus', '--json'],
      ['state', '--json'],
      ['state', 'claim', '--json'],
      ['worktree', 'bogus', '--json'],
    ]) {
      const here = runCli(args, { cwd: repo });
      const there = runCli(['-C', repo, ...args], { cwd });
      const there2 = runCli(['--dir', repo, ...args], { cwd });
      expect(here.json.command, args.join(' ')).toBe(args[1] === 'claim' ? 'state claim' : args[0]);
      for (const r of [there, there2]) {
        expect(r.code, args.join(' ')).toBe(here.code);
        expect(r.json.command, args.join(' ')).toBe(here.json.command);
        expect(r.json.error, args.join(' ')).toEqual(here.json.error);
      }
    }
    expect(runCli(['-C', repo, 'state', 'bogus', '--json'], { cwd }).json.error.hint).toBe('tugcode state --help');
  });

  it('every flag an input table requires is marked required in its command’s help', () => {
    let checked = 0;
    for (const [command, table] of Object.entries(INPUT_TABLES)) {
      const required = Object.entries(table.fields).filter(
        ([, f]) => f.required && f.arg === undefined && !(f.type !== 'bool' && 'cliDefault' in f && f.cliDefault),
      );
      if (required.length === 0) continue;
      const help = runCli([...command.split(' '), '--help'], { cwd }).stdout;
      expect(help, command).toMatch(new RegExp(`^Usage: tugcode ${command} `));
      // An option's text runs from its flag to the next option line.
      const options = help.slice(help.indexOf('Options:')).split(/\n(?= {2}-)/);
      for (const [name] of required) {
        const flag = `--${name.replace(/_/g, '-')}`;
        const text = options.find((o) => o.trimStart().startsWith(`${flag} `));
        expect(text, `${command} ${flag}`).toBeDefined();
        expect(text!.replace(/\s+/g, ' '), `${command} ${flag}`).toMatch(/\(required(: this or --[a-z-]+)?\)/);
        checked++;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(5); // state fail --reason, state artifact --kind/--summary, commit --plan/--step
    const fail = runCli(['state', 'fail', '--help'], { cwd }).stdout;
    expect(fail).toMatch(/--reason <text> +why the attempt failed \(required\)/);
  });
});
