/** Consistency of a state.db after crashes: what no transaction may ever leave half-done. */
import Database from 'better-sqlite3';
import { expect } from 'vitest';

export function checkInvariants(dbPath: string): void {
  const db = new Database(dbPath);
  try {
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    expect(db.pragma('foreign_key_check')).toEqual([]);
    const q = <T>(sql: string) => db.prepare(sql).all() as T[];
    expect(
      q(`SELECT p.plan_path FROM plans p WHERE p.steps_total <> (SELECT COUNT(*) FROM steps s WHERE s.plan_path = p.plan_path AND s.parent_anchor IS NULL)
        OR p.steps_completed <> (SELECT COUNT(*) FROM steps s WHERE s.plan_path = p.plan_path AND s.parent_anchor IS NULL AND s.status = 'completed')`),
    ).toEqual([]);
    expect(
      q(`SELECT s.plan_path, s.anchor FROM steps s WHERE s.parent_anchor IS NULL AND s.unmet_deps <> (
        SELECT COUNT(*) FROM step_lifted_deps d JOIN steps t ON t.plan_path = d.plan_path AND t.anchor = d.depends_on
        WHERE d.plan_path = s.plan_path AND d.step_anchor = s.anchor AND t.status <> 'completed')`),
    ).toEqual([]);
    expect(
      q(`SELECT i.step_anchor, i.kind, i.ordinal FROM checklist_items i JOIN steps s ON s.plan_path = i.plan_path AND s.anchor = i.step_anchor
        WHERE s.status = 'completed' AND i.status NOT IN ('completed', 'deferred')`),
    ).toEqual([]);
    expect(
      q(
        `SELECT anchor FROM steps WHERE parent_anchor IS NULL AND status IN ('claimed', 'in_progress') AND (claimed_by IS NULL OR lease_expires_at IS NULL)`,
      ),
    ).toEqual([]);
    expect(
      q(
        `SELECT p.plan_path FROM plans p WHERE (p.status = 'done') <> (p.steps_total > 0 AND p.steps_completed = p.steps_total) AND p.status <> 'archived'`,
      ),
    ).toEqual([]);
    for (const r of q<{ details_json: string }>('SELECT details_json FROM events'))
      expect(() => JSON.parse(r.details_json)).not.toThrow();
  } finally {
    db.close();
  }
}
