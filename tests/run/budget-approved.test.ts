/**
 * A spent budget and a step a human approved (docs/run.md §7.2, §6.3): integrating the kept commit costs
 * nothing (no implementer, no reviewer), so the run still integrates it while it claims no other step; the
 * dry run says the same. A conflict on the way, which the resolver (an agent, which costs) would merge,
 * hands the step back to a human with its work kept instead. Real git, real state, the built CLI.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkSchema, runCli } from '../helpers/cli.js';
import { stepText } from '../helpers/plan.js';
import { git } from '../helpers/repo.js';
import { schemaFor } from '../../src/contract/schemas/index.js';
import { planText, runJsonl, runRepo, step, stepCommits, tugJson } from './helpers.js';
import { implementer, reviewerScript } from './review-helpers.js';

/** A step of its own, not after step-1. */
const TWO = stepText({ id: '2', title: 'Two', deps: [], commit: 'feat: two', tasks: ['write two'] });

/** step-1 spends the budget (1,100 tokens of 1,000), its reviewer's REVISE hands it to a human; approved. */
function approvedAfterSpentBudget() {
  const root = runRepo(planText([step(1, 'One'), TWO]), 'demo');
  const impl = implementer({ billed: true });
  const rev = reviewerScript();
  rev.answer('step-1', ['REVISE']);
  const args = [
    'demo',
    '--workers',
    '1',
    '--implementer',
    impl.argv,
    '--reviewer',
    rev.argv,
    '--budget-tokens',
    '1000',
  ];
  const first = runJsonl(root, args);
  expect(first.code, first.stdout + first.stderr).toBe(4);
  expect(first.events.at(-1)).toMatchObject({
    error: { code: 'BudgetExhausted' },
    needs_human: [{ step_anchor: 'step-1' }],
    not_run_steps: ['step-2'],
  });
  expect(tugJson(root, ['state', 'decide', 'demo', 'step-1', '--approve']).code).toBe(0);
  return { root, impl, rev, args };
}

describe('a spent budget and a step a human approved', () => {
  it('the run integrates the approved step (no agent runs) and claims no other; the dry run agrees', () => {
    const { root, impl, rev, args } = approvedAfterSpentBudget();

    const dry = tugJson(root, ['run', ...args, '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    checkSchema(schemaFor('run'), dry.json);
    expect(dry.json).toMatchObject({ waves: [['step-1']], warnings: [{ code: 'BudgetExhausted' }] });
    expect(dry.json.steps).toEqual([expect.objectContaining({ step_anchor: 'step-1', implementer: null })]);
    expect(dry.json.warnings[0].message).toContain('the real run integrates only the step a human approved (step-1)');
    const dryText = runCli(['run', ...args, '--dry-run'], { cwd: root });
    expect(dryText.stdout).toMatch(/^1 step in 1 wave\n/);
    expect(dryText.stdout).toContain('wave 1: step-1\n');

    const r = runJsonl(root, args);
    expect(r.code, r.stdout + r.stderr).toBe(4);
    expect(r.events.filter((e) => e.type === 'claimed').map((e) => e.step_anchor)).toEqual(['step-1']);
    const last = r.events.at(-1);
    expect(last).toMatchObject({
      error: { code: 'BudgetExhausted' },
      steps_completed: ['step-1'],
      human_approved: ['step-1'],
      not_run_steps: ['step-2'],
    });
    expect(last.error.message).toMatch(/; no step to implement was claimed; the approved step-1 integrated$/);
    expect(last.error.details.approved_steps).toEqual(['step-1']);
    expect(impl.runs('step-1')).toEqual(['attempt 1']);
    expect(impl.runs('step-2')).toEqual([]);
    // The reviewer ran once, in the first run: an approved step is not reviewed again.
    expect(rev.inputs('step-1')).toHaveLength(1);
    expect(stepCommits(root, 'tugplan/demo')).toEqual(['step-1']);
  });

  it('a conflict the resolver would merge sends the approved step back to a human, its work kept, no resolver run', () => {
    const { root, impl, args } = approvedAfterSpentBudget();
    // Someone changed step-1's file on the integration branch meanwhile: the kept commit conflicts.
    const wt = mkdtempSync(join(tmpdir(), 'tugcode-edit-'));
    rmSync(wt, { recursive: true });
    git(root, 'worktree', 'add', '--quiet', wt, 'tugplan/demo');
    writeFileSync(join(wt, 'step-1.txt'), 'by hand\n');
    git(wt, 'add', 'step-1.txt');
    git(wt, 'commit', '--quiet', '-m', 'by hand');
    git(root, 'worktree', 'remove', '--force', wt);
    const kept = tugJson(root, ['state', 'show', 'demo']).json.plans[0].steps.find((s: any) => s.anchor === 'step-1');

    const r = runJsonl(root, args);
    expect(r.code, r.stdout + r.stderr).toBe(4);
    expect(r.events.filter((e) => e.type === 'conflict')).toHaveLength(1);
    expect(r.events.filter((e) => e.type === 'phase' && e.phase === 'resolve')).toEqual([]);
    // The implementer (the resolver here) never ran again.
    expect(impl.runs('step-1')).toEqual(['attempt 1']);
    const last = r.events.at(-1);
    expect(last).toMatchObject({ error: { code: 'BudgetExhausted' }, steps_completed: [] });
    expect(last.needs_human).toEqual([
      {
        step_anchor: 'step-1',
        review_ref: 'refs/tugplan/review/demo/step-1',
        reason:
          'approved, but integrating it conflicts in step-1.txt and the budget is spent, so no resolver runs: ' +
          'approve it again once the budget is raised',
      },
    ]);
    const now = tugJson(root, ['state', 'show', 'demo']).json.plans[0].steps.find((s: any) => s.anchor === 'step-1');
    expect(now).toMatchObject({ status: 'needs_human', review_commit: kept.review_commit });
    expect(git(root, 'rev-parse', 'refs/tugplan/review/demo/step-1').trim()).toBe(kept.review_commit);
    expect(stepCommits(root, 'tugplan/demo')).toEqual([]);
  });
});
