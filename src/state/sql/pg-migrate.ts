/**
 * PostgreSQL's migration ladder (docs/state.md §8): `migrations/pg/000N_<name>.sql` holds schema version N,
 * the same numbers as SQLite's. Applied in the project's schema under a session advisory lock (class 3), each
 * step in its own transaction with the version row, so two processes migrating at once apply it once.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Pool } from 'pg';
import type { PgOptions } from './postgres.js';

export interface PgMigration {
  version: number;
  file: string;
}

/** `migrations/pg/000N_<name>.sql`: schema version N on PostgreSQL (the same numbers as SQLite's). */
function listPgMigrations(dir: string): PgMigration[] {
  const out: PgMigration[] = [];
  for (const f of readdirSync(dir)) {
    const m = /^(\d{4})_[a-z0-9_]+\.sql$/.exec(f);
    if (m) out.push({ version: Number(m[1]), file: join(dir, f) });
  }
  return out.sort((a, b) => a.version - b.version);
}

/** A double-quoted SQL identifier. */
export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** Create the schema if needed and bring it to `latest`; returns the version reached. */
export async function migrate(pool: Pool, o: PgOptions, latest: number): Promise<number> {
  const client = await pool.connect();
  const key = `tugcode:migrate:${o.schema}`;
  try {
    await client.query('SELECT pg_advisory_lock(3, hashtext($1))', [key]);
    try {
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(o.schema)}`);
      await client.query('CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)');
      const row = (await client.query('SELECT version FROM schema_version')).rows[0] as { version: number } | undefined;
      let version = row?.version ?? 0;
      for (const m of listPgMigrations(o.migrationsDir)) {
        if (m.version <= version || m.version > latest) continue;
        await client.query('BEGIN');
        try {
          await client.query(readFileSync(m.file, 'utf8'));
          await client.query('DELETE FROM schema_version');
          await client.query('INSERT INTO schema_version (version) VALUES ($1)', [m.version]);
          await client.query('COMMIT');
        } catch (e) {
          await client.query('ROLLBACK').catch(() => undefined);
          throw e;
        }
        version = m.version;
      }
      return version;
    } finally {
      await client.query('SELECT pg_advisory_unlock(3, hashtext($1))', [key]);
    }
  } finally {
    client.release();
  }
}
