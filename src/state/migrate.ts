/**
 * The migration ladder (docs/state.md §2). `migrations/000N_<name>.sql` holds schema version N. On open for
 * writing, every migration above the current version runs in its own IMMEDIATE transaction together with
 * the version bump; the transaction re-reads `schema_version` first, so two processes opening an old DB at
 * once never apply a migration twice. A migration whose first line is `-- tugcode:foreign_keys=off`
 * (a table rebuild) runs with foreign keys off (set outside the transaction, as SQLite requires) and
 * `PRAGMA foreign_key_check` inside it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { TugError } from '../contract/errors.js';

type Db = BetterSqlite3.Database;

/** The newest schema this code knows; a test checks it equals the newest file in migrations/. */
export const LATEST_SCHEMA_VERSION = 5;
/** The version that added the ledger's `step_usage` table (docs/state.md §2): readers of older stores sum nothing. */
export const USAGE_SCHEMA_VERSION = 3;
/** The version that added the plan's recorded integration target (docs/state.md §8.4): older stores have none. */
export const INTEGRATION_TARGET_SCHEMA_VERSION = 4;
/** The version that added the plan's last run's flags (docs/state.md §2): older stores remember none. */
export const LAST_RUN_SCHEMA_VERSION = 5;

/** `migrations/` ships in the package: dist/state/migrate.js (or src/state/migrate.ts) → ../../migrations. */
export function migrationsDir(): string {
  // URL arithmetic instead of node:url's fileURLToPath: one module fewer on every command's startup.
  return decodeURIComponent(new URL('../../migrations', import.meta.url).pathname);
}

export interface Migration {
  version: number;
  name: string;
  file: string;
}

export function listMigrations(dir: string = migrationsDir()): Migration[] {
  const out: Migration[] = [];
  for (const f of readdirSync(dir)) {
    const m = /^(\d{4})_([a-z0-9_]+)\.sql$/.exec(f);
    if (m) out.push({ version: Number(m[1]), name: m[2]!, file: join(dir, f) });
  }
  out.sort((a, b) => a.version - b.version);
  out.forEach((m, i) => {
    if (m.version !== i + 1)
      throw new TugError('InternalError', { reason: `migrations are not numbered 1..n: ${m.file}` });
  });
  return out;
}

/**
 * The version row, or null when the table does not exist. A table that exists but holds no positive
 * integer version (empty, 0, text, several rows) is damaged: DatabaseError, never a migration from 0.
 */
export function readSchemaVersion(db: Db, dbPath = db.name): number | null {
  const hasTable = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'").get();
  if (!hasTable) return null;
  const rows = db.prepare('SELECT version AS v FROM schema_version').all() as { v: unknown }[];
  const v = rows.length === 1 ? rows[0]!.v : undefined;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1) {
    throw new TugError('DatabaseError', {
      db_path: dbPath,
      reason: `schema_version is damaged: expected one positive integer row, found ${JSON.stringify(rows.map((r) => r.v))}`,
    });
  }
  return v;
}

function tableCount(db: Db): number {
  return (db.prepare("SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'table'").get() as { n: number }).n;
}

/**
 * The schema version of a tugcode database, null for an empty one `allowCreate` may fill; anything else
 * (another program's tables, an empty file a non-creator opened) is a DatabaseError. Only reads: a writer
 * calls it before its first write (the WAL switch), so a database that is not ours is never changed.
 */
export function assertTugcodeDb(db: Db, opts: { dbPath: string; allowCreate: boolean }): number | null {
  // Both reads in one read transaction (one snapshot): as two separate reads, a creator committing 0001
  // between them made the version "missing" and the tables "present", refused as not a tugcode database.
  const [current, tables] = db.transaction(() => [readSchemaVersion(db, opts.dbPath), tableCount(db)] as const)();
  if (current === null && tables > 0) {
    throw new TugError('DatabaseError', {
      db_path: opts.dbPath,
      reason: 'no schema_version table: not a tugcode state database',
    });
  }
  if (current === null && !opts.allowCreate) {
    throw new TugError('DatabaseError', { db_path: opts.dbPath, reason: 'empty database without schema_version' });
  }
  return current;
}

/**
 * Bring the DB to `target` (default LATEST_SCHEMA_VERSION; tests pass their own ladder). An empty DB is created from 0001 only when `allowCreate`
 * (state init); a DB with tables but no `schema_version` is a DatabaseError; a newer one is SchemaTooNew.
 * Returns the resulting version.
 */
export function migrate(
  db: Db,
  opts: { dbPath: string; allowCreate: boolean; dir?: string | undefined; target?: number },
): number {
  const target = opts.target ?? LATEST_SCHEMA_VERSION;
  const current = assertTugcodeDb(db, opts);
  if (current !== null && current > target) {
    throw new TugError('SchemaTooNew', { db_path: opts.dbPath, found: current, supported: target });
  }
  if (current !== null && current >= target) return current;
  let version = current ?? 0;
  for (const m of listMigrations(opts.dir)) {
    if (m.version <= version || m.version > target) continue;
    const sql = readFileSync(m.file, 'utf8');
    const fkOff = /^--\s*tugcode:foreign_keys=off/.test(sql);
    if (fkOff) db.pragma('foreign_keys = OFF');
    try {
      db.transaction(() => {
        // Re-read inside the lock: another process may have applied this step meanwhile.
        const now = readSchemaVersion(db, opts.dbPath) ?? 0;
        if (now >= m.version) return;
        db.exec(sql);
        if (fkOff) {
          const bad = db.pragma('foreign_key_check') as unknown[];
          if (bad.length > 0) {
            throw new TugError('DatabaseError', {
              db_path: opts.dbPath,
              reason: `migration ${m.version} broke ${bad.length} foreign key(s)`,
            });
          }
        }
        db.prepare('DELETE FROM schema_version').run();
        db.prepare('INSERT INTO schema_version (version) VALUES (?)').run(m.version);
      }).immediate();
    } finally {
      if (fkOff) db.pragma('foreign_keys = ON');
    }
    version = readSchemaVersion(db, opts.dbPath) ?? version;
  }
  return version;
}
