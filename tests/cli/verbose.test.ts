/**
 * `-v/--verbose` adds debug lines on stderr (docs/output.md §1): where the repository and the state store
 * are, which config the call read, and how long the command took. stdout is unchanged: under --json still
 * exactly one JSON document. Without -v, no debug line.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { planRepo, T0 } from '../state/helpers.js';

const env = { TUGCODE_NOW: T0 };
const debugLines = (stderr: string) => stderr.split('\n').filter((l) => l.startsWith('tugcode: debug: '));

describe('-v/--verbose', () => {
  it('prints bounded debug lines on stderr in text and --json mode; stdout stays one JSON document', () => {
    const root = planRepo();
    expect(runCli(['state', 'init', 'demo', '--json'], { cwd: root, env }).code).toBe(0);
    for (const flags of [['--json'], []]) {
      const r = runCli(['state', 'show', 'demo', '-v', ...flags], { cwd: root, env });
      expect(r.code, r.stderr).toBe(0);
      const lines = debugLines(r.stderr);
      expect(lines.length, r.stderr).toBeGreaterThanOrEqual(4);
      expect(lines.length).toBeLessThanOrEqual(20);
      expect(
        lines.some((l) => l.includes(`repository ${root}`)),
        r.stderr,
      ).toBe(true);
      expect(
        lines.some((l) => /state store: sqlite .*\.tugtool\/state\.db/.test(l)),
        r.stderr,
      ).toBe(true);
      expect(
        lines.some((l) => /config: no \.tugtool\/config\.toml/.test(l)),
        r.stderr,
      ).toBe(true);
      expect(
        lines.some((l) => /state show: \d+ ms/.test(l)),
        r.stderr,
      ).toBe(true);
      if (flags.length) {
        expect(JSON.parse(r.stdout).status).toBe('ok');
        expect(r.stdout).not.toContain('debug');
      }
      const quiet = runCli(['state', 'show', 'demo', ...flags], { cwd: root, env });
      expect(debugLines(quiet.stderr), quiet.stderr).toEqual([]);
    }
  });

  it('names the config file read and the variables that override it, never their values', () => {
    const root = planRepo();
    writeFileSync(join(root, '.tugtool', 'config.toml'), '[state]\nlease_seconds = 600\n');
    const r = runCli(['state', 'init', 'demo', '--verbose'], {
      cwd: root,
      env: { ...env, TUGCODE_STATE_MAX_ATTEMPTS: '77' },
    });
    expect(r.code, r.stderr).toBe(0);
    const lines = debugLines(r.stderr);
    expect(
      lines.some((l) => l.includes(`config: read ${join(root, '.tugtool', 'config.toml')}`)),
      r.stderr,
    ).toBe(true);
    const named = lines.filter((l) => l.includes('TUGCODE_STATE_MAX_ATTEMPTS'));
    expect(named.length, r.stderr).toBe(1);
    expect(named[0]).not.toContain('77');
  });

  it('on an error too: the debug lines, then the one error line', () => {
    const root = planRepo();
    const r = runCli(['state', 'show', 'nope', '-v', '--json'], { cwd: root, env });
    expect(r.code).not.toBe(0);
    expect(JSON.parse(r.stdout).status).toBe('error');
    expect(
      debugLines(r.stderr).some((l) => /state show: \d+ ms/.test(l)),
      r.stderr,
    ).toBe(true);
  });
});
