/**
 * The start gate of the claim-race tests (docs/state.md §8): a gate holds the write lock every claim needs
 * while the claimer processes start, then lets them go together, so every round races however slow the
 * machine. Shared by tests/state/race.test.ts and tests/state/touches-race.test.ts.
 */
import { existsSync, readdirSync, readlinkSync, realpathSync } from 'node:fs';
import Database from 'better-sqlite3';
import pg from 'pg';
import { waitForLockWaiters } from '../helpers/pg.js';
import type { Backend } from '../pg/backend.js';
import { dbPathOf } from './helpers.js';

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
