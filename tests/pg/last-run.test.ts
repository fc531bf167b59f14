/**
 * The plan's last run on PostgreSQL (docs/state.md §2): the migration (`plans.last_run_flags`/
 * `last_run_ended_at`) brings a store one version older to the latest on both backends with its plan kept
 * and no run recorded; a run on PostgreSQL that ends records its flags there, doctor's failed-steps fix and
 * `status`/`state show` repeat them, and `state export` leaves them out (they are this clone's), so the
 * document imports into SQLite. Written against LAST_RUN_SCHEMA_VERSION.
 */
import Database from 'better-sqlite3';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LAST_RUN_SCHEMA_VERSION, LATEST_SCHEMA_VERSION } from '../../src/state/migrate.js';
import { openWrite } from '../../src/state/db.js';
import { createTestDatabase, openStatePg, pgConnect } from '../helpers/pg.js';
import { pgAtVersion, sqliteAtVersion } from '../helpers/old-schema.js';
import { tempDir } from '../helpers/repo.js';
import { implementerScript, planText, runJsonl, runRepo, step, tugJson } from '../run/helpers.js';

const BEFORE = LAST_RUN_SCHEMA_VERSION - 1;
const LAST = "SELECT plan_hash, last_run_flags, last_run_ended_at FROM plans WHERE plan_path = 'p'";
const NONE = { plan_hash: 'h', last_run_flags: null, last_run_ended_at: null };

describe('the last run migration', () => {
  it('SQLite: an older database gains the columns, its plan kept with no run recorded', () => {
    const path = sqliteAtVersion(BEFORE);
    const o = openWrite(path);
    expect(o.version).toBe(LATEST_SCHEMA_VERSION);
    o.raw.close();
    const db = new Database(path);
    expect(db.prepare(LAST).get()).toEqual(NONE);
    db.close();
  });

  it('PostgreSQL: an older schema gains the columns, its plan kept with no run recorded', async () => {
    const db = await createTestDatabase('miglastrun');
    const schema = 'tug_miglastrun';
    const admin = await pgConnect(db.url);
    try {
      await pgAtVersion(admin, schema, BEFORE);
      const opened = await openStatePg(db.url, schema, 'write');
      expect(opened!.version).toBe(LATEST_SCHEMA_VERSION);
      await opened!.close();
      expect((await admin.query(LAST)).rows).toEqual([NONE]);
    } finally {
      await admin.end();
    }
  });
});

describe('the last run on PostgreSQL', () => {
  it("a run that ended leaves its flags for doctor's fix, status and state show; export leaves them out", async () => {
    const db = await createTestDatabase('lastrun');
    const pgEnv = { TUGCODE_STATE_URL: db.url, TUGCODE_STATE_HOST: 'hosta' };
    const root = runRepo(planText([step(1, 'One'), step(2, 'Two', { deps: [1] })]), 'demo', {
      '.tugtool/config.toml': '[state]\nmax_attempts = 1\n',
    });
    const impl = implementerScript();
    const script = JSON.parse(impl.argv) as string;
    writeFileSync(join(impl.failDir, 'step-1'), '9');
    const r = runJsonl(root, ['demo', '--workers', '2', '--implementer', impl.argv], pgEnv);
    expect(r.code, r.stderr).toBe(4);
    const flags = ['--workers', '2', '--implementer', script];
    const command = `tugcode run .tugtool/tugplan-demo.md ${flags.join(' ')}`;
    const fix = tugJson(root, ['doctor'], pgEnv).json.checks.find((c: any) => c.name === 'failed-steps').fix;
    expect(fix.endsWith(` && ${command}`), fix).toBe(true);
    const last = tugJson(root, ['status', 'demo'], pgEnv).json.plans[0].last_run;
    expect(last).toMatchObject({ run_flags: flags, command, ended_at: expect.any(String) });
    expect(tugJson(root, ['state', 'show', 'demo'], pgEnv).json.plans[0].last_run).toEqual(last);

    // PostgreSQL → SQLite: the document is valid without them, and the SQLite store records no run.
    const file = join(tempDir('tugcode-export-'), 'demo.json');
    const e = tugJson(root, ['state', 'export', 'demo', '--output', file], pgEnv);
    expect(e.code, e.stderr).toBe(0);
    const sqlite = { TUGCODE_STATE_URL: '' };
    const i = tugJson(root, ['state', 'import', file], sqlite);
    expect(i.code, i.stderr).toBe(0);
    expect(tugJson(root, ['state', 'show', 'demo'], sqlite).json.plans[0].last_run).toBeNull();
  });
});
