import Database from 'better-sqlite3';
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  LATEST_SCHEMA_VERSION,
  listMigrations,
  migrate,
  migrationsDir,
  readSchemaVersion,
} from '../../src/state/migrate.js';
import { openRead, openWrite } from '../../src/state/db.js';
import { ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/repo.js';

/** An old database built from the migration files themselves (never a hand-written fixture). */
function dbAtVersion(version: number, migrations = migrationsDir()): string {
  const path = join(tempDir('tugcode-mig-'), 'state.db');
  const db = new Database(path);
  for (const m of listMigrations(migrations).filter((m) => m.version <= version)) db.exec(readFileSync(m.file, 'utf8'));
  db.prepare('INSERT INTO schema_version (version) VALUES (?)').run(version);
  db.close();
  return path;
}

/** The test-only step above the real ladder. */
const TEST_STEP = LATEST_SCHEMA_VERSION + 1;

/** A ladder: the real migrations plus a test-only last one (a table rebuild with foreign keys off). */
function ladder(): string {
  const dir = tempDir('tugcode-ladder-');
  for (const f of readdirSync(migrationsDir()))
    if (f.endsWith('.sql')) copyFileSync(join(migrationsDir(), f), join(dir, f));
  writeFileSync(
    join(dir, `${String(TEST_STEP).padStart(4, '0')}_rebuild_artifacts.sql`),
    `-- tugcode:foreign_keys=off
CREATE TABLE step_artifacts_new (id INTEGER PRIMARY KEY AUTOINCREMENT, plan_path TEXT NOT NULL, step_anchor TEXT NOT NULL,
  kind TEXT NOT NULL, summary TEXT NOT NULL, content TEXT, recorded_at TEXT NOT NULL, tag TEXT,
  FOREIGN KEY (plan_path, step_anchor) REFERENCES steps(plan_path, anchor));
INSERT INTO step_artifacts_new (id, plan_path, step_anchor, kind, summary, content, recorded_at)
  SELECT id, plan_path, step_anchor, kind, summary, content, recorded_at FROM step_artifacts;
DROP TABLE step_artifacts;
ALTER TABLE step_artifacts_new RENAME TO step_artifacts;
`,
  );
  return dir;
}

describe('migrations', () => {
  it('ships one file per version, the newest being the version the code knows', () => {
    const files = listMigrations();
    expect(files.map((m) => m.version)).toEqual(files.map((_, i) => i + 1));
    expect(files[files.length - 1]!.version).toBe(LATEST_SCHEMA_VERSION);
  });

  it('creates a new database only when allowed, at the latest version', () => {
    const path = join(tempDir(), 'state.db');
    const o = openWrite(path, { create: true });
    expect(o.version).toBe(LATEST_SCHEMA_VERSION);
    expect(readSchemaVersion(o.raw)).toBe(LATEST_SCHEMA_VERSION);
    expect(o.raw.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(o.raw.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(o.raw.pragma('synchronous', { simple: true })).toBe(2);
    o.raw.close();
    const empty = join(tempDir(), 'state.db');
    new Database(empty).close();
    expect(() => openWrite(empty)).toThrow(expect.objectContaining({ code: 'DatabaseError' }));
  });

  it('upgrades an old database built from the old files step by step, once, with foreign keys checked', () => {
    const dir = ladder();
    const path = dbAtVersion(1, dir);
    const db = new Database(path);
    db.pragma('foreign_keys = ON');
    db.exec(
      "INSERT INTO plans (plan_path, plan_hash, plan_source, structure_hash, created_at, updated_at) VALUES ('p', 'h', x'00', 's', 't', 't')",
    );
    db.exec(
      "INSERT INTO steps (plan_path, anchor, top_anchor, step_id, step_index, title) VALUES ('p', 'step-1', 'step-1', '1', 0, 'x')",
    );
    db.exec(
      "INSERT INTO step_artifacts (plan_path, step_anchor, kind, summary, recorded_at) VALUES ('p', 'step-1', 'note', 'kept', 't')",
    );
    expect(migrate(db, { dbPath: path, allowCreate: false, dir, target: TEST_STEP })).toBe(TEST_STEP);
    expect(db.prepare('SELECT summary, tag FROM step_artifacts').all()).toEqual([{ summary: 'kept', tag: null }]);
    // Schema 2 rebuilt steps: the row is kept, and the new status and columns are there.
    expect(db.prepare('SELECT anchor, status, review_commit, touches FROM steps').all()).toEqual([
      { anchor: 'step-1', status: 'pending', review_commit: null, touches: null },
    ]);
    db.exec("UPDATE steps SET status = 'needs_human' WHERE anchor = 'step-1'");
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(migrate(db, { dbPath: path, allowCreate: false, dir, target: TEST_STEP })).toBe(TEST_STEP);
    expect(db.prepare('SELECT COUNT(*) AS n FROM schema_version').get()).toEqual({ n: 1 });
    db.close();
  });

  it('refuses to write a database from a newer tugcode, and reads it best-effort', () => {
    const path = dbAtVersion(1);
    const db = new Database(path);
    db.prepare('UPDATE schema_version SET version = 99').run();
    db.close();
    expect(() => openWrite(path)).toThrow(
      expect.objectContaining({ code: 'SchemaTooNew', details: expect.objectContaining({ found: 99 }) }),
    );
    const r = openRead(path)!;
    expect(r.version).toBe(99);
    r.raw.close();
  });

  it('reports a database without schema_version as DatabaseError', () => {
    const path = join(tempDir(), 'state.db');
    const db = new Database(path);
    db.exec('CREATE TABLE unrelated (x)');
    db.close();
    expect(() => openWrite(path)).toThrow(expect.objectContaining({ code: 'DatabaseError' }));
    expect(() => openRead(path)).toThrow(expect.objectContaining({ code: 'DatabaseError' }));
  });

  it('applies the schema exactly once when several processes create the database at the same moment', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'x'));
    const path = join(dir, 'x', 'state.db');
    const dbModule = pathToFileURL(join(ROOT, 'dist', 'state', 'db.js')).href;
    const script = `import { openWrite } from ${JSON.stringify(dbModule)}; const o = openWrite(${JSON.stringify(path)}, { create: true }); console.log(o.version); o.raw.close();`;
    const runs = Array.from(
      { length: 4 },
      () =>
        new Promise<{ code: number | null; out: string }>((resolve) => {
          const p = spawn(process.execPath, ['--input-type=module', '-e', script], {
            stdio: ['ignore', 'pipe', 'pipe'],
          });
          let out = '';
          p.stdout.on('data', (d) => (out += d));
          p.stderr.on('data', (d) => (out += d));
          p.on('close', (code) => resolve({ code, out }));
        }),
    );
    const results = await Promise.all(runs);
    for (const r of results) expect(r, r.out).toMatchObject({ code: 0, out: `${LATEST_SCHEMA_VERSION}\n` });
    const db = new Database(path, { readonly: true });
    expect(db.prepare('SELECT version FROM schema_version').all()).toEqual([{ version: LATEST_SCHEMA_VERSION }]);
    db.close();
  });

  it('waits for the WAL switch while another creator holds the write lock (SQLite answers that BUSY at once)', async () => {
    const dir = tempDir();
    const path = join(dir, 'state.db');
    // Another process in the middle of creating the file: a write transaction in rollback-journal mode.
    const other = new Database(path);
    other.exec('BEGIN IMMEDIATE');
    const dbModule = pathToFileURL(join(ROOT, 'dist', 'state', 'db.js')).href;
    // The child says so on stderr just before the (synchronous) open: after that its main thread sleeps only
    // in the pause between tries of the WAL switch (or SQLite's busy wait), which is the wait under test.
    const script = `import { openWrite } from ${JSON.stringify(dbModule)}; process.stderr.write('opening\\n'); const o = openWrite(${JSON.stringify(path)}, { create: true }); console.log(o.version); o.raw.close();`;
    let err = '';
    const p = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    const child = new Promise<{ code: number | null; out: string }>((resolve) => {
      let out = '';
      p.stdout.on('data', (d) => (out += d));
      p.stderr.on('data', (d) => (err += d));
      p.on('close', (code) => resolve({ code, out: out + err.replace(/^opening\n/, '') }));
    });
    const mainThreadState = () => {
      try {
        const stat = readFileSync(`/proc/${p.pid}/task/${p.pid}/stat`, 'utf8');
        return stat.slice(stat.lastIndexOf(')') + 2)[0];
      } catch {
        return null;
      }
    };
    for (const until = Date.now() + 30_000; !(err.startsWith('opening\n') && mainThreadState() === 'S');) {
      if (Date.now() > until || p.exitCode !== null) throw new Error(`the child never waited: ${err}`);
      await new Promise((r) => setTimeout(r, 5));
    }
    other.exec('COMMIT');
    other.close();
    const r = await child;
    expect(r, r.out).toMatchObject({ code: 0, out: `${LATEST_SCHEMA_VERSION}\n` });
  });
});
