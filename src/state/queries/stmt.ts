/** Prepared-statement cache per connection: each SQL text is compiled once per process. */
import type BetterSqlite3 from 'better-sqlite3';

export type Db = BetterSqlite3.Database;
type Statement = BetterSqlite3.Statement;

const cache = new WeakMap<Db, Map<string, Statement>>();

export function stmt(db: Db, sql: string): Statement {
  let m = cache.get(db);
  if (!m) {
    m = new Map();
    cache.set(db, m);
  }
  let s = m.get(sql);
  if (!s) {
    s = db.prepare(sql);
    m.set(sql, s);
  }
  return s;
}
