/**
 * `tugcode refactor` names its own commands (docs/kernel.md §2.1, §7.3–§7.4): its help is tugcode's, under
 * `tugcode refactor`, and lists run-step and skip beside the kernel's table; so does the missing-command error.
 * `tug` keeps its own help and message.
 */
import { mkdtempSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, runCli } from '../helpers/cli.js';

const TUG = join(ROOT, 'bin', 'tug.js');

describe('tugcode refactor help', () => {
  const cwd = mkdtempSync(join(tmpdir(), 'tug-refactor-help-'));

  it('--help is tugcode refactor’s and lists run-step and skip', () => {
    for (const flag of ['--help', '-h']) {
      const r = runCli(['refactor', flag], { cwd });
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^usage: tugcode refactor <command>/);
      expect(r.stdout).not.toContain('usage: tug <');
      for (const c of ['analyze-impact', 'run-step', 'skip', 'doctor'])
        expect(r.stdout).toMatch(new RegExp(`^  ${c} `, 'm'));
    }
  });

  it('the missing-command error lists every command, run-step and skip included', () => {
    const r = runCli(['refactor', '--json'], { cwd });
    expect(r.code).toBe(2);
    expect(r.json.error.code).toBe('InvalidArgument');
    expect(r.json.error.message).toBe(
      'no command given (analyze-impact, run, verify, snapshot, session, doctor, run-step, skip)',
    );
    expect(r.stderr).toContain('run-step, skip');
  });

  it('tug keeps its own help and message', () => {
    const help = spawnSync(process.execPath, [TUG, '--help'], { cwd, encoding: 'utf8' });
    expect(help.stdout).toMatch(/^usage: tug <command>/);
    expect(help.stdout).not.toContain('run-step');
    const none = spawnSync(process.execPath, [TUG], { cwd, encoding: 'utf8' });
    expect(JSON.parse(none.stdout).error.message).toBe(
      'no command given (analyze-impact, run, verify, snapshot, session, doctor)',
    );
  });
});
