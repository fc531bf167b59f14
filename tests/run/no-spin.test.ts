/**
 * The driver never spins (docs/run.md §1.4): a claim lost again and again on
 * the same step (here an outside `state reset --force` during every attempt) is claimed again after a
 * growing wait, and the fifth loss in a row stops the run with ClaimLostRepeatedly naming the step and the
 * refusal, the claim handed back.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI } from '../helpers/cli.js';
import { sql } from '../state/helpers.js';
import {
  implementerScript,
  nodeImplementer,
  planText,
  runJsonl,
  runRepo,
  seenBy,
  step,
  stepCommits,
} from './helpers.js';

describe('tugcode run: a claim lost again and again', () => {
  it('backs off, then stops with ClaimLostRepeatedly naming the step and the refusal', () => {
    const root = runRepo(planText([step(1, 'One'), step(2, 'Two', { deps: [1] })]));
    // Every attempt ends its own claim from outside, as another user's `state reset --force` would.
    const impl = nodeImplementer(`
const { spawnSync } = await import('node:child_process');
const r = spawnSync(process.execPath, [${JSON.stringify(CLI)}, 'state', 'reset', 'demo', step, '--force', '--json'], {
  cwd: wt, encoding: 'utf8',
});
appendFileSync(join(dir, 'resets'), r.stdout);
writeFileSync(join(wt, step + '.txt'), step + '\\n');
`);
    const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv]);
    const summary = r.events.at(-1);
    expect(summary, r.stderr).toMatchObject({
      type: 'summary',
      status: 'error',
      error: {
        code: 'ClaimLostRepeatedly',
        details: { step_anchor: 'step-1', worker: 'w1', losses: 5, refusal_code: 'LeaseExpired' },
      },
    });
    expect(r.code).toBe(4);
    expect(summary.error.message).toContain('step-1');
    expect(summary.error.message).toContain('LeaseExpired');
    expect(summary.error.hint).toBe(
      'tugcode state log .tugtool/tugplan-demo.md --step step-1, then tugcode state reset .tugtool/tugplan-demo.md step-1 --force',
    );
    const claims = r.events.filter((e) => e.type === 'claimed');
    const lost = r.events.filter((e) => e.type === 'claim_lost');
    expect(claims).toHaveLength(5);
    expect(lost).toHaveLength(5);
    // Each claim after a loss waited longer than the one before (200 ms, doubling).
    const gaps = lost.slice(0, -1).map((l, i) => Date.parse(claims[i + 1].at) - Date.parse(l.at));
    gaps.forEach((g, i) => expect(g).toBeGreaterThanOrEqual(200 * 2 ** i));
    // Nothing is left claimed: a later run (or a user) can take the step.
    expect(sql<{ status: string }>(root, "SELECT status FROM steps WHERE anchor = 'step-1'")[0]!.status).toBe(
      'pending',
    );
  });

  it('stops with the error, claiming no step completed, when the state cannot record a completion (a full disk)', () => {
    const root = runRepo(planText([step(1, 'One'), step(2, 'Two', { deps: [1] })]));
    const impl = implementerScript();
    const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv], {
      TUGCODE_RUN_FAULT: 'refuse-complete:step-1',
    });
    expect(r.code, r.stderr).toBe(10);
    expect(r.events.at(-1)).toMatchObject({ type: 'summary', status: 'error', error: { code: 'DiskFull' } });
    // Integrated, not completed: the run says nothing of a completion the state does not have.
    expect(r.events.filter((e) => e.type === 'step_completed')).toEqual([]);
    expect(r.events.at(-1).steps_completed ?? []).toEqual([]);
    expect(stepCommits(root, 'tugplan/demo')).toHaveLength(1);
    // The next run settles it from its trailer, without implementing it again, and goes on.
    const again = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv]);
    expect(again.code, again.stderr).toBe(0);
    expect(Object.keys(seenBy(impl.seen)).sort()).toEqual(['step-1', 'step-2']);
    expect(seenBy(impl.seen)['step-1']).toHaveLength(1);
    expect(sql<{ status: string }>(root, "SELECT status FROM steps WHERE anchor = 'step-1'")[0]!.status).toBe(
      'completed',
    );
  });

  it('stops at once, with the refusal, when the state will not record a failed attempt', () => {
    const root = runRepo(planText([step(1, 'One')]));
    const impl = nodeImplementer(`writeFileSync(join(wt, 'big.bin'), 'x'.repeat(65536)); process.exit(1);`);
    const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv], {
      TUGCODE_RUN_FAULT: 'refuse-fail:step-1',
    });
    // The failed attempt's files are gone all the same (on a full disk they are what filled it).
    const trees = join(root, '.tugtree');
    const left = existsSync(trees) ? readdirSync(trees).filter((t) => existsSync(join(trees, t, 'big.bin'))) : [];
    expect(left).toEqual([]);
    expect(r.events.at(-1), r.stderr).toMatchObject({
      type: 'summary',
      status: 'error',
      error: { code: 'DatabaseError' },
    });
    // One attempt, not the same attempt claimed again and again, uncounted.
    expect(r.events.filter((e) => e.type === 'claimed')).toHaveLength(1);
    expect(sql<{ status: string }>(root, "SELECT status FROM steps WHERE anchor = 'step-1'")[0]!.status).toBe(
      'pending',
    );
  });
});
