/**
 * The review gate's state (docs/state.md §3.11) on both backends: `escalate` ends the owner's claim in
 * needs_human with the commit kept; dependents wait; `state decide` approves (the next claim carries the
 * kept commit), revises (the notes reach the next claim, the attempt's work is discarded) or rejects
 * (failed); a wrong caller or status is refused and changes nothing.
 */
import { describe, expect, it } from 'vitest';
import { OpsContext, newCall } from '../../src/ops/context.js';
import { stateClaim, stateDecide, stateInit, stateReset, stateUpdate } from '../../src/ops/state-write.js';
import { stateReady } from '../../src/ops/state-read.js';
import { BACKENDS, backend } from '../pg/backend.js';
import { addWorktree, stText } from './cli-helpers.js';
import { planRepo } from './helpers.js';

const SHA = 'a'.repeat(40);

describe.each(BACKENDS)('needs_human, escalate and decide [%s]', (kind) => {
  it('escalate keeps the work; approve, revise and reject each do what a person asked', async () => {
    const b = await backend(kind);
    const root = planRepo();
    const w = addWorktree(root, 'one');
    const ops = new OpsContext({ cwd: root, env: { ...process.env, ...b.env } });
    try {
      const call = newCall('escalate');
      await stateInit(ops, { plan: 'demo' }, call);
      const store = await ops.store(call);
      const sc = await ops.stateCall(call);
      const c = await stateClaim(ops, { plan: 'demo', worktree: w }, call);
      if (!c.claimed) throw new Error('nothing claimed');
      expect(c).toMatchObject({ human_decision: null, review_commit: null, human_notes: null });
      const owner = { plan: 'demo', step: c.step_anchor, worktree: w, attempt: c.attempt };
      await stateUpdate(ops, { ...owner, complete_remaining: true }, call);

      // A stale attempt cannot escalate; the holder can.
      await expect(
        store.escalate(sc, { ...owner, attempt: c.attempt + 1, review_commit: SHA, reason: 'x' }),
      ).rejects.toMatchObject({ code: 'AttemptMismatch' });
      expect(await store.escalate(sc, { ...owner, review_commit: SHA, reason: 'the reviewer is unsure' })).toEqual({
        step_anchor: 'step-0',
        status: 'needs_human',
        review_commit: SHA,
      });
      const ready = await stateReady(ops, { plan: 'demo' }, call);
      expect(ready.needs_human_steps).toEqual(['step-0']);
      expect(ready.ready_steps).not.toContain('step-0');
      // Its dependents wait, and nothing else is claimable in this plan (step-1 depends on step-0).
      const none = await stateClaim(ops, { plan: 'demo', worktree: w }, call);
      expect(none).toMatchObject({ claimed: false, needs_human_steps: ['step-0'] });

      const show = stText(root, ['show', 'demo'], { env: b.env });
      expect(show.stdout).toContain('needs_human');
      expect(show.stdout).toContain('tugcode state decide .tugtool/tugplan-demo.md step-0 --approve');

      // Approve: pending again with the kept commit, the attempt's items kept; the next claim carries it.
      const ap = await stateDecide(ops, { plan: 'demo', step: 'step-0', approve: true }, newCall('state decide'));
      expect(ap).toMatchObject({ decision: 'approve', step_status: 'pending', review_commit: SHA });
      const c2 = await stateClaim(ops, { plan: 'demo', worktree: w }, call);
      expect(c2).toMatchObject({
        claimed: true,
        step_anchor: 'step-0',
        human_decision: 'approved',
        review_commit: SHA,
      });
      if (!c2.claimed) throw new Error('unreachable');
      // A human's approval outlives a run that stops (release), not a failed attempt.
      await store.release(sc, { plan: 'demo', step: 'step-0', worktree: w, attempt: c2.attempt });
      const c3 = await stateClaim(ops, { plan: 'demo', worktree: w }, call);
      expect(c3).toMatchObject({ human_decision: 'approved' });
      if (!c3.claimed) throw new Error('unreachable');

      // Revise: escalate again, then the notes reach the next claim and the attempt's work is gone.
      await store.escalate(sc, {
        plan: 'demo',
        step: 'step-0',
        worktree: w,
        attempt: c3.attempt,
        review_commit: SHA,
        reason: 'again',
      });
      await expect(
        stateDecide(ops, { plan: 'demo', step: 'step-0', approve: true, reject: 'no' }, newCall('state decide')),
      ).rejects.toMatchObject({ code: 'InvalidArgument' });
      const rv = await stateDecide(
        ops,
        { plan: 'demo', step: 'step-0', revise: 'use the helper in util/' },
        newCall('state decide'),
      );
      expect(rv).toMatchObject({ decision: 'revise', step_status: 'pending', review_commit: null });
      const c4 = await stateClaim(ops, { plan: 'demo', worktree: w }, call);
      expect(c4).toMatchObject({ human_decision: null, review_commit: null, human_notes: 'use the helper in util/' });
      if (!c4.claimed) throw new Error('unreachable');

      // Reject: failed with the reason; deciding a step that does not need a human is refused.
      await store.escalate(sc, {
        plan: 'demo',
        step: 'step-0',
        worktree: w,
        attempt: c4.attempt,
        review_commit: SHA,
        reason: 'third',
      });
      const rj = await stateDecide(
        ops,
        { plan: 'demo', step: 'step-0', reject: 'wrong approach' },
        newCall('state decide'),
      );
      expect(rj).toMatchObject({ decision: 'reject', step_status: 'failed' });
      await expect(
        stateDecide(ops, { plan: 'demo', step: 'step-0', approve: true }, newCall('state decide')),
      ).rejects.toMatchObject({ code: 'InvalidTransition' });
      // Reset clears every trace of the review: notes included.
      await stateReset(ops, { plan: 'demo', step: 'step-0' }, newCall('state reset'));
      const c5 = await stateClaim(ops, { plan: 'demo', worktree: w }, call);
      expect(c5).toMatchObject({ human_decision: null, review_commit: null, human_notes: null });

      const log = stText(root, ['log', 'demo'], { env: b.env });
      expect(log.stdout).toContain('needs human');
      expect(log.stdout).toContain('decide');
    } finally {
      await ops.close();
    }
  });

  it('state decide through the CLI: one decision, its envelope, and a refusal that changes nothing', async () => {
    const b = await backend(kind);
    const root = planRepo();
    const t = b.session(root);
    expect(t.st(['init', 'demo']).json.status).toBe('ok');
    await t.refused(['decide', 'demo', 'step-0', '--approve'], 'InvalidTransition', 4);
    await t.refused(['decide', 'demo', 'step-0'], 'InvalidArgument', 2);
    await t.refused(['decide', 'demo', 'step-0', '--approve', '--reject', 'x'], 'InvalidArgument', 2);
  });
});
