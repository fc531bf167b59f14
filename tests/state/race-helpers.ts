/**
 * The claim-race tests' rounds (docs/state.md §8), shared by tests/state/race.test.ts and
 * tests/state/touches-race.test.ts: a gate holds the write lock every claim needs while the claimer
 * processes start, then lets them go together, so every round races however slow the machine.
 */
import { existsSync, readdirSync, readlinkSync, realpathSync } from 'node:fs';
import Database from 'better-sqlite3';
import pg from 'pg';
import { expect } from 'vitest';
import { schemaFor } from '../../src/contract/schemas/index.js';
import { OpsContext, newCall } from '../../src/ops/context.js';
import { checkSchema } from '../helpers/cli.js';
import { waitForLockWaiters } from '../helpers/pg.js';
import { cliAsync, type Backend } from '../pg/backend.js';
import { addWorktree } from './cli-helpers.js';
import { DEMO_PATH, dbPathOf, planRepo } from './helpers.js';

/** Where /proc shows a process's open files (Linux): the SQLite gate sees who has state.db open. */
export const PROC = existsSync('/proc/self/fd');

/** True when process `pid` has `file` open. */
function hasOpen(pid: number, file: string): boolean {
  try {
    return readdirSync(`/proc/${pid}/fd`).some((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`) === file;
      } catch {
        return false;
      }
    });
  } catch {
    return false; // exited
  }
}

/**
 * Holds the write lock every claim needs until the claimers (their pids) wait for it, then lets them all go at
 * once; resolves to how many were waiting. PostgreSQL: the project's advisory lock held exclusively (a claim
 * takes it shared) until every claimer's session waits for it. SQLite: BEGIN IMMEDIATE until every claimer has
 * state.db open, or once the first has had it open for 2 s (a writer that waits 5 s gives up with Busy).
 */
export async function gate(b: Backend, root: string): Promise<(pids: number[]) => Promise<number>> {
  if (b.kind === 'postgres') {
    const c = new pg.Client({ connectionString: b.db!.url });
    await c.connect();
    const key = `tugcode:${b.schema}`;
    await c.query('SELECT pg_advisory_lock(1, hashtext($1))', [key]);
    return async (pids) => {
      try {
        await waitForLockWaiters(b.db!.url, pids.length, 120_000);
        return pids.length;
      } finally {
        await c.query('SELECT pg_advisory_unlock(1, hashtext($1))', [key]);
        await c.end();
      }
    };
  }
  const file = realpathSync(dbPathOf(root));
  const db = new Database(file);
  db.exec('BEGIN IMMEDIATE');
  return async (pids) => {
    try {
      if (!PROC) return pids.length;
      const deadline = Date.now() + 120_000;
      let first: number | undefined;
      for (;;) {
        const waiting = pids.filter((pid) => hasOpen(pid, file)).length;
        if (waiting > 0) first ??= Date.now();
        if (waiting === pids.length || (first !== undefined && Date.now() - first > 2000)) return waiting;
        if (Date.now() > deadline) throw new Error(`no claimer opened ${file}`);
        await new Promise((r) => setTimeout(r, 10));
      }
    } finally {
      db.exec('COMMIT');
      db.close();
    }
  };
}

export interface ClaimAnswer {
  worktree: string;
  claimed: boolean;
  step_anchor?: string;
  reason?: string;
  touches_overlap?: string;
  claimed_steps: string[];
}

/** One round: every worktree's claim (with `argsOf(i)`) released at once; the answers, schema-checked. */
export async function race(
  b: Backend,
  root: string,
  worktrees: string[],
  argsOf: (i: number) => string[] = () => [],
): Promise<ClaimAnswer[]> {
  const open = await gate(b, root);
  const pids: number[] = [];
  const runs = worktrees.map((w, i) =>
    cliAsync(root, ['state', 'claim', 'demo', '--worktree', w, ...argsOf(i)], b.env, (pid) => pids.push(pid)),
  );
  const waited = await open(pids);
  const results = await Promise.all(runs);
  for (const r of results) {
    expect(r.code, r.stderr).toBe(0);
    checkSchema(schemaFor('state claim'), r.json);
  }
  // The round raced: claimers were held at the lock together and went at once.
  expect(waited, 'claimers waiting at the gate').toBeGreaterThanOrEqual(Math.min(2, worktrees.length));
  return results.map((r, i) => ({ worktree: worktrees[i]!, ...(r.json as object) }) as ClaimAnswer);
}

/** Completes the claimed steps in-process through the operations layer (the race is about claiming). */
export async function completeAll(b: Backend, root: string, wins: { worktree: string; step_anchor?: string }[]) {
  const ops = new OpsContext({ cwd: root, env: { ...process.env, ...b.env } });
  try {
    const call = newCall('state complete');
    const store = await ops.store(call);
    const sc = await ops.stateCall(call);
    for (const w of wins)
      await store.complete(sc, {
        plan: 'demo',
        step: w.step_anchor!,
        worktree: w.worktree,
        force: 'race test',
        skip_drift: true,
      });
  } finally {
    await ops.close();
  }
}

/** A repository with `plan` initialized on backend `b`, and `procs` linked worktrees named `<prefix><i>`. */
export async function initialized(b: Backend, plan: string, prefix: string, procs: number) {
  const root = planRepo({ [DEMO_PATH]: plan });
  const worktrees = Array.from({ length: procs }, (_, i) => addWorktree(root, `${prefix}${i}`));
  const init = await cliAsync(root, ['state', 'init', 'demo'], b.env);
  expect(init.json?.status, init.stderr).toBe('ok');
  return { root, worktrees };
}
