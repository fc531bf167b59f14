/**
 * The plan on the base branch during a run (docs/run.md §1 item 4.1): a prose edit is harmless; a changed
 * structure stops the run's claims with PlanDrift (exit 4); steps already running finish and integrate.
 * Running again after an edit on the base takes the new plan over (§1.1 items 1–2): no PlanDrift loop; one
 * that conflicts with a step's commit is MergeConflict, changing nothing.
 */
import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runJson } from '../helpers/cli.js';
import { git } from '../helpers/repo.js';
import {
  holdingImplementer,
  implementerScript,
  planText,
  runJsonl,
  runRepo,
  startRun,
  step,
  stepCommits,
  waitUntil,
} from './helpers.js';

const PLAN = planText([step(1, 'One'), step(2, 'Two', { deps: [1] })]);
const PLAN3 = planText([step(1, 'One'), step(2, 'Two', { deps: [1] }), step(3, 'Three', { deps: [2] })]);
/** Two steps waiting on step-1: the run starts two workers, one of which waits while step-1 runs. */
const FAN = planText([step(1, 'One'), step(2, 'Two', { deps: [1] }), step(3, 'Three', { deps: [1] })]);
const FAN4 = planText([
  step(1, 'One'),
  step(2, 'Two', { deps: [1] }),
  step(3, 'Three', { deps: [1] }),
  step(4, 'Four', { deps: [1] }),
]);
const PLAN_PATH = '.tugtool/tugplan-demo.md';

/** Commit `text` as the plan on main, as a user editing it would. */
function editPlan(root: string, text: string, message: string): void {
  writeFileSync(join(root, PLAN_PATH), text);
  git(root, 'commit', '-qam', message);
}

const claimedSteps = (events: any[]) => events.filter((e) => e.type === 'claimed').map((e) => e.step_anchor);

describe('tugcode run and the plan on the base branch', () => {
  it('stops with PlanDrift when the structure changes during the run, and claims nothing more', async () => {
    const root = runRepo(PLAN);
    const impl = holdingImplementer();
    writeFileSync(join(impl.hold, 'step-1-a1'), '');
    const run = startRun(root, ['demo', '--workers', '1', '--implementer', impl.argv]);
    await waitUntil('step-1 to start', () => existsSync(impl.started) && readdirSync(impl.started).length > 0, 30_000);
    // A third step lands on main while step-1 runs.
    editPlan(root, PLAN3, 'plan: a third step');
    rmSync(join(impl.hold, 'step-1-a1'));
    const r = await run.done;
    const summary = r.events.at(-1);
    expect(r.code, r.stderr).toBe(4);
    expect(summary).toMatchObject({ type: 'summary', status: 'error', error: { code: 'PlanDrift' } });
    expect(r.events.filter((e) => e.type === 'claimed').map((e) => e.step_anchor)).toEqual(['step-1']);
    // The hint runs the plan again the same way: with this run's flags, its implementer among them.
    const hint = r.stderr.split('\n').find((l) => l.startsWith('hint: '));
    expect(hint).toContain(`hint: tugcode run ${PLAN_PATH} `);
    expect(hint).toContain('--workers 1');
    expect(hint).toContain('--implementer ');
    expect(hint).toContain('(again: it takes the new plan over)');
    expect(summary.error.details.run_flags).toContain('--implementer');
    // What the hint says: running again takes the new plan over and finishes it.
    const again = runJsonl(root, ['demo', '--workers', '1', '--implementer', implementerScript().argv]);
    expect(again.code, again.stderr).toBe(0);
    expect(claimedSteps(again.events)).toEqual(['step-2', 'step-3']);
    expect(stepCommits(root, 'tugplan/demo')).toEqual(['step-1', 'step-2', 'step-3']);
  });

  it('lets the steps in flight finish when another worker sees the drift: only new claims stop', async () => {
    const root = runRepo(FAN);
    const impl = holdingImplementer();
    writeFileSync(join(impl.hold, 'step-1-a1'), '');
    const run = startRun(root, ['demo', '--workers', '2', '--implementer', impl.argv]);
    await waitUntil('step-1 to start', () => existsSync(impl.started) && readdirSync(impl.started).length > 0, 30_000);
    editPlan(root, FAN4, 'plan: a fourth step');
    // w2, waiting for step-1, sees the drift first and stops; w1's step-1 is still running.
    await waitUntil('w2 to stop', () => run.events().some((e) => e.type === 'worker_stopped' && e.worker === 'w2'));
    rmSync(join(impl.hold, 'step-1-a1'));
    const r = await run.done;
    const summary = r.events.at(-1);
    expect(r.code, r.stderr).toBe(4);
    expect(summary).toMatchObject({ type: 'summary', status: 'error', error: { code: 'PlanDrift' } });
    expect(summary.steps_completed).toEqual(['step-1']);
    expect(summary.commits).toHaveLength(1);
    expect(git(root, 'log', '-1', '--format=%(trailers:key=Tug-Step,valueonly)', 'tugplan/demo').trim()).toBe('step-1');
    const stopped = r.events.filter((e) => e.type === 'worker_stopped');
    expect(stopped.map((e) => [e.worker, e.reason]).sort()).toEqual([
      ['w1', 'done'],
      ['w2', 'done'],
    ]);
    expect(r.events.filter((e) => e.type === 'claimed').map((e) => e.step_anchor)).toEqual(['step-1']);
  });

  it('runs a step added on the base after the plan was done: the base is merged into tugplan/demo, exit 0', async () => {
    const root = runRepo(PLAN);
    const impl = implementerScript();
    const args = ['demo', '--workers', '2', '--implementer', impl.argv];
    expect(runJsonl(root, args).code).toBe(0);
    editPlan(root, PLAN3, 'plan: a third step');
    const r = runJsonl(root, args);
    expect(r.code, r.stderr).toBe(0);
    expect(r.events.filter((e) => e.type === 'warning').map((e) => e.code)).toEqual(['PlanReinitialized']);
    expect(claimedSteps(r.events)).toEqual(['step-3']);
    expect(r.events.at(-1)).toMatchObject({ status: 'ok', steps_completed: ['step-3'] });
    // No worker stopped as if signalled (one started: only step-3 is left, docs/run.md §1 item 3); the
    // integration branch holds main's plan and the new step.
    expect(r.events.filter((e) => e.type === 'worker_stopped').map((e) => e.reason)).toEqual(['done']);
    expect(git(root, 'show', `tugplan/demo:${PLAN_PATH}`)).toBe(PLAN3);
    expect(git(root, 'merge-base', '--is-ancestor', 'main', 'tugplan/demo')).toBe('');
    expect(stepCommits(root, 'tugplan/demo')).toEqual(['step-1', 'step-2', 'step-3']);
    // A third run has nothing left to do.
    const third = runJsonl(root, args);
    expect(third.code, third.stderr).toBe(0);
    expect(claimedSteps(third.events)).toEqual([]);
  });

  it('a plan change on the base that conflicts with a step is MergeConflict (exit 4): tugplan/demo unchanged', () => {
    const root = runRepo(PLAN);
    const args = ['demo', '--workers', '1', '--implementer', implementerScript().argv];
    expect(runJsonl(root, args).code).toBe(0);
    // main changes the file step-1 wrote on tugplan/demo, with the plan edit.
    writeFileSync(join(root, 'step-1.txt'), 'from main\n');
    writeFileSync(join(root, PLAN_PATH), PLAN3);
    git(root, 'add', '-A');
    git(root, 'commit', '-qm', 'plan: a third step, and step-1.txt');
    const before = git(root, 'rev-parse', 'tugplan/demo').trim();
    const r = runJsonl(root, args);
    expect(r.code, r.stderr).toBe(4);
    expect(r.events.at(-1).error).toMatchObject({
      code: 'MergeConflict',
      details: { branch: 'main', into: 'tugplan/demo', files: ['step-1.txt'] },
    });
    expect(r.stderr).toContain('hint: git switch tugplan/demo && git merge main, then run again');
    expect(claimedSteps(r.events)).toEqual([]);
    expect(git(root, 'rev-parse', 'tugplan/demo').trim()).toBe(before);
  });

  it('an item added to a done step on the base: the run exits 0 and state show lists the item deferred', async () => {
    const root = runRepo(PLAN);
    const impl = implementerScript();
    const args = ['demo', '--workers', '1', '--implementer', impl.argv];
    expect(runJsonl(root, args).code).toBe(0);
    const withTest = PLAN.replace(
      '**Tasks:**\n- [ ] write two',
      '**Tests:**\n- [ ] two is tested\n\n**Tasks:**\n- [ ] write two',
    );
    expect(withTest).not.toBe(PLAN);
    editPlan(root, withTest, 'plan: a test for step 2');
    const r = runJsonl(root, args);
    expect(r.code, r.stderr).toBe(0);
    expect(claimedSteps(r.events)).toEqual([]);
    const show = runJson('state show', ['state', 'show', 'demo'], { cwd: root });
    const two = show.json.plans[0].steps.find((s: any) => s.anchor === 'step-2');
    expect(two).toMatchObject({ status: 'completed', counts: { tests: { open: 0, completed: 0, deferred: 1 } } });
    expect(git(root, 'show', `tugplan/demo:${PLAN_PATH}`)).toBe(withTest);
  });
});
