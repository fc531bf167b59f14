/**
 * The plan on the base branch during a run (docs/run.md §1 item 4.1): a prose edit is harmless; a changed
 * structure stops the run's claims with PlanDrift (exit 4); steps already running finish and integrate.
 */
import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git } from '../helpers/repo.js';
import { holdingImplementer, planText, runRepo, startRun, step, waitUntil } from './helpers.js';

const PLAN = planText([step(1, 'One'), step(2, 'Two', { deps: [1] })]);

describe('tugcode run and the plan on the base branch', () => {
  it('stops with PlanDrift when the structure changes during the run, and claims nothing more', async () => {
    const root = runRepo(PLAN);
    const impl = holdingImplementer();
    writeFileSync(join(impl.hold, 'step-1-a1'), '');
    const run = startRun(root, ['demo', '--workers', '1', '--implementer', impl.argv]);
    await waitUntil('step-1 to start', () => existsSync(impl.started) && readdirSync(impl.started).length > 0, 30_000);
    // A third step lands on main while step-1 runs.
    writeFileSync(
      join(root, '.tugtool/tugplan-demo.md'),
      planText([step(1, 'One'), step(2, 'Two', { deps: [1] }), step(3, 'Three', { deps: [2] })]),
    );
    git(root, 'commit', '-qam', 'plan: a third step');
    rmSync(join(impl.hold, 'step-1-a1'));
    const r = await run.done;
    const summary = r.events.at(-1);
    expect(r.code, r.stderr).toBe(4);
    expect(summary).toMatchObject({ type: 'summary', status: 'error', error: { code: 'PlanDrift' } });
    expect(r.events.filter((e) => e.type === 'claimed').map((e) => e.step_anchor)).toEqual(['step-1']);
  });

  it('lets the steps in flight finish when another worker sees the drift: only new claims stop', async () => {
    const root = runRepo(PLAN);
    const impl = holdingImplementer();
    writeFileSync(join(impl.hold, 'step-1-a1'), '');
    const run = startRun(root, ['demo', '--workers', '2', '--implementer', impl.argv]);
    await waitUntil('step-1 to start', () => existsSync(impl.started) && readdirSync(impl.started).length > 0, 30_000);
    writeFileSync(
      join(root, '.tugtool/tugplan-demo.md'),
      planText([step(1, 'One'), step(2, 'Two', { deps: [1] }), step(3, 'Three', { deps: [2] })]),
    );
    git(root, 'commit', '-qam', 'plan: a third step');
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
});
