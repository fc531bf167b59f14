/**
 * The final summary of `tugcode run` as a user reads it (docs/run.md §1 item 6), text mode on a real
 * repository: its table lists the steps in plan order.
 */
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { implementerScript, planText, runRepo, step } from './helpers.js';

/** The summary table's step rows: `[step, result, detail]`. */
function tableRows(stdout: string): string[][] {
  return stdout
    .split('\n')
    .filter((l) => /^step-[0-9-]+ {2,}\S/.test(l))
    .map((l) => l.split(/ {2,}/).map((c) => c.trim()));
}

/** The anchors of the `<worker> <step> completed` event lines, in the order they came. */
function completedLines(stdout: string): string[] {
  return [...stdout.matchAll(/^w\d+ (step-[0-9-]+) completed/gm)].map((m) => m[1]!);
}

describe('the summary of tugcode run', () => {
  it('lists the steps in plan order, not in the order they completed', () => {
    // step-1 waits on step-2, written after it: one worker completes step-2 first.
    const root = runRepo(planText([step(1, 'Later', { deps: [2] }), step(2, 'First')]));
    const impl = implementerScript();
    const r = runCli(['run', 'demo', '--workers', '1', '--implementer', impl.argv], { cwd: root });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(completedLines(r.stdout)).toEqual(['step-2', 'step-1']);
    expect(tableRows(r.stdout)).toEqual([
      ['step-1', 'completed'],
      ['step-2', 'completed'],
    ]);
  });
});
