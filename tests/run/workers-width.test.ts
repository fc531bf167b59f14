/**
 * The run starts no worker the plan can never use (docs/run.md §1 item 3): no more workers than the steps
 * still to run can keep busy at once, at least one, and says so in its first line and `run_started`; its
 * `--dry-run` agrees.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { git } from '../helpers/repo.js';
import { implementerScript, planText, runJsonl, runRepo, step } from './helpers.js';

const CHAIN = planText([step(1, 'One'), step(2, 'Two', { deps: [1] }), step(3, 'Three', { deps: [2] })]);

/** The worktrees git lists beside the main checkout. */
function trees(root: string): string[] {
  return git(root, 'worktree', 'list', '--porcelain')
    .split('\n')
    .filter((l) => l.startsWith('worktree '))
    .slice(1)
    .map((l) => l.slice('worktree '.length));
}

const started = (events: any[]) => events.find((e) => e.type === 'run_started');
const workersOf = (events: any[]) => [...new Set(events.filter((e) => e.worker).map((e) => e.worker))].sort();

describe('tugcode run starts no more workers than the plan can keep busy', () => {
  it('runs a chain with one worker and one worktree, and says so in text and JSON', () => {
    const root = runRepo(CHAIN);
    const impl = implementerScript();
    const dry = runCli(['run', 'demo', '--workers', '3', '--dry-run', '--json'], { cwd: root });
    expect(JSON.parse(dry.stdout)).toMatchObject({ workers: 1, workers_requested: 3 });
    const text = runCli(['run', 'demo', '--workers', '3', '--dry-run'], { cwd: root });
    expect(text.stdout).toContain(
      'the run starts 1 worker (3 requested; its dependencies let at most 1 step run at once)',
    );

    const r = runJsonl(root, ['demo', '--workers', '3', '--keep-worktrees', '--implementer', impl.argv]);
    expect(r.code, r.stderr).toBe(0);
    expect(started(r.events)).toMatchObject({ workers: 1, workers_requested: 3 });
    expect(workersOf(r.events)).toEqual(['w1']);
    expect(r.events.at(-1).workers.map((w: any) => w.worker)).toEqual(['w1']);
    expect(r.events.at(-1).steps_completed).toEqual(['step-1', 'step-2', 'step-3']);
    // One worktree made, kept by --keep-worktrees: no w2 or w3 was ever made.
    expect(trees(root)).toEqual([join(root, '.tugtree', 'tugplan__demo--w1')]);
    expect(git(root, 'branch', '--list', 'tugplan/demo--w*').split('\n').filter(Boolean)).toHaveLength(1);

    // Text: the first line says how many start, how many were asked for, and why.
    const fresh = runRepo(CHAIN);
    const t = runCli(['run', 'demo', '--workers', '3', '--implementer', impl.argv], { cwd: fresh });
    expect(t.code, t.stderr).toBe(0);
    expect(t.stdout.split('\n')[0]).toBe(
      'run .tugtool/tugplan-demo.md: 1 worker (3 requested; its dependencies let at most 1 step run at once), ' +
        'integrating into tugplan/demo (base main)',
    );
  });

  it('starts two workers of four for two independent chains, and no workers_requested when all start', () => {
    const plan = planText([step(1, 'A1'), step(2, 'A2', { deps: [1] }), step(3, 'B1'), step(4, 'B2', { deps: [3] })]);
    const root = runRepo(plan);
    const impl = implementerScript();
    const r = runJsonl(root, ['demo', '--workers', '4', '--keep-worktrees', '--implementer', impl.argv]);
    expect(r.code, r.stderr).toBe(0);
    expect(started(r.events)).toMatchObject({ workers: 2, workers_requested: 4 });
    expect(r.events.at(-1).workers.map((w: any) => w.worker)).toEqual(['w1', 'w2']);
    expect(trees(root)).toHaveLength(2);
    // Asking for no more than the plan can use starts them all, and the event says nothing more.
    const two = runRepo(plan);
    const r2 = runJsonl(two, ['demo', '--workers', '2', '--implementer', impl.argv]);
    expect(r2.code, r2.stderr).toBe(0);
    expect(started(r2.events).workers).toBe(2);
    expect(started(r2.events)).not.toHaveProperty('workers_requested');
    const dry = JSON.parse(
      runCli(['run', 'demo', '--workers', '2', '--dry-run', '--json'], { cwd: runRepo(plan) }).stdout,
    );
    expect(dry.workers).toBe(2);
    expect(dry).not.toHaveProperty('workers_requested');
  });

  it('narrows to the steps still to run, and removes an earlier run’s extra worker tree', () => {
    // step-1 and step-2 can run together; step-3 waits on both, step-4 on step-3.
    const plan = planText([
      step(1, 'One'),
      step(2, 'Two'),
      step(3, 'Three', { deps: [1, 2] }),
      step(4, 'Four', { deps: [3] }),
    ]);
    const root = runRepo(plan, 'demo', { '.tugtool/config.toml': '[state]\nmax_attempts = 1\n' });
    const impl = implementerScript();
    writeFileSync(join(impl.failDir, 'step-3'), '1');
    const first = runJsonl(root, ['demo', '--workers', '2', '--implementer', impl.argv]);
    expect(first.code, first.stdout + first.stderr).toBe(4);
    expect(started(first.events).workers).toBe(2);
    expect(first.events.at(-1).steps_completed.sort()).toEqual(['step-1', 'step-2']);
    // The failed run left both worker trees.
    expect(trees(root)).toHaveLength(2);
    expect(runCli(['state', 'reset', 'demo', 'step-3'], { cwd: root }).code).toBe(0);

    // What is left is a chain: the dry run and the run agree on one worker.
    const dry = JSON.parse(runCli(['run', 'demo', '--workers', '2', '--dry-run', '--json'], { cwd: root }).stdout);
    expect(dry).toMatchObject({ workers: 1, workers_requested: 2 });
    const rest = runJsonl(root, ['demo', '--workers', '2', '--implementer', impl.argv]);
    expect(rest.code, rest.stderr).toBe(0);
    expect(started(rest.events)).toMatchObject({ workers: 1, workers_requested: 2 });
    expect(workersOf(rest.events)).toEqual(['w1']);
    expect(rest.events.at(-1).steps_completed).toEqual(['step-3', 'step-4']);
    // w2, made by the earlier run and not started by this one, is still cleaned up.
    expect(trees(root)).toEqual([]);
  });
});
