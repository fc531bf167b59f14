import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../helpers/pg.js';
import { addWorktree, st } from '../state/cli-helpers.js';
import { planRepo } from '../state/helpers.js';

describe('state complete on PostgreSQL', () => {
  // The guarded UPDATE once used its owner parameter first in `@owner IS NULL`, whose type PostgreSQL cannot infer
  // (42P08): every completion failed with DatabaseError.
  it('completes a claimed step, strict and forced', async () => {
    const db = await createTestDatabase();
    const root = planRepo();
    const w1 = addWorktree(root, 'one');
    const env = { TUGCODE_STATE_URL: db.url, TUGCODE_STATE_HOST: 'hosta' };
    expect(st(root, ['init', 'demo'], { env }).json.status).toBe('ok');
    const c = st(root, ['claim', 'demo', '--worktree', w1], { env });
    expect(c.json, c.stdout + c.stderr).toMatchObject({ claimed: true, step_anchor: 'step-0' });
    const f = st(root, ['complete', 'demo', 'step-0', '--worktree', w1, '--force', 'bench'], { env });
    expect(f.json, f.stdout + f.stderr).toMatchObject({ status: 'ok', completed: true, completed_via: 'force' });
    const c2 = st(root, ['claim', 'demo', '--worktree', w1], { env });
    expect(c2.json, c2.stdout + c2.stderr).toMatchObject({ claimed: true });
    const anchor = c2.json.step_anchor as string;
    const u = st(root, ['update', 'demo', anchor, '--worktree', w1, '--complete-remaining'], { env });
    expect(u.json.status, u.stdout + u.stderr).toBe('ok');
    const s = st(root, ['complete', 'demo', anchor, '--worktree', w1], { env });
    expect(s.json, s.stdout + s.stderr).toMatchObject({ status: 'ok', completed: true, completed_via: 'complete' });
  });
});
