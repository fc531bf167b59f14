/**
 * The store's named question `previousFailures` (what the step brief lists as earlier failed attempts), on
 * both backends: the failed attempts of a step, oldest first, with the reasons `state fail` recorded; none
 * for a step that never failed.
 */
import { describe, expect, it } from 'vitest';
import { OpsContext, newCall } from '../../src/ops/context.js';
import { stateClaim, stateFail, stateInit } from '../../src/ops/state-write.js';
import { BACKENDS, backend } from '../pg/backend.js';
import { addWorktree } from './cli-helpers.js';
import { planRepo } from './helpers.js';

describe.each(BACKENDS)('previous failures [%s]', (kind) => {
  it("lists a step's failed attempts oldest first, with their reasons", async () => {
    const b = await backend(kind);
    const root = planRepo();
    const w = addWorktree(root, 'one');
    const ops = new OpsContext({ cwd: root, env: { ...process.env, ...b.env } });
    try {
      const call = newCall('state fail');
      await stateInit(ops, { plan: 'demo' }, call);
      const steps: string[] = [];
      for (const reason of ['red 1', 'red 2']) {
        const c = await stateClaim(ops, { plan: 'demo', worktree: w }, call);
        if (!c.claimed) throw new Error('nothing claimed');
        steps.push(c.step_anchor);
        await stateFail(ops, { plan: 'demo', step: c.step_anchor, worktree: w, attempt: c.attempt, reason }, call);
      }
      expect(steps).toEqual(['step-0', 'step-0']);
      const store = await ops.store(call);
      const sc = await ops.stateCall(call);
      expect(await store.previousFailures(sc, { plan: 'demo', step: 'step-0' })).toEqual([
        { attempt: 1, reason: 'red 1' },
        { attempt: 2, reason: 'red 2' },
      ]);
      expect(await store.previousFailures(sc, { plan: 'demo', step: '#step-1' })).toEqual([]);
      await expect(store.previousFailures(sc, { plan: 'nope', step: 'step-0' })).rejects.toMatchObject({
        code: 'PlanNotFound',
      });
    } finally {
      await ops.close();
    }
  });
});
