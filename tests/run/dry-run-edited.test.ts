/**
 * `run --dry-run` after the plan was edited on the base (docs/run.md §1.10): when the committed structure
 * differs from the one the state was initialised from, the real run re-initialises the state (failed steps
 * pending again, completed ones kept) and the dry run schedules that, warning PlanReinitialized; a prose-only
 * edit changes nothing of the state, and the dry run still holds the failed step back.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkSchema, runCli } from '../helpers/cli.js';
import { git } from '../helpers/repo.js';
import { schemaFor } from '../../src/contract/schemas/index.js';
import { gitSnapshot, implementerScript, planText, runJsonl, runRepo, step, tugJson } from './helpers.js';

const PLAN_PATH = '.tugtool/tugplan-fail.md';
const failing = (check: string, more: string[] = []) =>
  planText([
    step(1, 'One'),
    step(2, 'Two', { deps: [1], checkpoint: check }),
    step(3, 'Three', { deps: [2] }),
    ...more,
  ]);

function editPlan(root: string, text: string, message: string): void {
  writeFileSync(join(root, PLAN_PATH), text);
  git(root, 'commit', '-qam', message);
}

describe('tugcode run --dry-run after the plan was edited', () => {
  it('a changed structure: schedules what the re-initialised state runs, with a warning', () => {
    const root = runRepo(failing('false'), 'fail');
    const impl = implementerScript();
    const args = ['fail', '--implementer', impl.argv, '--max-attempts', '1'];
    expect(runJsonl(root, args).code).toBe(4);
    const firstLog = readFileSync(join(root, '.tugtool/logs/fail/step-2-attempt1.log'), 'utf8');

    // Prose only (the checkpoint's command, not its count): the state keeps step-2 failed, and so does the preview.
    editPlan(root, failing('true'), 'plan: fix the checkpoint');
    const prose = tugJson(root, ['run', ...args, '--dry-run']);
    expect(prose.code).toBe(0);
    expect(prose.json).toMatchObject({
      steps: [],
      failed_steps: [{ step_anchor: 'step-2' }],
      blocked_steps: ['step-3'],
    });
    expect(prose.json.warnings.map((w: any) => w.code)).toEqual(['PlanIncomplete']);

    // A step added: the structure changed, the real run re-initialises and runs step-2 again.
    editPlan(root, failing('true', [step(4, 'Four')]), 'plan: a fourth step');
    const before = gitSnapshot(root);
    const dry = tugJson(root, ['run', ...args, '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    checkSchema(schemaFor('run'), dry.json);
    expect(dry.json).toMatchObject({
      waves: [['step-2', 'step-4'], ['step-3']],
      done: ['step-1'],
      failed_steps: [],
      blocked_steps: [],
      warnings: [{ code: 'PlanReinitialized', details: { plan_path: PLAN_PATH } }],
    });
    expect(dry.json.warnings).toHaveLength(1);
    const text = runCli(['run', ...args, '--dry-run'], { cwd: root });
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(
      /^3 steps in 2 waves\nalready completed: step-1\n\nwave 1: step-2, step-4\nwave 2: step-3\n/,
    );
    expect(text.stderr).toBe(
      `tugcode: warning: PlanReinitialized: ${PLAN_PATH}: the plan's structure changed since state init; the real ` +
        'run re-initialises the state from the edited plan as state init --force would (completed steps kept, and ' +
        'the decisions of people on steps whose work is unchanged; the others pending again), and this schedule ' +
        'is of that\n',
    );
    expect(gitSnapshot(root)).toEqual(before);
    // The dry run read the state, it did not re-initialise it.
    const show = tugJson(root, ['state', 'show', 'fail']);
    expect(show.json.plans[0].steps.find((s: any) => s.anchor === 'step-2')).toMatchObject({ status: 'failed' });

    // What the real run does: the same steps, the same warning, the plan done.
    const real = runJsonl(root, args);
    expect(real.code, real.stdout + real.stderr).toBe(0);
    expect(real.events.filter((e) => e.type === 'warning').map((e) => e.code)).toEqual(['PlanReinitialized']);
    expect(
      real.events
        .filter((e) => e.type === 'claimed')
        .map((e) => e.step_anchor)
        .sort(),
    ).toEqual(['step-2', 'step-3', 'step-4']);
    // The retry is attempt 2, not a second attempt 1: its log is its own, the failed attempt's log unchanged.
    expect(real.events.find((e) => e.type === 'claimed' && e.step_anchor === 'step-2')).toMatchObject({ attempt: 2 });
    const logs = join(root, '.tugtool/logs/fail');
    expect(readFileSync(join(logs, 'step-2-attempt1.log'), 'utf8')).toBe(firstLog);
    expect(readFileSync(join(logs, 'step-2-attempt2.log'), 'utf8')).toContain('done step-2');
  });
});
