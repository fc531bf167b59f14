// openPg and the write transaction's advisory lock (src/state/sql/postgres.ts): the schema version and the server
// clock read on open (one round trip when the schema exists), BEGIN and the project lock sent together.
import { describe, expect, it } from 'vitest';
import { LATEST_SCHEMA_VERSION } from '../../src/state/migrate.js';
import type { PgDatabase } from '../../src/state/sql/postgres.js';
import { createTestDatabase, openStatePg, pgConnect } from '../helpers/pg.js';

const SCHEMA = 'tug_opentest';

function open(url: string, mode: 'read' | 'write' | 'create'): Promise<PgDatabase | null> {
  return openStatePg(url, SCHEMA, mode);
}

describe('openPg', () => {
  it('finds no schema for a reader or a writer, creates it for state init, reads its version and the clock after', async () => {
    const db = await createTestDatabase();
    expect(await open(db.url, 'read')).toBeNull();
    const admin = await pgConnect(db.url);
    try {
      // A schema without its schema_version table (a migration never ran): still nothing for a reader.
      await admin.query(`CREATE SCHEMA ${SCHEMA}`);
      expect(await open(db.url, 'read')).toBeNull();
      expect(await open(db.url, 'write')).toBeNull();
      const w = (await open(db.url, 'create'))!;
      expect(w.version).toBe(LATEST_SCHEMA_VERSION);
      await w.close();
      const r = (await open(db.url, 'read'))!;
      expect(r.version).toBe(LATEST_SCHEMA_VERSION);
      // Server and test share the machine's clock.
      expect(Math.abs(r.serverOffsetMs)).toBeLessThan(1000);
      await r.close();
      // A schema newer than this code: SchemaTooNew for a writer, readable by a reader.
      await admin.query(`UPDATE ${SCHEMA}.schema_version SET version = ${LATEST_SCHEMA_VERSION + 1}`);
      await expect(open(db.url, 'write')).rejects.toMatchObject({ code: 'SchemaTooNew' });
      const newer = (await open(db.url, 'read'))!;
      expect(newer.version).toBe(LATEST_SCHEMA_VERSION + 1);
      await newer.close();
    } finally {
      await admin.end();
    }
  });

  it('write transactions hold the project lock: exclusive, or shared for claims', async () => {
    const db = await createTestDatabase();
    const w = (await open(db.url, 'create'))!;
    try {
      const locks = (shared: boolean) =>
        w.write(
          (c) =>
            c.all<{ mode: string; mine: boolean }>(
              `SELECT l.mode, l.objid::bigint = (hashtext('tugcode:${SCHEMA}')::bigint & 4294967295) AS mine
               FROM pg_locks l WHERE l.locktype = 'advisory' AND l.pid = pg_backend_pid() AND l.classid = 1`,
            ),
          { shared },
        );
      expect(await locks(false)).toMatchObject([{ mode: 'ExclusiveLock', mine: true }]);
      expect(await locks(true)).toMatchObject([{ mode: 'ShareLock', mine: true }]);
      // Released at commit: nothing held between transactions, and a failed transaction rolls back.
      await expect(w.write(async (c) => c.run('SELECT no_such_column FROM schema_version'))).rejects.toThrow();
      // pg_locks spans the server: count this test's database only (other files run beside it).
      const held = await w.get<{ n: number }>(
        `SELECT count(*) AS n FROM pg_locks
         WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
      );
      expect(held).toEqual({ n: 0 });
      expect(await w.write((c) => c.get<{ v: number }>('SELECT version AS v FROM schema_version'))).toEqual({
        v: LATEST_SCHEMA_VERSION,
      });
    } finally {
      await w.close();
    }
  });
});
