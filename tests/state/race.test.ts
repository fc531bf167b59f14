/**
 * Concurrency through real processes (docs/quality.md §1, docs/state.md §8), on both backends: 16
 * `tugcode state claim` processes race on one plan, round after round. No timing assertions: only who won
 * what, and that nobody failed (no Busy, no crash). On PostgreSQL claims run side by side under the shared
 * project lock with `FOR UPDATE SKIP LOCKED`; on SQLite the writer is alone.
 *
 * Every round races by construction, however slow the machine: a gate holds the write lock the claims need
 * while the claimers start and lets them go together, and the test checks that claimers did wait at it. So a
 * few rounds suffice: 16 CLI processes cost ~2.5 s of CPU, and `npm test` runs 3 rounds of the many-steps race
 * (48 claims per backend) and 3 of the one-step race; TUGCODE_RACE_ROUNDS=20 makes a longer stress run.
 */
import { describe, expect, it } from 'vitest';
import { BACKENDS, backend } from '../pg/backend.js';
import { completeAll, initialized, race } from './race-helpers.js';
import { chainPlan, planText } from './helpers.js';

const PROCS = 16;
const ROUNDS = Number(process.env.TUGCODE_RACE_ROUNDS || 3);

describe.each(BACKENDS)('claim races between processes [%s]', (kind) => {
  it(`gives every step to exactly one of ${PROCS} claimers over ${ROUNDS} rounds`, async () => {
    const b = await backend(kind);
    const n = PROCS * ROUNDS;
    const { root, worktrees } = await initialized(
      b,
      planText(Array.from({ length: n }, (_, i) => ({ id: String(i + 1), deps: [], tasks: ['t'] }))),
      'w',
      PROCS,
    );
    const claimedBy = new Map<string, string[]>();
    for (let round = 0; round < ROUNDS; round++) {
      const wins = (await race(b, root, worktrees)).filter((r) => r.claimed);
      expect(wins.length, `round ${round}`).toBe(PROCS);
      for (const w of wins) claimedBy.set(w.step_anchor!, [...(claimedBy.get(w.step_anchor!) ?? []), w.worktree]);
      await completeAll(b, root, wins);
    }
    expect(claimedBy.size).toBe(n);
    for (const [step, owners] of claimedBy) expect(owners, step).toHaveLength(1);
    const last = await race(b, root, worktrees.slice(0, 2));
    expect(last.every((r) => r.claimed === false && r.reason === 'all_completed')).toBe(true);
  }, 300_000);

  it('has exactly one winner per round when a single step is ready', async () => {
    const b = await backend(kind);
    const { root, worktrees } = await initialized(b, chainPlan(ROUNDS), 's', PROCS);
    for (let round = 1; round <= ROUNDS; round++) {
      const results = await race(b, root, worktrees);
      const wins = results.filter((r) => r.claimed);
      expect(wins.map((w) => w.step_anchor)).toEqual([`step-${round}`]);
      expect(
        results
          .filter((r) => !r.claimed)
          .every((r) => r.reason === 'no_ready_steps' && r.claimed_steps[0] === `step-${round}`),
      ).toBe(true);
      await completeAll(b, root, wins);
    }
  });

  it(`has exactly one winner when ${PROCS} claimers race for the same --step`, async () => {
    const b = await backend(kind);
    const { root, worktrees } = await initialized(b, chainPlan(3, 3), 't', PROCS);
    for (const step of ['step-2', 'step-3']) {
      const results = await race(b, root, worktrees, () => ['--step', step]);
      const wins = results.filter((r) => r.claimed);
      expect(wins.map((w) => w.step_anchor)).toEqual([step]);
      for (const r of results.filter((x) => !x.claimed))
        expect(r).toMatchObject({ reason: 'not_ready', claimed_by: b.owner(wins[0]!.worktree) });
      await completeAll(b, root, wins);
    }
  });
});
