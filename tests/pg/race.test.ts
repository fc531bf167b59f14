/**
 * Claims racing on PostgreSQL through real processes (issue 14): 16 `tugcode state claim` processes per
 * round, claims side by side under the shared advisory lock with `FOR UPDATE SKIP LOCKED`. No timing
 * assertions: who won what, and that nobody failed. tests/state/race.test.ts is the SQLite twin.
 */
import { describe, expect, it } from 'vitest';
import pg from 'pg';
import { schemaFor } from '../../src/contract/schemas/index.js';
import { WarningSink } from '../../src/contract/envelope.js';
import { CONFIG_DEFAULTS } from '../../src/config/defaults.js';
import { systemClock } from '../../src/clock.js';
import { PgStateStore } from '../../src/state/pg-store.js';
import { checkSchema } from '../helpers/cli.js';
import { addWorktree } from '../state/cli-helpers.js';
import { DEMO_PATH, chainPlan, planRepo, planText, T0 } from '../state/helpers.js';
import { backend, cliAsync, type Backend } from './backend.js';

const PROCS = 16;

async function race(b: Backend, root: string, worktrees: string[], extra: string[] = []) {
  const results = await Promise.all(
    worktrees.map((w) => cliAsync(root, ['state', 'claim', 'demo', '--worktree', w, ...extra], b.env)),
  );
  for (const r of results) {
    expect(r.code, r.stderr).toBe(0);
    checkSchema(schemaFor('state claim'), r.json);
  }
  return results.map((r, i) => ({ worktree: worktrees[i]!, ...r.json }));
}

/** Completes the claimed steps in-process through the PostgreSQL store (the race is about claiming). */
async function completeAll(b: Backend, root: string, wins: { worktree: string; step_anchor: string }[]) {
  const store = new PgStateStore({
    url: b.db!.url,
    project: b.project,
    host: 'hosta',
    repoRoot: root,
    clock: systemClock(),
    config: structuredClone(CONFIG_DEFAULTS),
    env: { NODE_ENV: 'test' },
    longLived: false,
  });
  try {
    for (const w of wins) {
      const call = { command: 'test', warnings: new WarningSink(), workTree: w.worktree, cwd: root };
      await store.run(call, 'complete', {
        plan: 'demo',
        step: w.step_anchor,
        worktree: w.worktree,
        force: 'race test',
        skip_drift: true,
      });
    }
  } finally {
    await store.close();
  }
}

describe('claim races between processes on PostgreSQL', () => {
  it('gives every step to exactly one of 16 claimers over 20 rounds', async () => {
    const b = await backend('postgres');
    const n = PROCS * 20;
    const root = planRepo({
      [DEMO_PATH]: planText(Array.from({ length: n }, (_, i) => ({ id: String(i + 1), deps: [], tasks: ['t'] }))),
    });
    const worktrees = Array.from({ length: PROCS }, (_, i) => addWorktree(root, `w${i}`));
    const init = await cliAsync(root, ['state', 'init', 'demo'], b.env);
    expect(init.json?.status, init.stderr).toBe('ok');
    const claimedBy = new Map<string, string[]>();
    for (let round = 0; round < 20; round++) {
      const results = await race(b, root, worktrees);
      const wins = results.filter((r) => r.claimed);
      expect(wins.length, `round ${round}`).toBe(PROCS);
      for (const w of wins) claimedBy.set(w.step_anchor, [...(claimedBy.get(w.step_anchor) ?? []), w.worktree]);
      expect(new Set(wins.map((w) => w.step_anchor)).size).toBe(wins.length);
      await completeAll(b, root, wins);
    }
    expect(claimedBy.size).toBe(n);
    for (const [step, owners] of claimedBy) expect(owners, step).toHaveLength(1);
    const last = await race(b, root, worktrees.slice(0, 2));
    expect(last.every((r) => r.claimed === false && r.reason === 'all_completed')).toBe(true);
  }, 300_000);

  it('has exactly one winner per round when a single step is ready', async () => {
    const b = await backend('postgres');
    const root = planRepo({ [DEMO_PATH]: chainPlan(6) });
    const worktrees = Array.from({ length: PROCS }, (_, i) => addWorktree(root, `s${i}`));
    expect((await cliAsync(root, ['state', 'init', 'demo'], b.env)).json?.status).toBe('ok');
    for (let round = 1; round <= 6; round++) {
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

  it('has exactly one winner when 16 claimers race for the same --step', async () => {
    const b = await backend('postgres');
    const root = planRepo({ [DEMO_PATH]: chainPlan(3, 3) });
    const worktrees = Array.from({ length: PROCS }, (_, i) => addWorktree(root, `t${i}`));
    expect((await cliAsync(root, ['state', 'init', 'demo'], b.env)).json?.status).toBe('ok');
    for (const step of ['step-2', 'step-3']) {
      const results = await race(b, root, worktrees, ['--step', step]);
      const wins = results.filter((r) => r.claimed);
      expect(wins.map((w) => w.step_anchor)).toEqual([step]);
      const winner = `hosta:${wins[0]!.worktree}`;
      for (const r of results.filter((x) => !x.claimed)) {
        expect(r).toMatchObject({ reason: 'not_ready', claimed_by: winner });
      }
      await completeAll(b, root, wins);
    }
  });

  it('never resumes a claim that a concurrent takeover took (the row is re-read under its lock)', async () => {
    const b = await backend('postgres');
    const root = planRepo({ [DEMO_PATH]: chainPlan(2, 2) });
    const [w1, w2] = [addWorktree(root, 'r1'), addWorktree(root, 'r2')];
    const env = { ...b.env, TUGCODE_NOW: T0 };
    expect((await cliAsync(root, ['state', 'init', 'demo'], env)).json?.status).toBe('ok');
    const first = await cliAsync(root, ['state', 'claim', 'demo', '--worktree', w1, '--lease-duration', '60'], env);
    expect(first.json).toMatchObject({ claimed: true, step_anchor: 'step-1' });
    // A takeover in flight: another transaction holds step-1's row and moves the claim to w2.
    const c = new pg.Client({ connectionString: b.db!.url });
    await c.connect();
    try {
      await c.query('BEGIN');
      await c.query(`SELECT * FROM "${b.schema}".steps WHERE anchor = 'step-1' FOR UPDATE`);
      const later = { ...env, TUGCODE_NOW: new Date(Date.parse(T0) + 3600_000).toISOString() };
      const resume = cliAsync(root, ['state', 'claim', 'demo', '--worktree', w1], later);
      // Let the claim reach the row lock, then commit the takeover.
      await new Promise((r) => setTimeout(r, 1500));
      await c.query(
        `UPDATE "${b.schema}".steps SET claimed_by = $1, previous_owner = claimed_by, attempt = attempt + 1,
           failures = failures + 1, lease_expires_at = '2026-03-01T12:00:00.000Z' WHERE anchor = 'step-1'`,
        [`hosta:${w2}`],
      );
      await c.query('COMMIT');
      const r = await resume;
      expect(r.code, r.stderr).toBe(0);
      // w1 lost step-1: it gets step-2 (no dependency), never step-1 "resumed".
      expect(r.json).toMatchObject({ claimed: true, step_anchor: 'step-2', resumed: false });
    } finally {
      await c.end();
    }
  });
});
