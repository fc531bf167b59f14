/**
 * `tugcode run -q` prints no progress: only the summary (and the error line on failure). The JSON Lines
 * stream of `--json` is its protocol and stays whole.
 */
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { implementerScript, planText, runRepo, step } from '../run/helpers.js';

const PLAN = planText([step(1, 'Base'), step(2, 'Left', { deps: [1] }), step(3, 'Right', { deps: [1] })]);

describe('run -q', () => {
  it('prints the summary alone, the same summary a plain run ends with', () => {
    const impl = implementerScript();
    const plain = runCli(['run', 'demo', '--implementer', impl.argv], { cwd: runRepo(PLAN) });
    const quiet = runCli(['-q', 'run', 'demo', '--implementer', impl.argv], { cwd: runRepo(PLAN) });
    expect([plain.code, quiet.code]).toEqual([0, 0]);
    const plainLines = plain.stdout.trimEnd().split('\n');
    const quietLines = quiet.stdout.trimEnd().split('\n');
    expect(plainLines.length).toBeGreaterThan(quietLines.length);
    // No progress line (claimed, started, completed …) of the plain run appears.
    expect(quiet.stdout).not.toMatch(/claimed|started|integrated/);
    // What is left is the summary: the plain run's last lines, times, shares and hashes aside.
    const strip = (l: string) =>
      l
        .replace(/\b[0-9a-f]{12}\b/g, 'H')
        .replace(/\d+(\.\d+)?/g, 'N')
        // A wall time is printed in ms or s depending on its length.
        .replace(/\bN(ms|s)\b/g, 'Nt')
        .replace(/\s+/g, ' ');
    expect(quietLines.map(strip)).toEqual(plainLines.slice(-quietLines.length).map(strip));
    expect(quiet.stderr).toBe('');
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
