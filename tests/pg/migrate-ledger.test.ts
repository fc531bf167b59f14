/**
 * The ledger's migration (`step_usage`, docs/state.md §2) on both backends: a store one version older,
 * built from the migration files themselves and holding rows, is brought to the latest version with its
 * rows kept; the new table refuses a row of an unknown step, a negative count and an unknown role. Written
 * against USAGE_SCHEMA_VERSION, so it holds wherever the ledger sits on the ladder.
 */
import Database from 'better-sqlite3';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LATEST_SCHEMA_VERSION, listMigrations, migrationsDir, USAGE_SCHEMA_VERSION } from '../../src/state/migrate.js';
import { openWrite } from '../../src/state/db.js';
import { createTestDatabase, openStatePg, pgConnect } from '../helpers/pg.js';
import { tempDir } from '../helpers/repo.js';

const BEFORE = USAGE_SCHEMA_VERSION - 1;
const PLAN_ROW =
  "INSERT INTO plans (plan_path, plan_hash, plan_source, structure_hash, created_at, updated_at) VALUES ('p', 'h', %SRC%, 's', 't', 't')";
const STEP_ROW =
  "INSERT INTO steps (plan_path, anchor, top_anchor, step_id, step_index, title) VALUES ('p', 'step-1', 'step-1', '1', 0, 'x')";
const USAGE = (values: string) =>
  `INSERT INTO step_usage (plan_path, step_anchor, attempt, role, output_tokens, cost_usd, recorded_at) VALUES (${values})`;

describe('the ledger migration', () => {
  it('SQLite: an older database gains step_usage, its rows kept, the new checks hold', () => {
    const path = join(tempDir('tugcode-mig-ledger-'), 'state.db');
    const raw = new Database(path);
    for (const m of listMigrations().filter((m) => m.version <= BEFORE)) raw.exec(readFileSync(m.file, 'utf8'));
    raw.prepare('INSERT INTO schema_version (version) VALUES (?)').run(BEFORE);
    raw.exec(PLAN_ROW.replace('%SRC%', "x'00'"));
    raw.exec(STEP_ROW);
    raw.close();
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
      await admin.query(`CREATE SCHEMA ${schema}; SET search_path TO ${schema}`);
      for (let v = 1; v <= BEFORE; v++) {
        const file = listMigrations(`${migrationsDir()}/pg`).find((m) => m.version === v)!.file;
        await admin.query(readFileSync(file, 'utf8'));
      }
      await admin.query(
        `CREATE TABLE schema_version (version INTEGER NOT NULL); INSERT INTO schema_version VALUES (${BEFORE})`,
      );
      await admin.query(`${PLAN_ROW.replace('%SRC%', "'\\x00'")}; ${STEP_ROW}`);
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
