/**
 * `run --dry-run` of a plan with a step a reviewer escalated (`needs_human`, docs/run.md §6.3) shows what the
 * real run does (docs/run.md §1.10): the step and the steps behind it are left out of the schedule until
 * `tugcode state decide`, listed with why, and the warning carries the real run's NeedsHuman hint.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkSchema, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/repo.js';
import { schemaFor } from '../../src/contract/schemas/index.js';
import { gitSnapshot, planText, runJsonl, runRepo, step, tugJson } from './helpers.js';
import { implementer, reviewerScript } from './review-helpers.js';

const PLAN = '.tugtool/tugplan-demo.md';
// The reviewer's escalation says it was the reviewer's (docs/run.md §6.3), with no `ESCALATE:` before it.
const REASON = 'the reviewer asked for a human: ESCALATE in round 1';

describe('tugcode run --dry-run with a step waiting for a human', () => {
  it('schedules neither it nor the steps behind it, lists them, and warns with the real run’s hint', () => {
    const flag = join(tempDir('tugcode-flag-'), 'ok');
    const plan = planText([
      step(1, 'One'),
      step(2, 'Two', { deps: [1] }),
      step(3, 'Three', { checkpoint: `test -e ${flag}` }),
    ]);
    const root = runRepo(plan, 'demo', { '.tugtool/config.toml': '[state]\nmax_attempts = 1\n' });
    const impl = implementer();
    const rev = reviewerScript();
    rev.answer('step-1', ['ESCALATE']);
    const args = ['demo', '--workers', '1', '--implementer', impl.argv, '--reviewer', rev.argv];
    const first = runJsonl(root, args);
    expect(first.code, first.stdout + first.stderr).toBe(4);
    expect(first.events.at(-1)).toMatchObject({
      error: { code: 'NeedsHuman' },
      failed_steps: [{ step_anchor: 'step-3' }],
    });
    const hint =
      `tugcode state decide ${PLAN} step-1 --approve (or --revise "<notes>", or --reject "<reason>"); then ` +
      `tugcode run ${PLAN} --workers 1 --implementer ${impl.argv.replace(/"/g, '')} --reviewer ${rev.argv.replace(/"/g, '')}`;
    // While step-3 is failed, the hint resets it too (the decision alone would leave it failed).
    const hintWithReset = hint.replace('; then ', `; tugcode state reset ${PLAN} step-3; then `);
    const before = gitSnapshot(root);

    // step-1 waits for a human, step-2 behind it, step-3 failed: nothing to run.
    const none = runCli(['run', ...args, '--dry-run'], { cwd: root });
    expect(none.code, none.stderr).toBe(0);
    expect(none.stdout).toMatch(
      /^nothing to run until the failed step is reset and the step waiting for a human is decided\n/,
    );
    expect(none.stdout).toContain(`step-1  needs you  ${REASON}\n`);
    expect(none.stdout).toContain('step-2  waiting    waits on step-1 (waits for a human)\n');
    expect(none.stdout).not.toMatch(/wave/);
    expect(none.stderr).toBe(
      `tugcode: warning: NeedsHuman: ${PLAN} waits for a human decision on 1 step(s): step-1 (${REASON}): the ` +
        `real run does nothing and ends NeedsHuman until a human decides it (${hintWithReset})\n`,
    );

    // step-3 reset: the real run would run it, and it alone.
    expect(tugJson(root, ['state', 'reset', 'demo', 'step-3']).code).toBe(0);
    const text = runCli(['run', ...args, '--dry-run'], { cwd: root });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(
      new RegExp(
        '^1 step in 1 wave\n' +
          `step-1  needs you  ${REASON}\n` +
          'step-2  waiting    waits on step-1 \\(waits for a human\\)\n\n' +
          'wave 1: step-3\n',
      ),
    );
    expect(text.stderr).toContain('the real run runs the other steps and ends NeedsHuman until a human decides it');
    const dry = tugJson(root, ['run', ...args, '--dry-run']);
    expect(dry.code).toBe(0);
    checkSchema(schemaFor('run'), dry.json);
    expect(dry.json).toMatchObject({
      waves: [['step-3']],
      done: [],
      failed_steps: [],
      blocked_steps: [],
      needs_human: [{ step_anchor: 'step-1', review_ref: 'refs/tugplan/review/demo/step-1', reason: REASON }],
      waiting_steps: ['step-2'],
      waiting_reasons: [
        { step_anchor: 'step-2', blocked_by: ['step-1'], reason: 'waits on step-1 (waits for a human)' },
      ],
      warnings: [{ code: 'NeedsHuman', details: { waiting_steps: ['step-2'] } }],
    });
    expect(dry.json.warnings[0].message).toContain(`(${hint})`);
    expect(gitSnapshot(root)).toEqual(before);

    // What the real run does: step-3 alone, then NeedsHuman with the same hint.
    writeFileSync(flag, '');
    const real = runJsonl(root, args);
    expect(real.code, real.stdout + real.stderr).toBe(4);
    expect(real.events.filter((e) => e.type === 'claimed').map((e) => e.step_anchor)).toEqual(['step-3']);
    expect(real.events.at(-1)).toMatchObject({ error: { code: 'NeedsHuman', hint } });
    // The real run's summary lists the step behind it as the dry run does (docs/run.md §1.10).
    const waiting = { step_anchor: 'step-2', blocked_by: ['step-1'], reason: 'waits on step-1 (waits for a human)' };
    expect(real.events.at(-1)).toMatchObject({
      blocked_steps: [],
      waiting_steps: ['step-2'],
      waiting_reasons: [waiting],
    });
    expect(first.events.at(-1)).toMatchObject({ waiting_steps: ['step-2'], waiting_reasons: [waiting] });
    const realText = runCli(['run', ...args], { cwd: root });
    expect(realText.code).toBe(4);
    expect(realText.stdout).toContain(`needs you  ${REASON}\n`);
    expect(realText.stdout).not.toContain('ESCALATE:');
    expect(realText.stdout).toMatch(/step-2\s+waiting\s+waits on step-1 \(waits for a human\)\n/);
    expect(realText.stdout).toContain('0 completed, 1 waiting for you, 1 waiting');

    // Decided: the dry run schedules step-1 and step-2 again, as the real run runs them.
    expect(tugJson(root, ['state', 'decide', 'demo', 'step-1', '--approve']).code).toBe(0);
    const after = tugJson(root, ['run', ...args, '--dry-run']);
    expect(after.json).toMatchObject({
      waves: [['step-1'], ['step-2']],
      needs_human: [],
      waiting_steps: [],
      warnings: [],
    });
    // The approved step runs no implementer: the run integrates its kept commit (docs/run.md §6.3).
    const kept = tugJson(root, ['state', 'show', 'demo']).json.plans[0].steps.find((s: any) => s.anchor === 'step-1');
    expect(kept.review_commit).toMatch(/^[0-9a-f]{40}$/);
    checkSchema(schemaFor('run'), after.json);
    expect(after.json.steps[0]).toMatchObject({ implementer: null, approved_commit: kept.review_commit });
    expect(after.json.steps[1].implementer).toBe(impl.argv);
    expect(after.json.steps[1]).not.toHaveProperty('approved_commit');
    const afterText = runCli(['run', ...args, '--dry-run'], { cwd: root });
    expect(afterText.stdout).toContain(
      `  implementer:  none (approved: integrates the approved commit ${kept.review_commit.slice(0, 12)})\n`,
    );
    const last = runJsonl(root, args);
    expect(last.code, last.stdout + last.stderr).toBe(0);
    expect(last.events.filter((e) => e.type === 'claimed').map((e) => e.step_anchor)).toEqual(['step-1', 'step-2']);
  });
});
