/**
 * `StateStore.integrationLock(plan)` (docs/state.md §8): on PostgreSQL a session advisory lock on the project
 * and the plan, so integrations of one plan take turns across processes and hosts, other plans never wait,
 * and a lock whose session died is simply gone. On SQLite it is the clone's `.tugtool/integration.lock`.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { TugError } from '../../src/contract/errors.js';
import { PgStateStore } from '../../src/state/pg-store.js';
import { SqliteStateStore } from '../../src/state/store.js';
import { createTestDatabase, pgConnect, waitForPg } from '../helpers/pg.js';
import { tempRepo } from '../helpers/repo.js';

const config = { state: { lease_seconds: 60, max_attempts: 3 } };

function pgStore(url: string, host: string, machine?: string): PgStateStore {
  return new PgStateStore({
    url,
    project: 'locktest',
    host,
    machine,
    repoRoot: '/nowhere',
    clock: systemClock(),
    config,
    env: {},
    longLived: false,
  });
}

describe('StateStore.integrationLock', () => {
  it('PostgreSQL: one holder per plan across stores; other plans are free; released, the next one gets it', async () => {
    const db = await createTestDatabase('lock');
    const a = pgStore(db.url, 'a');
    const b = pgStore(db.url, 'b');
    try {
      const release = await a.integrationLock('.tugtool/tugplan-x.md');
      const refused = await b.integrationLock('.tugtool/tugplan-x.md', 300).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(TugError);
      expect((refused as TugError).code).toBe('Busy');
      const other = await b.integrationLock('.tugtool/tugplan-y.md', 300);
      await other();
      // A session that has asked for the lock (pg_try_advisory_lock, polled) and does not hold it.
      const asking = `SELECT count(*) FROM pg_stat_activity s WHERE s.datname = current_database()
          AND s.query LIKE 'SELECT pg_try_advisory_lock%'
          AND NOT EXISTS (SELECT 1 FROM pg_locks l WHERE l.pid = s.pid AND l.locktype = 'advisory' AND l.granted)`;
      await waitForPg(db.url, 'the refused session to end', `SELECT (${asking}) = 0`);
      const waiting = b.integrationLock('.tugtool/tugplan-x.md', 5000);
      // Released only once b is waiting for it.
      await waitForPg(db.url, 'b to wait for the lock', `SELECT (${asking}) > 0`);
      await release();
      const next = await waiting;
      await next();
      await next(); // idempotent
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('PostgreSQL: a lock whose session was killed is gone; its release does nothing', async () => {
    const db = await createTestDatabase('lockdead');
    const a = pgStore(db.url, 'a');
    const b = pgStore(db.url, 'b');
    try {
      const release = await a.integrationLock('p');
      const admin = await pgConnect(db.url);
      try {
        await admin.query(
          // This database's lock only: other test files run beside this one on the same server.
          `SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND classid = 4 AND granted
             AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
        );
      } finally {
        await admin.end();
      }
      const next = await b.integrationLock('p', 5000);
      await release();
      await next();
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('PostgreSQL: two machines given one host name (clones at one path) are refused; a session of this machine is not', async () => {
    const db = await createTestDatabase('runid');
    const a = pgStore(db.url, 'dup', 'machine-a');
    const b = pgStore(db.url, 'dup', 'machine-b');
    const c = pgStore(db.url, 'other', 'machine-c');
    const a2 = pgStore(db.url, 'dup', 'machine-a');
    const stores = [pgStore(db.url, 'dup', 'h'.repeat(60)), pgStore(db.url, 'dup', 'h'.repeat(60))];
    try {
      await a.holdRunIdentity('p');
      const refused = (await b.holdRunIdentity('p').catch((e: unknown) => e)) as TugError;
      expect(refused).toBeInstanceOf(TugError);
      expect(refused.code).toBe('RunInProgress');
      expect(refused.details).toMatchObject({ holder_host: 'dup', holder_machine: 'machine-a', owner: 'dup:/nowhere' });
      expect(refused.message).toContain('another machine runs p as host dup from a clone at the same path');
      expect(refused.message).toContain('machine machine-a, pid');
      expect(refused.hint).toContain('TUGCODE_STATE_HOST');
      // Another host, another plan: free. This machine again (a session left by a process that is gone): goes on.
      await c.holdRunIdentity('p');
      await b.holdRunIdentity('q');
      await a2.holdRunIdentity('p');
      // A long machine name (a host name) still fits the session's name, so this machine is still recognised.
      await stores[0]!.holdRunIdentity('r');
      await stores[1]!.holdRunIdentity('r');
      // Closing the store ends the session: the other machine may run (its host now its own mistake to fix).
      await a.close();
      await b.holdRunIdentity('p');
    } finally {
      for (const s of [a, b, c, a2, ...stores]) await s.close();
    }
  });

  it('SQLite: the clone-wide integration.lock file', async () => {
    const root = tempRepo();
    const s = new SqliteStateStore({ repoRoot: root, clock: systemClock(), config, env: {} });
    const release = await s.integrationLock('p');
    expect(existsSync(join(root, '.tugtool', 'integration.lock'))).toBe(true);
    const refused = await s.integrationLock('other plan', 200).catch((e: unknown) => e);
    expect((refused as TugError).code).toBe('Busy');
    await release();
    expect(existsSync(join(root, '.tugtool', 'integration.lock'))).toBe(false);
  });
});
