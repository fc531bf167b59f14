/**
 * `tugcode run` retrying a step with substeps (docs/run.md §1 item 4.4, docs/state.md "Substeps of a
 * discarded attempt"): a substep completed inside an attempt that did not integrate goes back to pending
 * with the attempt, so the next attempt runs it again and the plan finishes, with a bounded number of events.
 */
import { describe, expect, it } from 'vitest';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from '../state/helpers.js';
import {
  holdingImplementer,
  implementerScript,
  planText,
  runJsonl,
  runRepo,
  seenBy,
  startRun,
  stepCommits,
  waitUntil,
} from './helpers.js';

const plan = planText([
  [
    '#### Step 1: Parent {#step-1}',
    '',
    '**Commit:** `feat: parent`',
    '',
    '**Tasks:**',
    '- [ ] write parent',
    '',
    '##### Step 1.1: First {#step-1-1}',
    '',
    '**Commit:** `feat: first`',
    '',
    '**Tasks:**',
    '- [ ] write first',
    '',
    '##### Step 1.2: Second {#step-1-2}',
    '',
    '**Commit:** `feat: second`',
    '',
    '**Tasks:**',
    '- [ ] write second',
    '',
  ].join('\n'),
]);

describe('tugcode run: a retried step with substeps', () => {
  it('runs the substeps again on the next attempt and finishes the plan', () => {
    const root = runRepo(plan);
    const impl = implementerScript();
    writeFileSync(join(impl.failDir, 'step-1-2'), '1'); // 1.2 fails once, after 1.1 completed
    const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv]);
    expect(r.events.length, r.stderr + r.stdout.slice(0, 2000)).toBeLessThan(40);
    const summary = r.events.at(-1);
    expect(summary, r.stderr).toMatchObject({ type: 'summary', status: 'ok', steps_completed: ['step-1'] });
    expect(r.code).toBe(0);
    expect(r.events.filter((e) => e.type === 'claim_lost')).toEqual([]);
    expect(r.events.filter((e) => e.type === 'attempt_failed')).toHaveLength(1);
    // Attempt 2 ran 1.1 again: its work of attempt 1 was never integrated.
    expect(seenBy(impl.seen)['step-1-1']!.map((s) => s.attempt)).toEqual([1, 2]);
    expect(stepCommits(root, 'tugplan/demo')).toEqual(['step-1-1', 'step-1-2', 'step-1']);
    const rows = sql<{ anchor: string; status: string; commit_hash: string | null }>(
      root,
      `SELECT anchor, status, commit_hash FROM steps ORDER BY step_index`,
    );
    expect(rows.map((s) => [s.anchor, s.status, s.commit_hash !== null])).toEqual([
      ['step-1', 'completed', true],
      ['step-1-1', 'completed', true],
      ['step-1-2', 'completed', true],
    ]);
  });

  it('heals after a SIGKILL between the substep completing and the integration', async () => {
    const root = runRepo(plan);
    const impl = holdingImplementer();
    const hold = join(impl.hold, 'step-1-2-a1');
    writeFileSync(hold, '');
    const run = startRun(root, ['demo', '--workers', '1', '--implementer', impl.argv]);
    await waitUntil('step-1-2 started', () => existsSync(join(impl.started, 'step-1-2-a1')));
    // step-1-1 is completed in the state (auto-complete), its commit only on the worker branch.
    expect(sql<{ status: string }>(root, "SELECT status FROM steps WHERE anchor = 'step-1-1'")[0]!.status).toBe(
      'completed',
    );
    run.child.kill('SIGKILL');
    await run.done;
    rmSync(hold);

    const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv]);
    expect(r.events.length, r.stderr).toBeLessThan(40);
    expect(r.events.at(-1), r.stderr).toMatchObject({ type: 'summary', status: 'ok', steps_completed: ['step-1'] });
    expect(r.events.filter((e) => e.type === 'claim_lost')).toEqual([]);
    expect(seenBy(impl.seen)['step-1-1']!.map((s) => s.attempt)).toEqual([1, 2]);
    expect(stepCommits(root, 'tugplan/demo')).toEqual(['step-1-1', 'step-1-2', 'step-1']);
  });
});
