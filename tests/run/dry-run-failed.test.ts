/**
 * `run --dry-run` of a plan with a step failed at its attempt cap shows what the real run does (docs/run.md
 * §1.10): the failed step and the steps behind it are left out of the schedule, listed with why, and the
 * warning carries the hint the real run's PlanIncomplete gives.
 */
import { describe, expect, it } from 'vitest';
import { checkSchema, runCli } from '../helpers/cli.js';
import { schemaFor } from '../../src/contract/schemas/index.js';
import { gitSnapshot, implementerScript, planText, runJsonl, runRepo, step, tugJson } from './helpers.js';

const PLAN = planText([
  step(1, 'One'),
  step(2, 'Two', { deps: [1], checkpoint: 'false' }),
  step(3, 'Three', { deps: [2] }),
]);
const HINT = 'tugcode state reset .tugtool/tugplan-fail.md step-2 && tugcode run .tugtool/tugplan-fail.md';
const REASON = 'CheckpointFailed: step-2: checkpoint `false` exited 1 (no output)';

describe('tugcode run --dry-run after a step failed at its cap', () => {
  it('schedules nothing the real run would not run: the failed step, the blocked one, and the real hint', () => {
    const root = runRepo(PLAN, 'fail');
    const impl = implementerScript();
    const first = runCli(['run', 'fail', '--implementer', impl.argv, '--max-attempts', '2'], { cwd: root });
    expect(first.code, first.stderr).toBe(4);
    const before = gitSnapshot(root);

    const text = runCli(['run', 'fail', '--dry-run'], { cwd: root });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toBe(
      'nothing to run until the failed step is reset\n' +
        'already completed: step-1\n' +
        `step-2  failed   ${REASON}\n` +
        'step-3  blocked  waits on step-2 (failed)\n',
    );
    expect(text.stdout).not.toMatch(/wave/);
    expect(text.stderr).toBe(
      'tugcode: warning: PlanIncomplete: .tugtool/tugplan-fail.md is not complete: 1 failed, 1 blocked: the real ' +
        `run does nothing and ends PlanIncomplete until the failed step is reset (${HINT})\n`,
    );

    const dry = tugJson(root, ['run', 'fail', '--dry-run']);
    expect(dry.code).toBe(0);
    checkSchema(schemaFor('run'), dry.json);
    expect(dry.json).toMatchObject({
      waves: [],
      steps: [],
      critical_path: [],
      done: ['step-1'],
      failed_steps: [{ step_anchor: 'step-2', reason: REASON }],
      blocked_steps: ['step-3'],
      blocked_reasons: [{ step_anchor: 'step-3', blocked_by: ['step-2'], reason: 'waits on step-2 (failed)' }],
      warnings: [{ code: 'PlanIncomplete', details: { blocked_steps: ['step-3'] } }],
    });
    expect(dry.json.warnings[0].message).toContain(`(${HINT})`);
    expect(gitSnapshot(root)).toEqual(before);

    // What the real run does: nothing, PlanIncomplete with the same hint.
    const real = runJsonl(root, ['fail']);
    expect(real.code).toBe(4);
    expect(real.events.filter((e) => e.type === 'claimed')).toEqual([]);
    expect(real.events.at(-1)).toMatchObject({ error: { code: 'PlanIncomplete', hint: HINT } });
  });

  it('still schedules the steps that do not wait on the failed one, and says the run ends PlanIncomplete', () => {
    const plan = planText([step(1, 'One'), step(2, 'Two', { deps: [1] }), step(3, 'Three')]);
    const root = runRepo(plan, 'fail', { '.tugtool/config.toml': '[state]\nmax_attempts = 1\n' });
    // step-1 failed at its cap by hand (a claim, then a failure), step-3 never started.
    expect(tugJson(root, ['state', 'init', 'fail']).code).toBe(0);
    expect(tugJson(root, ['state', 'claim', 'fail', '--worktree', root]).json).toMatchObject({ step_anchor: 'step-1' });
    const fail = tugJson(root, [
      'state',
      'fail',
      'fail',
      'step-1',
      '--worktree',
      root,
      '--reason',
      'CheckpointFailed: it broke',
    ]);
    expect(fail.code, fail.stderr).toBe(0);
    const dry = tugJson(root, ['run', 'fail', '--dry-run', '--implementer', 'true']);
    checkSchema(schemaFor('run'), dry.json);
    expect(dry.json).toMatchObject({
      waves: [['step-3']],
      done: [],
      failed_steps: [{ step_anchor: 'step-1', reason: 'CheckpointFailed: it broke' }],
      blocked_steps: ['step-2'],
    });
    expect(dry.json.warnings[0].message).toContain('the real run runs the other steps and ends PlanIncomplete');
    const text = runCli(['run', 'fail', '--dry-run', '--implementer', 'true'], { cwd: root });
    expect(text.stdout).toContain(
      '1 step in 1 wave\n' +
        'step-1  failed   CheckpointFailed: it broke\nstep-2  blocked  waits on step-1 (failed)\n\nwave 1: step-3\n',
    );
    // The real run does step-3 alone.
    const impl = implementerScript();
    const real = runJsonl(root, ['fail', '--implementer', impl.argv]);
    expect(real.code).toBe(4);
    expect(real.events.filter((e) => e.type === 'claimed').map((e) => e.step_anchor)).toEqual(['step-3']);
  });
});
