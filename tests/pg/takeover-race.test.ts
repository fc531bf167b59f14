/**
 * Races only PostgreSQL has (issue 14): claims run side by side there, so a claim resuming its own step can
 * meet a takeover of that row in flight, or another resuming claim refreshing the plan's prose. The
 * 16-process races run on both backends in tests/state/race.test.ts.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import pg from 'pg';
import { waitForLockWaiters, waitForOtherSessionsGone } from '../helpers/pg.js';
import { addWorktree } from '../state/cli-helpers.js';
import { DEMO_PATH, chainPlan, planRepo, T0 } from '../state/helpers.js';
import { backend, cliAsync } from './backend.js';

/** A fresh PostgreSQL project with two independent steps (each with substeps) and two worktrees, initialized at T0. */
async function twoWorktrees(prefix: string) {
  const b = await backend('postgres');
  const root = planRepo({ [DEMO_PATH]: chainPlan(2, 2) });
  const [w1, w2] = [addWorktree(root, `${prefix}1`), addWorktree(root, `${prefix}2`)];
  const env = { ...b.env, TUGCODE_NOW: T0 };
  expect((await cliAsync(root, ['state', 'init', 'demo'], env)).json?.status).toBe('ok');
  return { b, root, w1, w2, env };
}

describe('claim races between processes on PostgreSQL', () => {
  it('never resumes a claim that a concurrent takeover took (the row is re-read under its lock)', async () => {
    const { b, root, w1, w2, env } = await twoWorktrees('r');
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
      // Once the claim waits for the row lock, commit the takeover.
      await waitForLockWaiters(b.db!.url, 1);
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

  it('two claims resuming after a prose edit never deadlock (the plan row is written before own rows are locked)', async () => {
    const { b, root, w1, w2, env } = await twoWorktrees('p');
    expect((await cliAsync(root, ['state', 'claim', 'demo', '--worktree', w1], env)).json).toMatchObject({
      step_anchor: 'step-1',
    });
    expect((await cliAsync(root, ['state', 'claim', 'demo', '--worktree', w2], env)).json).toMatchObject({
      step_anchor: 'step-2',
    });
    // A title-only edit: both resuming claims refresh the plan's prose (the plan row, then step rows).
    for (const d of [root, w1, w2]) {
      const f = join(d, DEMO_PATH);
      writeFileSync(f, readFileSync(f, 'utf8').replace('Title 1', 'Title one').replace('Title 2', 'Title two'));
    }
    const c = new pg.Client({ connectionString: b.db!.url });
    await c.connect();
    const deadlocks = async () =>
      Number(
        (await c.query('SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()')).rows[0].deadlocks,
      );
    try {
      const before = await deadlocks();
      const own = Number((await c.query('SELECT pg_backend_pid() AS pid')).rows[0].pid);
      // The plan row held from outside lines both claims up behind it.
      await c.query('BEGIN');
      await c.query(`SELECT * FROM "${b.schema}".plans FOR UPDATE`);
      const claim = (w: string) => cliAsync(root, ['state', 'claim', 'demo', '--worktree', w], env);
      const claims = [claim(w1), claim(w2)] as const;
      await waitForLockWaiters(b.db!.url, 2);
      await c.query('COMMIT');
      const [r1, r2] = await Promise.all(claims);
      expect(r1.json, r1.stderr).toMatchObject({ claimed: true, step_anchor: 'step-1', resumed: true });
      expect(r2.json, r2.stderr).toMatchObject({ claimed: true, step_anchor: 'step-2', resumed: true });
      // A session's statistics (its deadlocks) reach pg_stat_database when it ends.
      await waitForOtherSessionsGone(b.db!.url, [own]);
      expect((await deadlocks()) - before).toBe(0);
    } finally {
      await c.end();
    }
  });
});
