/**
 * `tugcode run` says which substep a line is about (docs/run.md §1.3): the phases of a substep's run carry
 * its `substep_anchor` (text `w1 step-1 substep step-1-1 → implementer`), the step's own phases none, and an
 * attempt a substep failed names it too. The summary's utilisation says an idle worker's busy time as `0s`.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkSchema, runCli } from '../helpers/cli.js';
import { stepText } from '../helpers/plan.js';
import { runEventSchema } from '../../src/contract/schemas/run.js';
import { implementerScript, planText, runJsonl, runRepo } from './helpers.js';

/** Step 1 with substeps 1.1 and 1.2; 1.1's checkpoint is `checkpoint` (none when null). */
function plan(checkpoint: string | null): string {
  return planText([
    stepText({ id: '1', title: 'Parent', commit: 'feat: parent', tasks: ['write parent'] }),
    stepText({
      id: '1.1',
      level: 5,
      title: 'First',
      commit: 'feat: first',
      tasks: ['write first'],
      checkpoints: checkpoint === null ? undefined : [`\`${checkpoint}\``],
    }),
    stepText({ id: '1.2', level: 5, title: 'Second', commit: 'feat: second', tasks: ['write second'] }),
  ]);
}

const ONE_ATTEMPT = { '.tugtool/config.toml': '[state]\nmax_attempts = 1\n' };

describe('tugcode run: the lines of a substep', () => {
  it('--json: each phase of a substep names it, the step’s own phases do not; a failed attempt names its substep', () => {
    const root = runRepo(plan('test -e step-1-1.txt'));
    const impl = implementerScript();
    writeFileSync(join(impl.failDir, 'step-1-2'), '1'); // 1.2's implementer fails once
    const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv]);
    expect(r.events.at(-1), r.stderr).toMatchObject({ type: 'summary', status: 'ok', steps_completed: ['step-1'] });
    for (const e of r.events) checkSchema(runEventSchema, e);
    const phases = r.events
      .filter((e) => e.type === 'phase')
      .map((e) => `${e.step_anchor} ${e.substep_anchor ?? null} ${e.phase}`);
    // Attempt 1: 1.1 done, 1.2's implementer fails; attempt 2: 1.1, 1.2, then the step's own phases.
    expect(phases).toEqual([
      'step-1 null reset',
      'step-1 step-1-1 implementer',
      'step-1 step-1-1 checkpoints',
      'step-1 step-1-1 commit',
      'step-1 step-1-2 implementer',
      'step-1 null reset',
      'step-1 step-1-1 implementer',
      'step-1 step-1-1 checkpoints',
      'step-1 step-1-1 commit',
      'step-1 step-1-2 implementer',
      'step-1 step-1-2 commit',
      'step-1 null implementer',
      'step-1 null commit',
      'step-1 null integrate',
      'step-1 null complete',
    ]);
    const failed = r.events.filter((e) => e.type === 'attempt_failed');
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({
      step_anchor: 'step-1',
      substep_anchor: 'step-1-2',
      reason_code: 'ImplementerFailed',
    });
    expect(failed[0].reason).toMatch(/^step-1-2: /);
  });

  it('text: a substep’s phases and its checkpoint failure read apart from the step’s', () => {
    const root = runRepo(plan('false'), 'demo', ONE_ATTEMPT);
    const impl = implementerScript();
    const r = runCli(['run', 'demo', '--workers', '1', '--implementer', impl.argv], { cwd: root });
    expect(r.code, r.stdout + r.stderr).not.toBe(0);
    expect(r.stdout).toContain('w1 step-1 substep step-1-1 → implementer\n');
    expect(r.stdout).toContain('w1 step-1 substep step-1-1 → checkpoints\n');
    expect(r.stdout).toMatch(/^w1 step-1 attempt 1 failed: CheckpointFailed step-1-1: checkpoint `false` exited 1/m);
    // The step's own phase lines are unchanged: `w1 step-1 → reset`.
    expect(r.stdout).toContain('w1 step-1 → reset\n');
    expect(r.stdout).not.toMatch(/substep step-1-2/); // never reached
  });

  it('text: one step for --workers 3 starts one worker, and the summary says its busy time', () => {
    const root = runRepo(plan(null));
    const impl = implementerScript();
    const r = runCli(['run', 'demo', '--workers', '3', '--implementer', impl.argv], { cwd: root });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const table = r.stdout.slice(r.stdout.indexOf('worker  busy'));
    const rows = [...table.matchAll(/^(w\d) +(\S+) +(\d+%)$/gm)].map((m) => [m[1], m[2], m[3]]);
    // One step keeps one worker busy: the others never start (docs/run.md §1 item 3). An idle worker's `0s`
    // is checked in tests/run/render.test.ts.
    expect(
      rows.map((x) => x[0]),
      table,
    ).toEqual(['w1']);
    expect(r.stdout).toContain('1 worker (3 requested; its dependencies let at most 1 step run at once)');
    // The busy column of every worker: the table's other durations (`wall 970ms`) may well end in 0ms.
    expect(rows.map((x) => x[1])).not.toContain('0ms');
  });
});
