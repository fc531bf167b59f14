// Statements a transaction sends without waiting (Conn.later, src/state/sql/postgres.ts) on a real server: they
// run in order, a failure among them fails the whole transaction (nothing is committed), and it is the failure
// reported, not the "transaction aborted" of the statement behind it.
import { describe, expect, it } from 'vitest';
import { TugError } from '../../src/contract/errors.js';
import { createTestDatabase, openStatePg } from '../helpers/pg.js';

const INSERT = `INSERT INTO events (at, plan_path, step_anchor, command, actor, attempt, details_json)
  VALUES ('2026-03-01T10:00:00.000Z', NULL, NULL, 'test', ?, NULL, '{}')`;

describe('deferred statements on PostgreSQL', () => {
  it('run in order with the commit, and one failing rolls the whole transaction back', async () => {
    const db = await createTestDatabase();
    const pg = (await openStatePg(db.url, 'tug_pipeline'))!;
    try {
      await pg.write(async (c) => {
        c.later(INSERT, ['a']);
        c.later(INSERT, ['b']);
      });
      const actors = async () =>
        (await pg.all<{ actor: string }>('SELECT actor FROM events ORDER BY id')).map((r) => r.actor);
      expect(await actors()).toEqual(['a', 'b']);

      // A failure at the commit: the statement before it is rolled back with it.
      const atCommit = pg.write(async (c) => {
        c.later(INSERT, ['c']);
        c.later('SELECT 1 / 0');
      });
      await expect(atCommit).rejects.toSatisfy((e) => e instanceof TugError && e.details.pg_code === '22012');
      // A failure reported by the next statement that waits: its own error, not 25P02 (transaction aborted).
      const atNext = pg.write(async (c) => {
        c.later('SELECT 1 / 0');
        await c.get('SELECT 1');
      });
      await expect(atNext).rejects.toSatisfy((e) => e instanceof TugError && e.details.pg_code === '22012');
      expect(await actors()).toEqual(['a', 'b']);
      // A chain of the transaction still running after it failed never sends a statement behind the ROLLBACK
      // (it would run and commit on its own).
      let straggler: Promise<unknown> | undefined;
      const failed = pg.write(async (c) => {
        straggler = (async () => {
          await new Promise((r) => setTimeout(r, 200));
          c.later(INSERT, ['late']);
          return await c.get('SELECT 1');
        })();
        straggler.catch(() => undefined);
        throw new TugError('InvalidArgument', { reason: 'the caller gave up' });
      });
      await expect(failed).rejects.toThrow(TugError);
      await expect(straggler).rejects.toSatisfy((e) => e instanceof TugError && e.code === 'InternalError');
      expect(await actors()).toEqual(['a', 'b']);
      // Outside a transaction nothing would report a failure: refused.
      expect(() => pg.later(INSERT, ['d'])).toThrow(TugError);
    } finally {
      await pg.close();
    }
  });
});
