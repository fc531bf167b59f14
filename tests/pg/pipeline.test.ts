// Statements a transaction sends without waiting (Conn.later, src/state/sql/postgres.ts) on a real server: they
// run in order, a failure among them fails the whole transaction (nothing is committed), and it is the failure
// reported, not the "transaction aborted" of the statement behind it.
import { describe, expect, it } from 'vitest';
import { TugError } from '../../src/contract/errors.js';
import { join } from 'node:path';
import { openWrite } from '../../src/state/db.js';
import { createTestDatabase, openStatePg } from '../helpers/pg.js';
import { tempDir } from '../helpers/repo.js';

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
      let ended!: () => void;
      const rolledBack = new Promise<void>((r) => (ended = r));
      const failed = pg.write(async (c) => {
        straggler = (async () => {
          await rolledBack; // the transaction has failed and rolled back
          c.later(INSERT, ['late']);
          return await c.get('SELECT 1');
        })();
        straggler.catch(() => undefined);
        throw new TugError('InvalidArgument', { reason: 'the caller gave up' });
      });
      await expect(failed).rejects.toThrow(TugError);
      ended();
      await expect(straggler).rejects.toSatisfy((e) => e instanceof TugError && e.code === 'InternalError');
      expect(await actors()).toEqual(['a', 'b']);
      // Outside a transaction nothing would report a failure: refused.
      expect(() => pg.later(INSERT, ['d'])).toThrow(TugError);
    } finally {
      await pg.close();
    }
  });

  it('report the first failure to every statement behind it, so a deadlock is retried', async () => {
    const db = await createTestDatabase();
    const pg = (await openStatePg(db.url, 'tug_first_failure'))!;
    const code = (e: unknown) => (e instanceof TugError ? e.details.pg_code : e);
    try {
      for (let i = 0; i < 10; i++) {
        // Reads sent side by side behind a failed deferred statement: each reports the cause, not 25P02.
        const seen: unknown[] = [];
        const r = pg.write(async (c) => {
          c.later('SELECT 1 / 0');
          const q = (n: number) =>
            c.get('SELECT CAST(? AS INTEGER) + 1 AS v', [n]).catch((e: unknown) => {
              seen.push(code(e));
              throw e;
            });
          await Promise.all([q(1), q(2), q(3)]);
        });
        await expect(r).rejects.toSatisfy((e) => code(e) === '22012');
        expect(seen).toEqual(['22012', '22012', '22012']);
        // A deadlock (40P01) behind reads sent together: the transaction runs again and succeeds.
        let attempts = 0;
        const again = await pg.write(async (c) => {
          if (++attempts === 1) c.later(`DO $$ BEGIN RAISE EXCEPTION 'victim' USING ERRCODE = '40P01'; END $$`);
          await Promise.all([c.get('SELECT 1 AS x'), c.get('SELECT 2 AS y')]);
          return 'ok';
        });
        expect([again, attempts]).toEqual(['ok', 2]);
      }
    } finally {
      await pg.close();
    }
  });
});

describe('deferred statements on SQLite', () => {
  it('run at once, and a chain still running after its transaction ended is refused', async () => {
    const db = openWrite(join(tempDir('tugcode-tx-'), 'state.db'), { create: true });
    const INSERT_ONE = `INSERT INTO events (at, plan_path, step_anchor, command, actor, attempt, details_json)
      VALUES ('2026-03-01T10:00:00.000Z', NULL, NULL, 'test', ?, NULL, '{}')`;
    try {
      let straggler: Promise<unknown> | undefined;
      let ended!: () => void;
      const rolledBack = new Promise<void>((r) => (ended = r));
      const failed = db.write(async (c) => {
        c.later(INSERT_ONE, ['now']);
        straggler = (async () => {
          await rolledBack; // the transaction has failed and rolled back
          return await c.run(INSERT_ONE, ['late']);
        })();
        straggler.catch(() => undefined);
        throw new TugError('InvalidArgument', { reason: 'the caller gave up' });
      });
      await expect(failed).rejects.toThrow(TugError);
      ended();
      await expect(straggler).rejects.toSatisfy((e) => e instanceof TugError && e.code === 'InternalError');
      expect(await db.all('SELECT actor FROM events')).toEqual([]);
    } finally {
      await db.close();
    }
  });
});
