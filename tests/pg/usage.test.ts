/**
 * The ledger on PostgreSQL (docs/state.md §2, §8): a run with the fake claude records its usage there, the
 * totals per step and plan are the same as on SQLite, a budget counts the plan's spend in PostgreSQL, and
 * `state export` from PostgreSQL → `state import` into SQLite keeps the usage.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../helpers/pg.js';
import { tempDir } from '../helpers/repo.js';
import { claudeUsageOf, fakeAgents, totalsOf } from '../run/fake-agents.js';
import { planText, runJsonl, runRepo, step, tugJson } from '../run/helpers.js';

describe('the ledger on PostgreSQL', () => {
  it('records, sums, budgets and exports usage like SQLite', async () => {
    const db = await createTestDatabase('usage');
    const pgEnv = { TUGCODE_STATE_URL: db.url, TUGCODE_STATE_HOST: 'hosta' };
    const root = runRepo(planText([step(1, 'One'), step(2, 'Two', { deps: [1] }), step(3, 'Three', { deps: [2] })]));
    const f = fakeAgents();
    const r = runJsonl(root, ['demo', '--workers', '1', '--agent', 'claude', '--budget-usd', '0.5'], {
      ...f.env,
      ...pgEnv,
    });
    // step-1 (0.25) and step-2 (0.5): 0.75 ≥ 0.5 after step-2; step-3 is never claimed.
    expect(r.code, r.stderr).toBe(4);
    expect(r.events.at(-1)).toMatchObject({
      steps_completed: ['step-1', 'step-2'],
      error: { code: 'BudgetExhausted' },
    });
    const want = [1, 2].map((n) => claudeUsageOf(n));
    const show = tugJson(root, ['state', 'show', 'demo'], pgEnv).json.plans[0];
    expect(show.usage).toEqual(totalsOf(want));
    expect(show.steps.map((s: any) => s.usage)).toEqual([totalsOf([want[0]!]), totalsOf([want[1]!]), null]);
    expect(tugJson(root, ['status', 'demo'], pgEnv).json.plans[0].usage).toEqual(totalsOf(want));

    // PostgreSQL → SQLite: the usage comes along.
    const file = join(tempDir('tugcode-export-'), 'demo.json');
    const e = tugJson(root, ['state', 'export', 'demo', '--output', file], pgEnv);
    expect(e.json, e.stderr).toMatchObject({ counts: { step_usage: 2 } });
    const sqlite = { TUGCODE_STATE_URL: '' };
    const i = tugJson(root, ['state', 'import', file], sqlite);
    expect(i.json, i.stderr).toMatchObject({ imported: { step_usage: 2 } });
    expect(tugJson(root, ['state', 'show', 'demo'], sqlite).json.plans[0].usage).toEqual(totalsOf(want));
  });
});
