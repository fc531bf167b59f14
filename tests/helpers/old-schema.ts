/**
 * A store as an older tugcode left it, built from the migration files themselves (docs/state.md §2): the
 * migration tests bring it to the latest version and check what the newer migrations kept and added. Each
 * holds one plan row, `p` (hash `h`).
 */
import Database from 'better-sqlite3';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type pg from 'pg';
import { listMigrations, migrationsDir } from '../../src/state/migrate.js';
import { tempDir } from './repo.js';

const PLAN_ROW = (source: string) =>
  `INSERT INTO plans (plan_path, plan_hash, plan_source, structure_hash, created_at, updated_at) VALUES ('p', 'h', ${source}, 's', 't', 't')`;

/** A state.db at schema `version` holding plan `p`, then `extra` (SQL); its path. */
export function sqliteAtVersion(version: number, extra = ''): string {
  const path = join(tempDir('tugcode-old-schema-'), 'state.db');
  const raw = new Database(path);
  for (const m of listMigrations().filter((m) => m.version <= version)) raw.exec(readFileSync(m.file, 'utf8'));
  raw.prepare('INSERT INTO schema_version (version) VALUES (?)').run(version);
  raw.exec(PLAN_ROW("x'00'"));
  if (extra) raw.exec(extra);
  raw.close();
  return path;
}

/** Schema `schema` of the connected database at `version` holding plan `p`, then `extra`; search_path set to it. */
export async function pgAtVersion(admin: pg.Client, schema: string, version: number, extra = ''): Promise<void> {
  await admin.query(`CREATE SCHEMA ${schema}; SET search_path TO ${schema}`);
  for (const m of listMigrations(`${migrationsDir()}/pg`).filter((m) => m.version <= version))
    await admin.query(readFileSync(m.file, 'utf8'));
  await admin.query(
    `CREATE TABLE schema_version (version INTEGER NOT NULL); INSERT INTO schema_version VALUES (${version})`,
  );
  await admin.query(PLAN_ROW("'\\x00'"));
  if (extra) await admin.query(extra);
}
