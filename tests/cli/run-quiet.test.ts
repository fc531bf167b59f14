/**
 * `tugcode run -q` prints no progress, and nothing at all on a success (docs/output.md §1: -q drops the text
 * of a success); a failure prints its summary and the error line, warnings still go to stderr. The JSON Lines
 * stream of `--json` is its protocol and stays whole.
 */
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { implementerScript, planText, runRepo, step } from '../run/helpers.js';

const PLAN = planText([step(1, 'Base'), step(2, 'Left', { deps: [1] }), step(3, 'Right', { deps: [1] })]);

describe('run -q', () => {
  it('prints nothing on a success, as -q does for every command (docs/output.md §1)', () => {
    const impl = implementerScript();
    const root = runRepo(PLAN);
    const quiet = runCli(['-q', 'run', 'demo', '--implementer', impl.argv], { cwd: root });
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(quiet.stdout).toBe('');
    expect(quiet.stderr).toBe('');
    // The run did its work: a run again has nothing left.
    const again = runCli(['run', 'demo', '--implementer', impl.argv], { cwd: root });
    expect(again.stdout).toContain('plan done: nothing to run, all 3 steps already completed');
    // Nothing to run: still nothing printed.
    expect(runCli(['-q', 'run', 'demo', '--implementer', impl.argv], { cwd: root }).stdout).toBe('');
  });

  it('still says its warnings on stderr on a success', () => {
    // No implementer: the NoImplementer warning, as the plain run says it.
    const plain = runCli(['run', 'demo'], { cwd: runRepo(PLAN) });
    const quiet = runCli(['-q', 'run', 'demo'], { cwd: runRepo(PLAN) });
    expect([plain.code, quiet.code]).toEqual([0, 0]);
    expect(quiet.stdout).toBe('');
    expect(quiet.stderr).toContain('tugcode: warning: NoImplementer: ');
    expect(quiet.stderr).toBe(plain.stderr);
  });

  it('prints the summary alone on a failure, the same summary a plain run ends with', () => {
    const impl = implementerScript();
    const plan = planText([
      step(1, 'Base'),
      step(2, 'Left', { deps: [1], checkpoint: 'exit 3' }),
      step(3, 'Right', { deps: [1] }),
    ]);
    const args = ['run', 'demo', '--implementer', impl.argv, '--max-attempts', '1', '--workers', '1'];
    const plain = runCli(args, { cwd: runRepo(plan) });
    const quiet = runCli(['-q', ...args], { cwd: runRepo(plan) });
    expect([plain.code, quiet.code]).toEqual([4, 4]);
    const plainLines = plain.stdout.trimEnd().split('\n');
    const quietLines = quiet.stdout.trimEnd().split('\n');
    expect(plainLines.length).toBeGreaterThan(quietLines.length);
    // No progress line (claimed, started, completed …) of the plain run appears.
    expect(quiet.stdout).not.toMatch(/claimed|started|integrated/);
    // What is left is the summary: the plain run's last lines, times, shares, hashes and paths aside.
    const strip = (l: string) =>
      l
        .replace(/\b[0-9a-f]{12}\b/g, 'H')
        .replace(/\d+(\.\d+)?/g, 'N')
        // A wall time is printed in ms or s depending on its length.
        .replace(/\bN(ms|s)\b/g, 'Nt')
        .replace(/\/tmp\/\S+/g, 'P')
        .replace(/\s+/g, ' ');
    expect(quietLines.map(strip)).toEqual(plainLines.slice(-quietLines.length).map(strip));
    expect(quiet.stderr.replace(/\/tmp\/\S+/g, 'P')).toBe(plain.stderr.replace(/\/tmp\/\S+/g, 'P'));
  });

  it('prints the summary and the error line when the run fails', () => {
    const impl = implementerScript();
    const plan = planText([step(1, 'Base', { checkpoint: 'exit 3' })]);
    const r = runCli(['-q', 'run', 'demo', '--implementer', impl.argv, '--max-attempts', '1'], { cwd: runRepo(plan) });
    expect(r.code).not.toBe(0);
    expect(r.stdout).not.toMatch(/claimed|started/);
    expect(r.stdout).toMatch(/failed/);
    expect(r.stderr).toMatch(/PlanIncomplete/);
  });

  it('keeps every event of --json', () => {
    const impl = implementerScript();
    const r = runCli(['-q', 'run', 'demo', '--implementer', impl.argv, '--json'], { cwd: runRepo(PLAN) });
    const types = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).type);
    expect(types).toContain('claimed');
    expect(types.at(-1)).toBe('summary');
  });
});
