/**
 * `tugcode run` end to end (docs/run.md §1): real repositories, the built CLI, a scripted implementer.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git } from '../helpers/repo.js';
import { implementerScript, planText, runJsonl, runRepo, seenBy, step, stepCommits } from './helpers.js';

const DIAMOND = planText([
  step(1, 'Base', { checkpoint: 'test -f step-1.txt' }),
  step(2, 'Left', { deps: [1], checkpoint: 'test -f step-1.txt && test -f step-2.txt' }),
  step(3, 'Right', { deps: [1], checkpoint: 'test -f step-3.txt' }),
  step(4, 'Join', { deps: [2, 3], checkpoint: 'test -f step-2.txt && test -f step-3.txt && test -f step-4.txt' }),
]);

describe('tugcode run', () => {
  it('drains a diamond plan with --workers 3: each step once, one commit per step, dependencies first', () => {
    const root = runRepo(DIAMOND);
    const impl = implementerScript();
    const r = runJsonl(root, ['demo', '--workers', '3', '--implementer', impl.argv]);
    const summary = r.events.at(-1);
    expect(summary, r.stderr).toMatchObject({ type: 'summary', status: 'ok' });
    expect(r.code).toBe(0);
    expect([...summary.steps_completed].sort()).toEqual(['step-1', 'step-2', 'step-3', 'step-4']);
    // The diamond runs at most 2 steps at a time: 2 of the 3 workers start (docs/run.md §1 item 3).
    expect(summary.workers).toHaveLength(2);
    expect(r.events[0]).toMatchObject({
      type: 'run_started',
      integration_branch: 'tugplan/demo',
      workers: 2,
      workers_requested: 3,
    });
    // One commit per step on the integration branch, each with its trailers.
    const commits = stepCommits(root, 'tugplan/demo');
    expect([...commits].sort()).toEqual(['step-1', 'step-2', 'step-3', 'step-4']);
    expect(commits[0]).toBe('step-1');
    expect(commits[3]).toBe('step-4');
    expect(git(root, 'log', '-1', '--format=%(trailers:key=Tug-Plan,valueonly)', 'tugplan/demo').trim()).toBe(
      '.tugtool/tugplan-demo.md',
    );
    // What each implementer saw: its dependencies' files were already there.
    const seen = seenBy(impl.seen);
    expect(seen['step-2']![0]!.files).toContain('step-1.txt');
    expect(seen['step-3']![0]!.files).toContain('step-1.txt');
    expect(seen['step-4']![0]!.files).toEqual(expect.arrayContaining(['step-1.txt', 'step-2.txt', 'step-3.txt']));
    for (const s of ['step-1', 'step-2', 'step-3', 'step-4']) expect(seen[s]).toHaveLength(1);
    // state agrees, and the worker worktrees are gone after a successful run.
    expect(git(root, 'worktree', 'list')).not.toContain('--w1');
  });

  it('fails a step at the attempt cap, reports its dependents blocked, finishes the rest: PlanIncomplete', () => {
    const root = runRepo(DIAMOND, 'demo', { '.tugtool/config.toml': '[state]\nmax_attempts = 2\n' });
    const impl = implementerScript();
    writeFileSync(join(impl.failDir, 'step-2'), '5');
    const r = runJsonl(root, ['demo', '--workers', '2', '--implementer', impl.argv]);
    const summary = r.events.at(-1);
    expect(r.code).toBe(4);
    expect(summary).toMatchObject({
      type: 'summary',
      status: 'error',
      error: { code: 'PlanIncomplete' },
      blocked_steps: ['step-4'],
    });
    expect(summary.failed_steps).toEqual([
      {
        step_anchor: 'step-2',
        reason: expect.stringMatching(/^ImplementerFailed/),
        logs: ['.tugtool/logs/demo/step-2-attempt1.log', '.tugtool/logs/demo/step-2-attempt2.log'],
      },
    ]);
    expect([...summary.steps_completed].sort()).toEqual(['step-1', 'step-3']);
    const failures = r.events.filter((e) => e.type === 'attempt_failed');
    expect(failures.map((e) => [e.step_anchor, e.attempt, e.reason_code])).toEqual([
      ['step-2', 1, 'ImplementerFailed'],
      ['step-2', 2, 'ImplementerFailed'],
    ]);
  });
});
