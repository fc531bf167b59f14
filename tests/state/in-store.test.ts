/** inStore (src/contract/errors.ts): messages naming "state.db" name another store; nothing else changes. */
import { describe, expect, it } from 'vitest';
import { inStore, TugError } from '../../src/contract/errors.js';

const PG = 'PostgreSQL schema tug_x (db.example:5432/tug)';

describe('inStore', () => {
  it('PlanNotInitialized names the store; code, exit code, details and hint are unchanged', () => {
    const e = new TugError('PlanNotInitialized', { plan_path: '.tugtool/tugplan-a.md' });
    expect(e.message).toBe('.tugtool/tugplan-a.md is not initialized in state.db');
    const r = inStore(e, PG) as TugError;
    expect(r).toBeInstanceOf(TugError);
    expect(r.message).toBe(`.tugtool/tugplan-a.md is not initialized in ${PG}`);
    expect(r.code).toBe(e.code);
    expect(r.exitCode).toBe(e.exitCode);
    expect(r.details).toEqual(e.details);
    expect(r.hint).toBe(e.hint);
    expect(Object.keys(r.toJSON())).toEqual(Object.keys(e.toJSON()));
  });

  it('a db_path already named is kept; without one, the store is named', () => {
    const named = new TugError('Busy', { db_path: 'postgres://u:***@h/d', timeout_ms: 5 });
    expect(inStore(named, PG)).toBe(named);
    const unnamed = new TugError('DatabaseError', { reason: 'boom' });
    expect((inStore(unnamed, PG) as TugError).message).toBe(`${PG}: boom`);
  });

  it('leaves alone errors that do not name state.db, messages of their own, and non-TugErrors', () => {
    const other = new TugError('StepNotFound', { plan_path: 'p', step_anchor: 's' });
    expect(inStore(other, PG)).toBe(other);
    const own = new TugError('PlanNotInitialized', { plan_path: 'p' }, { message: 'custom' });
    expect(inStore(own, PG)).toBe(own);
    const plain = new Error('x');
    expect(inStore(plain, PG)).toBe(plain);
  });
});
