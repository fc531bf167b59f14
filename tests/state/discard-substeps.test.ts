/**
 * Substeps of a discarded attempt (docs/state.md): `release`, `fail` and `reset` take back every
 * substep completed without a recorded commit (auto-completed inside the attempt, its work never
 * integrated), so the next attempt can start it again; `reset` also heals a pending step left with such a
 * substep by an older tugcode.
 */
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { init } from '../../src/state/init.js';
import { claim } from '../../src/state/claim.js';
import { start } from '../../src/state/start.js';
import { update } from '../../src/state/update.js';
import { fail, release } from '../../src/state/release.js';
import { reset } from '../../src/state/reset.js';
import { dbPathOf, fakeWorktrees, planRepo, sql, withCtx } from './helpers.js';

let W1 = '';
const RESET_EVENTS = "SELECT details_json FROM events WHERE json_extract(details_json, '$.reset') = 1";

async function setup() {
  const root = planRepo();
  await withCtx(root, {}, (ctx) => init(ctx, { plan: 'demo' }));
  [W1] = fakeWorktrees(root, 1) as [string];
  return root;
}

/** step-0 done; step-1 claimed by W1 at attempt 2 with step-1-1 auto-completed (no commit). */
async function halfDone(root: string) {
  await withCtx(root, {}, async (ctx) => {
    await claim(ctx, { plan: 'demo', worktree: W1 });
    await update(ctx, { plan: 'demo', step: 'step-0', worktree: W1, complete_remaining: true });
    const { complete } = await import('../../src/state/complete.js');
    await complete(ctx, { plan: 'demo', step: 'step-0', worktree: W1 });
    await claim(ctx, { plan: 'demo', worktree: W1 });
    await start(ctx, { plan: 'demo', step: 'step-1', worktree: W1 });
    const u = await update(ctx, { plan: 'demo', step: 'step-1-1', worktree: W1, complete_remaining: true });
    expect(u.auto_completed_steps).toEqual(['step-1-1']);
  });
}

const subs = (root: string) =>
  sql<{ anchor: string; status: string }>(
    root,
    "SELECT anchor, status FROM steps WHERE parent_anchor = 'step-1' ORDER BY step_index",
  );
const openItems = (root: string) =>
  sql<{ n: number }>(
    root,
    "SELECT count(*) AS n FROM checklist_items WHERE step_anchor = 'step-1-1' AND status = 'open'",
  )[0]!.n;

describe('a discarded attempt takes back the substeps it completed', () => {
  for (const how of ['release', 'fail', 'reset --force'] as const) {
    it(`${how}: a substep completed without a commit goes back to pending, and the next attempt starts it`, async () => {
      const root = await setup();
      await halfDone(root);
      await withCtx(root, {}, async (ctx) => {
        if (how === 'release') await release(ctx, { plan: 'demo', step: 'step-1', worktree: W1 });
        else if (how === 'fail') await fail(ctx, { plan: 'demo', step: 'step-1', worktree: W1, reason: 'boom' });
        else await reset(ctx, { plan: 'demo', step: 'step-1', force: true });
      });
      expect(subs(root)).toEqual([
        { anchor: 'step-1-1', status: 'pending' },
        { anchor: 'step-1-2', status: 'pending' },
      ]);
      expect(openItems(root)).toBe(3);
      const row = sql<{ completed_at: string | null; completed_via: string | null }>(
        root,
        "SELECT completed_at, completed_via FROM steps WHERE anchor = 'step-1-1'",
      )[0];
      expect(row).toEqual({ completed_at: null, completed_via: null });
      // The next attempt starts the substep again (it was refused before: InvalidTransition).
      await withCtx(root, {}, async (ctx) => {
        const c = await claim(ctx, { plan: 'demo', worktree: W1 });
        expect(c).toMatchObject({ claimed: true, step_anchor: 'step-1' });
        const s = await start(ctx, { plan: 'demo', step: 'step-1-1', worktree: W1 });
        expect(s.started).toBe(true);
      });
    });
  }

  it('reset of a pending step heals a substep an older tugcode left completed without a commit', async () => {
    const root = await setup();
    await halfDone(root);
    // The state an older tugcode left after discarding the attempt: step pending, step-1-1 still completed.
    const db = new Database(dbPathOf(root));
    db.prepare(
      "UPDATE steps SET status = 'pending', claimed_by = NULL, claimed_at = NULL, lease_expires_at = NULL, heartbeat_at = NULL, started_at = NULL WHERE anchor = 'step-1'",
    ).run();
    db.close();
    expect(subs(root)[0]).toEqual({ anchor: 'step-1-1', status: 'completed' });
    const r = await withCtx(root, {}, (ctx) => reset(ctx, { plan: 'demo', step: 'step-1' }));
    expect(r).toMatchObject({ reset: true, previous_status: 'pending' });
    expect(subs(root)[0]).toEqual({ anchor: 'step-1-1', status: 'pending' });
    expect(openItems(root)).toBe(3);
    const ev = sql<{ details_json: string }>(root, RESET_EVENTS);
    expect(JSON.parse(ev.at(-1)!.details_json)).toMatchObject({ substeps_reopened: ['step-1-1'] });
    // Nothing left to heal: a second reset of the pending step records nothing.
    await withCtx(root, {}, (ctx) => reset(ctx, { plan: 'demo', step: 'step-1' }));
    expect(sql(root, RESET_EVENTS)).toHaveLength(1);
  });
});
