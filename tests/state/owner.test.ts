import { describe, expect, it } from 'vitest';
import { init } from '../../src/state/init.js';
import { claim } from '../../src/state/claim.js';
import { start } from '../../src/state/start.js';
import { heartbeat } from '../../src/state/heartbeat.js';
import { release, fail } from '../../src/state/release.js';
import { reset } from '../../src/state/reset.js';
import { artifact } from '../../src/state/artifact.js';
import { update } from '../../src/state/update.js';
import { T0, at, dbPathOf, dump, fakeWorktrees, planRepo, sql, withCtx } from './helpers.js';

let W1 = '';
let W2 = '';

async function claimed() {
  const root = planRepo();
  [W1, W2] = fakeWorktrees(root, 2) as [string, string];
  await withCtx(root, {}, async (ctx) => {
    await init(ctx, { plan: 'demo' });
    await claim(ctx, { plan: 'demo', worktree: W1 });
  });
  return root;
}

/** Expect `fn` to throw `code` and leave every table unchanged. */
async function refused(root: string, code: string, fn: () => unknown) {
  const before = dump(dbPathOf(root));
  let err: unknown;
  try {
    await fn();
  } catch (e) {
    err = e;
  }
  expect(err, `expected ${code}`).toMatchObject({ code });
  expect(dump(dbPathOf(root))).toEqual(before);
}

const step0 = () => ({ plan: 'demo', step: 'step-0', worktree: W1 });

describe('owner commands', () => {
  it('starts a claimed step once and reports a repeated start as already started', async () => {
    const root = await claimed();
    await withCtx(root, { now: at(5) }, async (ctx) => {
      expect(await start(ctx, step0())).toEqual({
        started: true,
        step_anchor: 'step-0',
        started_at: at(5),
        already_started: false,
      });
      expect(await start(ctx, step0())).toEqual({
        started: true,
        step_anchor: 'step-0',
        started_at: at(5),
        already_started: true,
      });
    });
  });

  it('starts a substep and, with it, its claimed top-level step', async () => {
    const root = planRepo();
    [W1] = fakeWorktrees(root, 1) as [string];
    await withCtx(root, {}, async (ctx) => {
      await init(ctx, { plan: 'demo' });
      await claim(ctx, { plan: 'demo', worktree: W1, step: 'step-0' });
      await update(ctx, { plan: 'demo', step: 'step-0', worktree: W1, complete_remaining: true });
      const { complete } = await import('../../src/state/complete.js');
      await complete(ctx, { plan: 'demo', step: 'step-0', worktree: W1 });
      await claim(ctx, { plan: 'demo', worktree: W1 });
      expect((await start(ctx, { plan: 'demo', step: '#step-1-2', worktree: W1 })).step_anchor).toBe('step-1-2');
    });
    expect(sql(root, "SELECT anchor, status FROM steps WHERE top_anchor = 'step-1' ORDER BY step_index")).toEqual([
      { anchor: 'step-1', status: 'in_progress' },
      { anchor: 'step-1-1', status: 'pending' },
      { anchor: 'step-1-2', status: 'in_progress' },
    ]);
  });

  it('refuses a worktree that never held the step with NotOwner, and one whose claim ended with LeaseExpired', async () => {
    const root = await claimed();
    await refused(root, 'NotOwner', () => withCtx(root, {}, (ctx) => heartbeat(ctx, { ...step0(), worktree: W2 })));
    await withCtx(root, {}, (ctx) => release(ctx, step0()));
    await refused(root, 'LeaseExpired', () => withCtx(root, {}, (ctx) => heartbeat(ctx, step0())));
    await withCtx(root, { now: at(10) }, (ctx) => claim(ctx, { plan: 'demo', worktree: W2 }));
    await refused(root, 'LeaseExpired', () => withCtx(root, {}, (ctx) => start(ctx, step0())));
  });

  it('refuses a stale attempt with AttemptMismatch after ownership', async () => {
    const root = await claimed();
    await refused(root, 'AttemptMismatch', () => withCtx(root, {}, (ctx) => start(ctx, { ...step0(), attempt: 2 })));
    await refused(root, 'NotOwner', () =>
      withCtx(root, {}, (ctx) => start(ctx, { ...step0(), worktree: W2, attempt: 2 })),
    );
    await withCtx(root, {}, async (ctx) => expect((await start(ctx, { ...step0(), attempt: 1 })).started).toBe(true));
  });

  it('reports StepNotFound before anything else, and a substep given to release, fail or reset as InvalidArgument', async () => {
    const root = await claimed();
    await refused(root, 'StepNotFound', () =>
      withCtx(root, {}, (ctx) => release(ctx, { ...step0(), step: 'step-7', worktree: W2 })),
    );
    await refused(root, 'InvalidArgument', () =>
      withCtx(root, {}, (ctx) => release(ctx, { ...step0(), step: 'step-1-1' })),
    );
    await refused(root, 'InvalidArgument', () =>
      withCtx(root, {}, (ctx) => fail(ctx, { ...step0(), step: 'step-1-1', reason: 'x' })),
    );
    await refused(root, 'InvalidArgument', () =>
      withCtx(root, {}, (ctx) => reset(ctx, { plan: 'demo', step: 'step-1-1' })),
    );
  });

  it("a substep given to release: the hint names the top-level step with the caller's --worktree and --attempt", async () => {
    const root = await claimed();
    const hint = async (input: { attempt?: number }) => {
      try {
        await withCtx(root, {}, (ctx) => release(ctx, { ...step0(), step: 'step-1-1', ...input }));
      } catch (e) {
        return (e as { hint?: string }).hint;
      }
      return undefined;
    };
    expect(await hint({ attempt: 1 })).toBe(
      `tugcode state release .tugtool/tugplan-demo.md step-1 --worktree ${W1} --attempt 1`,
    );
    expect(await hint({})).toBe(`tugcode state release .tugtool/tugplan-demo.md step-1 --worktree ${W1}`);
  });

  it('releases a claim: items back to open, step pending, failures unchanged', async () => {
    const root = await claimed();
    await withCtx(root, {}, async (ctx) => {
      await update(ctx, { ...step0(), items: [{ kind: 'task', ordinal: 0, status: 'completed' }] });
      expect(await release(ctx, step0())).toEqual({ released: true, step_anchor: 'step-0' });
    });
    expect(sql(root, "SELECT status, claimed_by, attempt, failures FROM steps WHERE anchor = 'step-0'")).toEqual([
      { status: 'pending', claimed_by: null, attempt: 1, failures: 0 },
    ]);
    expect(
      sql(root, "SELECT COUNT(*) AS n FROM checklist_items WHERE step_anchor = 'step-0' AND status <> 'open'"),
    ).toEqual([{ n: 0 }]);
  });

  it('counts failed attempts and fails the step at max_attempts, until an admin reset clears both counters', async () => {
    const root = await claimed();
    await withCtx(root, { maxAttempts: 2 }, async (ctx) => {
      expect(await fail(ctx, { ...step0(), reason: 'tests red' })).toEqual({
        failed_attempt: true,
        step_anchor: 'step-0',
        attempt: 1,
        failures: 1,
        step_status: 'pending',
      });
    });
    await withCtx(root, { maxAttempts: 2 }, async (ctx) => {
      await claim(ctx, { plan: 'demo', worktree: W1 });
      expect(await fail(ctx, { ...step0(), reason: 'still red' })).toMatchObject({
        attempt: 2,
        failures: 2,
        step_status: 'failed',
      });
      expect(await claim(ctx, { plan: 'demo', worktree: W2 })).toMatchObject({
        claimed: false,
        failed_steps: ['step-0'],
      });
    });
    expect(sql(root, "SELECT status, fail_reason FROM steps WHERE anchor = 'step-0'")).toEqual([
      { status: 'failed', fail_reason: 'still red' },
    ]);
    await withCtx(root, {}, async (ctx) =>
      expect(await reset(ctx, { plan: 'demo', step: 'step-0' })).toEqual({
        reset: true,
        step_anchor: 'step-0',
        previous_status: 'failed',
        previous_owner: null,
        dropped_review: null,
      }),
    );
    expect(sql(root, "SELECT status, attempt, failures, fail_reason FROM steps WHERE anchor = 'step-0'")).toEqual([
      { status: 'pending', attempt: 2, failures: 0, fail_reason: null },
    ]);
  });

  it('refuses to reset a live claim unless forced; an expired one needs no force; attempt never goes down', async () => {
    const root = await claimed();
    await refused(root, 'InvalidTransition', () =>
      withCtx(root, { now: at(7200) }, (ctx) => reset(ctx, { plan: 'demo', step: 'step-0' })),
    );
    await withCtx(root, { now: at(60) }, async (ctx) => {
      await start(ctx, step0());
      expect(await reset(ctx, { plan: 'demo', step: 'step-0', force: true })).toEqual({
        reset: true,
        step_anchor: 'step-0',
        previous_status: 'in_progress',
        previous_owner: W1,
        dropped_review: null,
      });
      const c = await claim(ctx, { plan: 'demo', worktree: W1 });
      expect(c).toMatchObject({ claimed: true, step_anchor: 'step-0', attempt: 2 });
    });
    // The stale holder of attempt 1 (same worktree) is fenced off.
    await refused(root, 'AttemptMismatch', () =>
      withCtx(root, { now: at(61) }, (ctx) => heartbeat(ctx, { ...step0(), attempt: 1 })),
    );
    // An expired claim is reset without force.
    await withCtx(root, { now: at(60 + 7201) }, async (ctx) =>
      expect(await reset(ctx, { plan: 'demo', step: 'step-0' })).toMatchObject({
        previous_status: 'claimed',
        previous_owner: W1,
      }),
    );
    expect(sql(root, "SELECT status, attempt, claimed_by FROM steps WHERE anchor = 'step-0'")).toEqual([
      { status: 'pending', attempt: 2, claimed_by: null },
    ]);
    const events = sql<{ details_json: string }>(
      root,
      "SELECT details_json FROM events WHERE json_extract(details_json, '$.reset') = 1 ORDER BY id",
    ).map((e) => JSON.parse(e.details_json));
    expect(events.map((e) => [e.previous_owner, e.live_claim ?? false])).toEqual([
      [W1, true],
      [W1, false],
    ]);
  });

  it('resets a pending step without an event when there is nothing to clear, and refuses completed steps', async () => {
    const root = await claimed();
    const before = dump(dbPathOf(root));
    await withCtx(root, {}, async (ctx) =>
      expect(await reset(ctx, { plan: 'demo', step: 'step-2' })).toMatchObject({ previous_status: 'pending' }),
    );
    expect(dump(dbPathOf(root))).toEqual(before);
    await withCtx(root, {}, async (ctx) => {
      const { complete } = await import('../../src/state/complete.js');
      await complete(ctx, { ...step0(), force: 'skip' });
    });
    await refused(root, 'InvalidTransition', () =>
      withCtx(root, {}, (ctx) => reset(ctx, { plan: 'demo', step: 'step-0' })),
    );
  });

  it('truncates artifact summaries and contents by code points, never splitting a character', async () => {
    const root = await claimed();
    const r = await withCtx(root, {}, (ctx) =>
      artifact(ctx, { ...step0(), kind: 'coder_report', summary: '😀'.repeat(600), content: 'x' }),
    );
    expect(r).toMatchObject({ recorded: true, kind: 'coder_report', truncated: true });
    const row = sql<{ summary: string }>(root, 'SELECT summary FROM step_artifacts')[0]!;
    expect([...row.summary]).toHaveLength(500);
    expect(row.summary.endsWith('😀')).toBe(true);
    await refused(root, 'InvalidArgument', () =>
      withCtx(root, {}, (ctx) => artifact(ctx, { ...step0(), kind: 'poem', summary: 'x' })),
    );
    await refused(root, 'InvalidArgument', () =>
      withCtx(root, {}, (ctx) => artifact(ctx, { ...step0(), kind: 'note', summary: 'a\0b' })),
    );
  });

  it('refuses start on a step that is no longer claimable with InvalidTransition', async () => {
    const root = await claimed();
    await withCtx(root, {}, async (ctx) => {
      const { complete } = await import('../../src/state/complete.js');
      await complete(ctx, { ...step0(), force: 'done' });
    });
    await refused(root, 'InvalidTransition', () => withCtx(root, {}, (ctx) => start(ctx, step0())));
    await refused(root, 'InvalidTransition', () => withCtx(root, {}, (ctx) => heartbeat(ctx, step0())));
    void T0;
  });

  it('lists the claims a worktree holds and releases them as an admin (actor admin, failures kept)', async () => {
    const root = await claimed();
    const { claimsHeldBy, adminRelease, completionBlocker } = await import('../../src/state/bridge.js');
    await withCtx(root, { now: at(7201) }, async (ctx) => {
      expect(await claimsHeldBy(ctx, W1)).toEqual([
        {
          plan_path: '.tugtool/tugplan-demo.md',
          step_anchor: 'step-0',
          status: 'claimed',
          lease_expires_at: at(7200),
          attempt: 1,
          live: false,
        },
      ]);
      expect(await completionBlocker(ctx, step0())).toMatchObject({ code: 'ChecklistIncomplete' });
      await update(ctx, { ...step0(), complete_remaining: true });
      expect(await completionBlocker(ctx, step0())).toBeNull();
      expect(await adminRelease(ctx, { plan: 'demo', step: 'step-0', worktree: W2 })).toEqual({ released: false });
      expect(await adminRelease(ctx, { plan: 'demo', step: 'step-0', worktree: W1 })).toEqual({ released: true });
      expect(await claimsHeldBy(ctx, W1)).toEqual([]);
    });
    expect(sql(root, "SELECT status, failures FROM steps WHERE anchor = 'step-0'")).toEqual([
      { status: 'pending', failures: 0 },
    ]);
    expect(sql(root, 'SELECT actor FROM events ORDER BY id DESC LIMIT 1')).toEqual([{ actor: 'admin' }]);
    expect(
      sql(root, "SELECT COUNT(*) AS n FROM checklist_items WHERE step_anchor = 'step-0' AND status <> 'open'"),
    ).toEqual([{ n: 0 }]);
  });
});

describe('bounds of library inputs', () => {
  it('refuses a lease outside 1 s..366 days and an out-of-range configuration, changing nothing', async () => {
    const root = await claimed();
    await refused(root, 'InvalidArgument', () =>
      withCtx(root, {}, (ctx) => heartbeat(ctx, { ...step0(), lease_seconds: 999999999999 })),
    );
    await refused(root, 'InvalidArgument', () =>
      withCtx(root, {}, (ctx) => claim(ctx, { plan: 'demo', worktree: W2, lease_seconds: 0 })),
    );
    await refused(root, 'ConfigInvalid', () => withCtx(root, { leaseSeconds: 999999999999 }, () => undefined));
    await refused(root, 'ConfigInvalid', () => withCtx(root, { maxAttempts: 0 }, () => undefined));
    const r = await withCtx(root, {}, (ctx) => heartbeat(ctx, { ...step0(), lease_seconds: 366 * 24 * 3600 }));
    expect(r.lease_expires_at).toBe('2027-03-02T10:00:00.000Z');
  });
});
