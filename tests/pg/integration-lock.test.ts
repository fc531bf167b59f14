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

function pgStore(url: string, host: string): PgStateStore {
  return new PgStateStore({
    url,
    project: 'locktest',
    host,
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
