/**
 * The integration target's migration (`plans.integration_kind`/`integration_where`, docs/state.md §2,
 * docs/run.md §1.11) on both backends: a store one version older, built from the migration files themselves
 * and holding a plan, is brought to the latest version with the plan kept and no target recorded (NULL);
 * the kind accepts only `local` and `remote`. Written against INTEGRATION_TARGET_SCHEMA_VERSION.
 */
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { INTEGRATION_TARGET_SCHEMA_VERSION, LATEST_SCHEMA_VERSION } from '../../src/state/migrate.js';
import { openWrite } from '../../src/state/db.js';
import { createTestDatabase, openStatePg, pgConnect } from '../helpers/pg.js';
import { pgAtVersion, sqliteAtVersion } from '../helpers/old-schema.js';

const BEFORE = INTEGRATION_TARGET_SCHEMA_VERSION - 1;
const TARGET = "SELECT plan_hash, integration_kind, integration_where FROM plans WHERE plan_path = 'p'";
const SET_KIND = (kind: string) => `UPDATE plans SET integration_kind = '${kind}', integration_where = 'x'`;

describe('the integration target migration', () => {
  it('SQLite: an older database gains the columns, its plan kept with no target; the kind is checked', () => {
    const path = sqliteAtVersion(BEFORE);
    const o = openWrite(path);
    expect(o.version).toBe(LATEST_SCHEMA_VERSION);
    o.raw.close();
    const db = new Database(path);
    expect(db.prepare(TARGET).get()).toEqual({ plan_hash: 'h', integration_kind: null, integration_where: null });
    db.exec(SET_KIND('remote'));
    expect(() => db.exec(SET_KIND('elsewhere'))).toThrow(/CHECK/);
    db.close();
  });

  it('PostgreSQL: an older schema gains the columns, its plan kept with no target; the kind is checked', async () => {
    const db = await createTestDatabase('migtarget');
    const schema = 'tug_migtarget';
    const admin = await pgConnect(db.url);
    try {
      await pgAtVersion(admin, schema, BEFORE);
      const opened = await openStatePg(db.url, schema, 'write');
      expect(opened!.version).toBe(LATEST_SCHEMA_VERSION);
      await opened!.close();
      expect((await admin.query(TARGET)).rows).toEqual([
        { plan_hash: 'h', integration_kind: null, integration_where: null },
      ]);
      await admin.query(SET_KIND('local'));
      await expect(admin.query(SET_KIND('elsewhere'))).rejects.toThrow(/check constraint/);
    } finally {
      await admin.end();
    }
  });
});
