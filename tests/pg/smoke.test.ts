import { describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createTestDatabase } from '../helpers/pg.js';
import { st } from '../state/cli-helpers.js';
import { addWorktree } from '../state/cli-helpers.js';
import { planRepo } from '../state/helpers.js';

describe('state on PostgreSQL (smoke)', () => {
  it('init, claim, start, complete', async () => {
    const db = await createTestDatabase();
    const root = planRepo();
    const w1 = addWorktree(root, 'one');
    const env = { TUGCODE_STATE_URL: db.url, TUGCODE_STATE_HOST: 'hosta' };
    const i = st(root, ['init', 'demo'], { env });
    expect(i.json.status, i.stdout + i.stderr).toBe('ok');
    expect(existsSync(join(root, '.tugtool', 'state.db'))).toBe(false);
    const c = st(root, ['claim', 'demo', '--worktree', w1], { env });
    expect(c.json, c.stdout + c.stderr).toMatchObject({ status: 'ok', claimed: true, step_anchor: 'step-0' });
    const s = st(root, ['show', 'demo'], { env });
    expect(s.stdout).not.toContain(db.server.password);
    expect(s.json.plans[0].steps[0].claimed_by).toBe(`hosta:${w1}`);
  });
});
