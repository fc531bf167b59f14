/**
 * Concurrency through real processes (07-quality.md §1): 16 `tugcode state claim` processes race on one
 * plan. No timing assertions: only who won what, and that nobody failed (no Busy, no crash).
 */
import { describe, expect, it } from 'vitest';
import { checkSchema, cliAsync } from '../helpers/cli.js';
import { schemaFor } from '../../src/contract/schemas/index.js';
import { withCtx, chainPlan, planRepo, planText, DEMO_PATH } from './helpers.js';
import { addWorktree, st } from './cli-helpers.js';
import { complete } from '../../src/state/complete.js';

const PROCS = 16;

function claimAsync(root: string, worktree: string) {
  return cliAsync(root, ['state', 'claim', 'demo', '--worktree', worktree]);
}

async function race(root: string, worktrees: string[]) {
  const results = await Promise.all(worktrees.map((w) => claimAsync(root, w)));
  for (const r of results) {
    expect(r.code, r.stderr).toBe(0);
    checkSchema(schemaFor('state claim'), r.json);
  }
  return results.map((r, i) => ({ worktree: worktrees[i]!, ...r.json }));
}

/** Complete the claimed steps in-process (the race is about claiming). */
async function completeAll(root: string, wins: { worktree: string; step_anchor: string }[]) {
  await withCtx(root, { now: new Date().toISOString() }, async (ctx) => {
    for (const w of wins)
      await complete(ctx, {
        plan: 'demo',
        step: w.step_anchor,
        worktree: w.worktree,
        force: 'race test',
        skip_drift: true,
      });
  });
}

describe('claim races between processes', () => {
  it('gives each of 40 steps to exactly one of 16 racing claimers', async () => {
    const root = planRepo({
      [DEMO_PATH]: planText(Array.from({ length: 40 }, (_, i) => ({ id: String(i + 1), deps: [], tasks: ['t'] }))),
    });
    st(root, ['init', 'demo'], { now: new Date().toISOString() });
    const worktrees = Array.from({ length: PROCS }, (_, i) => addWorktree(root, `w${i}`));
    const claimedBy = new Map<string, string[]>();
    for (let round = 0; round < 20; round++) {
      const results = await race(root, worktrees);
      const wins = results.filter((r) => r.claimed);
      for (const w of wins) claimedBy.set(w.step_anchor, [...(claimedBy.get(w.step_anchor) ?? []), w.worktree]);
      expect(new Set(wins.map((w) => w.step_anchor)).size).toBe(wins.length);
      if (wins.length === 0) {
        expect(results.every((r) => r.reason === 'all_completed')).toBe(true);
        break;
      }
      await completeAll(root, wins);
    }
    expect([...claimedBy.keys()].sort()).toEqual(Array.from({ length: 40 }, (_, i) => `step-${i + 1}`).sort());
    for (const [step, owners] of claimedBy) expect(owners, step).toHaveLength(1);
  });

  it('has exactly one winner per round when a single step is ready', async () => {
    const root = planRepo({ [DEMO_PATH]: chainPlan(6) });
    st(root, ['init', 'demo'], { now: new Date().toISOString() });
    const worktrees = Array.from({ length: PROCS }, (_, i) => addWorktree(root, `s${i}`));
    for (let round = 1; round <= 6; round++) {
      const results = await race(root, worktrees);
      const wins = results.filter((r) => r.claimed);
      expect(wins.map((w) => w.step_anchor)).toEqual([`step-${round}`]);
      expect(
        results
          .filter((r) => !r.claimed)
          .every((r) => r.reason === 'no_ready_steps' && r.claimed_steps[0] === `step-${round}`),
      ).toBe(true);
      await completeAll(root, wins);
    }
  });
});
