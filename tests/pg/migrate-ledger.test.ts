/**
 * The ledger's migration (`step_usage`, docs/state.md §2) on both backends: a store one version older,
 * built from the migration files themselves and holding rows, is brought to the latest version with its
 * rows kept; the new table refuses a row of an unknown step, a negative count and an unknown role. Written
 * against USAGE_SCHEMA_VERSION, so it holds wherever the ledger sits on the ladder.
 */
import { describe, expect, it } from 'vitest';
import { LATEST_SCHEMA_VERSION, USAGE_SCHEMA_VERSION } from '../../src/state/migrate.js';
import { openWrite } from '../../src/state/db.js';
import { createTestDatabase, openStatePg, pgConnect } from '../helpers/pg.js';
import { pgAtVersion, sqliteAtVersion } from '../helpers/old-schema.js';

const BEFORE = USAGE_SCHEMA_VERSION - 1;
const STEP_ROW =
  "INSERT INTO steps (plan_path, anchor, top_anchor, step_id, step_index, title) VALUES ('p', 'step-1', 'step-1', '1', 0, 'x')";
const USAGE = (values: string) =>
  `INSERT INTO step_usage (plan_path, step_anchor, attempt, role, output_tokens, cost_usd, recorded_at) VALUES (${values})`;

describe('the ledger migration', () => {
  it('SQLite: an older database gains step_usage, its rows kept, the new checks hold', () => {
    const path = sqliteAtVersion(BEFORE, STEP_ROW);
    const o = openWrite(path);
    expect(o.version).toBe(LATEST_SCHEMA_VERSION);
    const db = o.raw;
    expect(db.prepare('SELECT anchor FROM steps').all()).toEqual([{ anchor: 'step-1' }]);
    db.exec(USAGE("'p', 'step-1', 1, 'implementer', 5, 0.5, 't'"));
    expect(() => db.exec(USAGE("'p', 'nope', 1, 'implementer', 5, 0.5, 't'"))).toThrow(/FOREIGN KEY/);
    expect(() => db.exec(USAGE("'p', 'step-1', 1, 'implementer', -1, 0.5, 't'"))).toThrow(/CHECK/);
    expect(() => db.exec(USAGE("'p', 'step-1', 1, 'architect', 5, 0.5, 't'"))).toThrow(/CHECK/);
    expect(() => db.exec(USAGE("'p', 'step-1', 1, 'reviewer', 5, -0.5, 't'"))).toThrow(/CHECK/);
    db.close();
  });

  it('PostgreSQL: an older schema gains step_usage once under concurrent writers, the new checks hold', async () => {
    const db = await createTestDatabase('migledger');
    const schema = 'tug_migledger';
    const admin = await pgConnect(db.url);
    try {
      await pgAtVersion(admin, schema, BEFORE, STEP_ROW);
      const opened = await Promise.all([0, 1, 2].map(() => openStatePg(db.url, schema, 'write')));
      for (const o of opened) expect(o!.version).toBe(LATEST_SCHEMA_VERSION);
      await Promise.all(opened.map((o) => o!.close()));
      expect((await admin.query('SELECT version FROM schema_version')).rows).toEqual([
        { version: LATEST_SCHEMA_VERSION },
      ]);
      await admin.query(USAGE("'p', 'step-1', 1, 'implementer', 5, 0.5, 't'"));
      await expect(admin.query(USAGE("'p', 'nope', 1, 'implementer', 5, 0.5, 't'"))).rejects.toThrow(/foreign key/);
      for (const bad of [
        "'p', 'step-1', 1, 'implementer', -1, 0.5, 't'",
        "'p', 'step-1', 1, 'architect', 5, 0.5, 't'",
        "'p', 'step-1', 1, 'reviewer', 5, -0.5, 't'",
      ])
        await expect(admin.query(USAGE(bad)), bad).rejects.toThrow(/check constraint/);
    } finally {
      await admin.end();
    }
  });
});
