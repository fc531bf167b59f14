import { describe, expect, it } from 'vitest';
import { init } from '../../src/state/init.js';
import { claim, type ClaimedResult, type NotClaimedResult } from '../../src/state/claim.js';
import { start } from '../../src/state/start.js';
import { update } from '../../src/state/update.js';
import { complete } from '../../src/state/complete.js';
import { heartbeat } from '../../src/state/heartbeat.js';
import { git } from '../helpers/repo.js';
import { DEMO_PATH, T0, at, chainPlan, fakeWorktrees, planRepo, planText, sql, withCtx } from './helpers.js';

let W1 = '';
let W2 = '';
let W3 = '';

async function setup(plan?: string) {
  const root = planRepo(plan === undefined ? undefined : { [DEMO_PATH]: plan });
  await withCtx(root, {}, (ctx) => init(ctx, { plan: 'demo' }));
  [W1, W2, W3] = fakeWorktrees(root, 3) as [string, string, string];
  return root;
}

const claimAt = (
  root: string,
  now: string,
  worktree: string,
  extra: Record<string, unknown> = {},
  o: { maxAttempts?: number } = {},
) => withCtx(root, { now, ...o }, (ctx) => claim(ctx, { plan: 'demo', worktree, ...extra }));

describe('state claim', () => {
  it('claims ready top-level steps in step_index order, never a substep', async () => {
    const root = await setup();
    const a = (await claimAt(root, T0, W1)) as ClaimedResult;
    expect(a).toMatchObject({
      claimed: true,
      step_anchor: 'step-0',
      attempt: 1,
      failures: 0,
      resumed: false,
      reclaimed_from_expired: false,
    });
    expect(a.total_remaining).toBe(3);
    expect(a.remaining_ready).toBe(0);
    expect(a.lease_expires_at).toBe(at(7200));
    const b = (await claimAt(root, T0, W2)) as NotClaimedResult;
    expect(b).toEqual({
      claimed: false,
      reason: 'no_ready_steps',
      all_completed: false,
      blocked_steps: ['step-1', 'step-2'],
      failed_steps: [],
      needs_human_steps: [],
      claimed_steps: ['step-0'],
    });
  });

  it('gives the caller its own claim back instead of a second step, with the lease renewed', async () => {
    const root = await setup(chainPlan(3, 5));
    const first = (await claimAt(root, T0, W1)) as ClaimedResult;
    const again = (await claimAt(root, at(60), W1)) as ClaimedResult;
    expect(again).toMatchObject({
      claimed: true,
      step_anchor: first.step_anchor,
      attempt: 1,
      resumed: true,
      lease_expires_at: at(60 + 7200),
    });
    // An expired own claim is resumed as well.
    const late = (await claimAt(root, at(99999), W1)) as ClaimedResult;
    expect(late).toMatchObject({ step_anchor: first.step_anchor, resumed: true, attempt: 1 });
  });

  it('treats a lease that expires exactly now as live', async () => {
    const root = await setup();
    await claimAt(root, T0, W1, { lease_seconds: 60 });
    const r = (await claimAt(root, at(60), W2)) as NotClaimedResult;
    expect(r.claimed).toBe(false);
    expect(r.claimed_steps).toEqual(['step-0']);
  });

  it("takes over an expired claim of another worktree and reopens exactly that attempt's items", async () => {
    const root = await setup();
    await claimAt(root, T0, W1);
    await withCtx(root, {}, async (ctx) => {
      await update(ctx, {
        plan: 'demo',
        step: 'step-0',
        worktree: W1,
        items: [
          { kind: 'task', ordinal: 0, status: 'completed' },
          { kind: 'test', ordinal: 0, status: 'deferred', reason: 'flaky' },
        ],
      });
      await update(ctx, {
        plan: 'demo',
        step: 'step-0',
        worktree: W1,
        items: [{ kind: 'task', ordinal: 1, status: 'in_progress' }],
      });
    });
    const r = (await claimAt(root, at(7201), W2)) as ClaimedResult;
    expect(r).toMatchObject({
      claimed: true,
      step_anchor: 'step-0',
      reclaimed_from_expired: true,
      previous_owner: W1,
      attempt: 2,
      failures: 1,
    });
    const items = sql<{ kind: string; ordinal: number; status: string; reason: string | null }>(
      root,
      "SELECT kind, ordinal, status, reason FROM checklist_items WHERE step_anchor = 'step-0' ORDER BY id",
    );
    expect(items.every((i) => i.status === 'open' && i.reason === null)).toBe(true);
    const ev = sql<{ command: string; details_json: string }>(
      root,
      "SELECT command, details_json FROM events WHERE command = 'takeover'",
    );
    expect(ev).toHaveLength(1);
    const details = JSON.parse(ev[0]!.details_json);
    expect(details.previous_owner).toBe(W1);
    expect(details.items_reopened).toEqual([
      { step_anchor: 'step-0', kind: 'task', ordinal: 0, previous_status: 'completed' },
      { step_anchor: 'step-0', kind: 'task', ordinal: 1, previous_status: 'in_progress' },
      { step_anchor: 'step-0', kind: 'test', ordinal: 0, previous_status: 'deferred' },
    ]);
  });

  it('keeps completed substeps with a recorded commit on takeover, and returns the others to pending', async () => {
    // The rule of docs/state.md §3.5: step-1-1's commit is recorded, so
    // it stays completed; step-1-2 auto-completed inside the attempt without a commit, so it goes back.
    const root = await setup();
    await withCtx(root, {}, async (ctx) => {
      await claim(ctx, { plan: 'demo', worktree: W1 });
      await update(ctx, { plan: 'demo', step: 'step-0', worktree: W1, complete_remaining: true });
      await complete(ctx, { plan: 'demo', step: 'step-0', worktree: W1 });
      await claim(ctx, { plan: 'demo', worktree: W1 });
      await update(ctx, { plan: 'demo', step: 'step-1-1', worktree: W1, complete_remaining: true });
      await complete(ctx, { plan: 'demo', step: 'step-1-1', worktree: W1, commit: 'a'.repeat(40) });
      await update(ctx, { plan: 'demo', step: 'step-1-2', worktree: W1, complete_remaining: true });
      await update(ctx, {
        plan: 'demo',
        step: 'step-1',
        worktree: W1,
        items: [{ kind: 'task', ordinal: 2, status: 'completed' }],
      });
    });
    const r = (await claimAt(root, at(8000), W2)) as ClaimedResult;
    expect(r).toMatchObject({ step_anchor: 'step-1', reclaimed_from_expired: true, previous_owner: W1 });
    const steps = sql<{ anchor: string; status: string; completed_via: string | null }>(
      root,
      "SELECT anchor, status, completed_via FROM steps WHERE top_anchor = 'step-1' ORDER BY step_index",
    );
    expect(steps).toEqual([
      { anchor: 'step-1', status: 'claimed', completed_via: null },
      { anchor: 'step-1-1', status: 'completed', completed_via: 'complete' },
      { anchor: 'step-1-2', status: 'pending', completed_via: null },
    ]);
    const reopened = sql<{ step_anchor: string; kind: string; ordinal: number; status: string }>(
      root,
      "SELECT step_anchor, kind, ordinal, status FROM checklist_items WHERE step_anchor LIKE 'step-1%' AND status <> 'open' ORDER BY id",
    );
    expect(reopened).toEqual([
      { step_anchor: 'step-1-1', kind: 'task', ordinal: 0, status: 'completed' },
      { step_anchor: 'step-1-1', kind: 'task', ordinal: 1, status: 'completed' },
      { step_anchor: 'step-1-1', kind: 'test', ordinal: 0, status: 'completed' },
    ]);
    const ev = sql<{ details_json: string }>(root, "SELECT details_json FROM events WHERE command = 'takeover'");
    expect(JSON.parse(ev[0]!.details_json)).toMatchObject({ substeps_reopened: ['step-1-2'] });
  });

  it('lets the owner keep working after expiry until someone else claims, and a heartbeat revives the lease', async () => {
    const root = await setup();
    await claimAt(root, T0, W1, { lease_seconds: 60 });
    await withCtx(root, { now: at(120) }, async (ctx) => {
      expect((await start(ctx, { plan: 'demo', step: 'step-0', worktree: W1 })).started).toBe(true);
      const hb = await heartbeat(ctx, { plan: 'demo', step: 'step-0', worktree: W1, lease_seconds: 60 });
      expect(hb.lease_expires_at).toBe(at(180));
    });
    const revived = sql(
      root,
      "SELECT * FROM events WHERE command = 'test' AND json_extract(details_json, '$.revived') = 1",
    );
    expect(revived).toHaveLength(1);
    const other = (await claimAt(root, at(150), W2)) as NotClaimedResult;
    expect(other.claimed).toBe(false);
  });

  it('fails a step whose takeover reaches max_attempts and claims the next ready step instead', async () => {
    const root = await setup(chainPlan(3, 5));
    await claimAt(root, T0, W1, { lease_seconds: 10 }, { maxAttempts: 1 });
    const r = (await claimAt(root, at(11), W2, {}, { maxAttempts: 1 })) as ClaimedResult;
    expect(r).toMatchObject({ claimed: true, step_anchor: 'step-2', reclaimed_from_expired: false });
    const s1 = sql<{ status: string; failures: number; claimed_by: string | null; fail_reason: string }>(
      root,
      "SELECT status, failures, claimed_by, fail_reason FROM steps WHERE anchor = 'step-1'",
    )[0]!;
    expect(s1).toEqual({ status: 'failed', failures: 1, claimed_by: null, fail_reason: 'lease expired' });
    const cmds = sql<{ command: string }>(root, 'SELECT command FROM events ORDER BY id').map((e) => e.command);
    expect(cmds.slice(-2)).toEqual(['step_failed', 'test']);
  });

  it('answers not_ready for --step on a blocked or live-claimed step, and refuses substeps and second claims', async () => {
    const root = await setup();
    const blocked = (await claimAt(root, T0, W1, { step: 'step-2' })) as NotClaimedResult;
    expect(blocked).toMatchObject({ claimed: false, reason: 'not_ready', blocked_by: ['step-1'], claimed_by: null });
    await claimAt(root, T0, W1, { step: 'step-0' });
    const taken = (await claimAt(root, T0, W2, { step: 'step-0' })) as NotClaimedResult;
    expect(taken).toMatchObject({ reason: 'not_ready', blocked_by: [], claimed_by: W1 });
    await expect(claimAt(root, T0, W2, { step: 'step-1-1' })).rejects.toMatchObject({ code: 'InvalidArgument' });
    await expect(claimAt(root, T0, W1, { step: 'step-1' })).rejects.toMatchObject({
      code: 'InvalidTransition',
      details: { held_step: 'step-0' },
    });
    await expect(claimAt(root, T0, W1, { step: 'step-9' })).rejects.toMatchObject({ code: 'StepNotFound' });
  });

  it('lifts a dependency on a substep of another step to that top-level step', async () => {
    const plan = planText([
      { id: '1', deps: [], tasks: ['a'] },
      { id: '1.1', level: 5, tasks: ['b'] },
      { id: '2', deps: ['step-1-1'], tasks: ['c'] },
      { id: '3', deps: [], tasks: ['d'] },
    ]);
    const root = await setup(plan);
    expect(((await claimAt(root, T0, W1)) as ClaimedResult).step_anchor).toBe('step-1');
    expect(((await claimAt(root, T0, W2)) as ClaimedResult).step_anchor).toBe('step-3');
    const none = (await claimAt(root, T0, W3)) as NotClaimedResult;
    expect(none.blocked_steps).toEqual(['step-2']);
  });

  it('reports all_completed once every step is done, and appends no event for a claim that changes nothing', async () => {
    const root = await setup(chainPlan(1));
    await withCtx(root, {}, async (ctx) => {
      await claim(ctx, { plan: 'demo', worktree: W1 });
      await complete(ctx, { plan: 'demo', step: 'step-1', worktree: W1, force: 'done' });
    });
    const before = sql(root, 'SELECT COUNT(*) AS n FROM events');
    const r = (await claimAt(root, T0, W2)) as NotClaimedResult;
    expect(r).toEqual({
      claimed: false,
      reason: 'all_completed',
      all_completed: true,
      blocked_steps: [],
      failed_steps: [],
      needs_human_steps: [],
      claimed_steps: [],
    });
    expect(sql(root, 'SELECT COUNT(*) AS n FROM events')).toEqual(before);
  });

  it('echoes the integration branch and tip it is given', async () => {
    const root = await setup();
    const tip = git(root, 'rev-parse', 'HEAD').trim();
    const r = (await withCtx(root, {}, (ctx) =>
      claim(ctx, { plan: 'demo', worktree: W1, integration: { branch: 'tugplan/demo', tip } }),
    )) as ClaimedResult;
    expect(r).toMatchObject({ integration_branch: 'tugplan/demo', integration_tip: tip });
  });
});
