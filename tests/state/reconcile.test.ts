import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { init } from '../../src/state/init.js';
import { claim } from '../../src/state/claim.js';
import { update } from '../../src/state/update.js';
import { reconcile } from '../../src/state/reconcile.js';
import { listTrailerCommits } from '../../src/git/log.js';
import { DEMO_PATH, at, dbPathOf, dump, fakeWorktrees, planRepo, sql, withCtx } from './helpers.js';

/** An empty commit with trailers and a fixed committer date; returns its full hash. */
function commit(root: string, subject: string, trailers: string[], date = '2026-03-01T10:00:00Z'): string {
  const env = {
    ...process.env,
    GIT_AUTHOR_NAME: 't',
    GIT_AUTHOR_EMAIL: 't@e',
    GIT_COMMITTER_NAME: 't',
    GIT_COMMITTER_EMAIL: 't@e',
    GIT_COMMITTER_DATE: date,
    GIT_AUTHOR_DATE: date,
  };
  execFileSync('git', ['commit', '-q', '--allow-empty', '-m', `${subject}\n\nBody text.\n\n${trailers.join('\n')}`], {
    cwd: root,
    env,
  });
  return execFileSync('git', ['rev-parse', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
}

async function run(root: string, force = false) {
  const { commits, scanned } = listTrailerCommits(root, ['HEAD']);
  return withCtx(root, {}, (ctx) => reconcile(ctx, { plan: 'demo', commits, scanned_commits: scanned, force }));
}

describe('state reconcile', () => {
  it('completes steps named by trailers of real commits, and changes nothing the second time', async () => {
    const root = planRepo();
    await withCtx(root, {}, (ctx) => init(ctx, { plan: 'demo' }));
    const h0 = commit(root, 'feat: client', ['Tug-Step: #step-0', `Tug-Plan: ${DEMO_PATH}`]);
    const h1 = commit(root, 'feat: cache', ['Tug-Step: step-1', 'Tug-Step: step-9', `Tug-Plan: ${DEMO_PATH}`]);
    commit(root, 'feat: other plan', ['Tug-Step: step-2', 'Tug-Plan: .tugtool/tugplan-other.md']);
    const r = await run(root);
    expect(r).toEqual({
      reconciled: [
        { step_anchor: 'step-0', commit_hash: h0, previous_status: 'pending' },
        { step_anchor: 'step-1-1', commit_hash: h1, previous_status: 'pending' },
        { step_anchor: 'step-1-2', commit_hash: h1, previous_status: 'pending' },
        { step_anchor: 'step-1', commit_hash: h1, previous_status: 'pending' },
      ],
      skipped_mismatches: [],
      skipped_steps: [],
      unknown_steps: ['step-9'],
      scanned_commits: 4,
    });
    expect(
      sql(
        root,
        "SELECT anchor, status, completed_via, complete_reason FROM steps WHERE anchor IN ('step-0', 'step-2') ORDER BY step_index",
      ),
    ).toEqual([
      { anchor: 'step-0', status: 'completed', completed_via: 'reconcile', complete_reason: 'reconciled' },
      { anchor: 'step-2', status: 'pending', completed_via: null, complete_reason: null },
    ]);
    expect(
      sql(root, "SELECT COUNT(*) AS n FROM checklist_items WHERE step_anchor <> 'step-2' AND status <> 'completed'"),
    ).toEqual([{ n: 0 }]);
    expect(sql(root, "SELECT unmet_deps FROM steps WHERE anchor = 'step-2'")).toEqual([{ unmet_deps: 0 }]);
    const before = dump(dbPathOf(root));
    const again = await run(root);
    expect(again.reconciled).toEqual([]);
    expect(dump(dbPathOf(root))).toEqual(before);
  });

  it('takes the newest commit per step, skips a different hash on a completed step unless forced', async () => {
    const root = planRepo();
    await withCtx(root, {}, (ctx) => init(ctx, { plan: 'demo' }));
    const old = commit(root, 'first try', ['Tug-Step: step-0', `Tug-Plan: ${DEMO_PATH}`], '2026-03-01T10:00:00Z');
    const newer = commit(root, 'second try', ['Tug-Step: step-0', `Tug-Plan: ./${DEMO_PATH}`], '2026-03-01T11:00:00Z');
    expect((await run(root)).reconciled).toEqual([
      { step_anchor: 'step-0', commit_hash: newer, previous_status: 'pending' },
    ]);
    execFileSync('git', ['reset', '-q', '--hard', old], { cwd: root });
    const r = await run(root);
    expect(r.skipped_mismatches).toEqual([{ step_anchor: 'step-0', db_hash: newer, git_hash: old }]);
    const forced = await run(root, true);
    expect(forced.reconciled).toEqual([{ step_anchor: 'step-0', commit_hash: old, previous_status: 'completed' }]);
  });

  it('leaves live claims and failed steps alone unless forced, and keeps deferred items deferred', async () => {
    const root = planRepo();
    const [W] = fakeWorktrees(root, 1) as [string];
    await withCtx(root, {}, async (ctx) => {
      await init(ctx, { plan: 'demo' });
      await claim(ctx, { plan: 'demo', worktree: W });
      await update(ctx, {
        plan: 'demo',
        step: 'step-0',
        worktree: W,
        items: [{ kind: 'test', ordinal: 0, status: 'deferred', reason: 'no fixture' }],
      });
    });
    const h = commit(root, 'feat: client', ['Tug-Step: step-0', `Tug-Plan: ${DEMO_PATH}`]);
    const r = await run(root);
    expect(r.skipped_steps).toEqual([
      { step_anchor: 'step-0', status: 'claimed', reason: `claimed by ${W} with a live lease` },
    ]);
    const f = await run(root, true);
    expect(f.reconciled).toEqual([{ step_anchor: 'step-0', commit_hash: h, previous_status: 'claimed' }]);
    expect(
      sql(root, "SELECT kind, status FROM checklist_items WHERE step_anchor = 'step-0' AND status <> 'completed'"),
    ).toEqual([{ kind: 'test', status: 'deferred' }]);
  });

  it("heals a crash between commit and completion once the dead worker's lease has expired", async () => {
    const root = planRepo();
    const [W] = fakeWorktrees(root, 1) as [string];
    await withCtx(root, {}, async (ctx) => {
      await init(ctx, { plan: 'demo' });
      await claim(ctx, { plan: 'demo', worktree: W, lease_seconds: 60 });
    });
    const h = commit(root, 'feat: client', ['Tug-Step: step-0', `Tug-Plan: ${DEMO_PATH}`]);
    const { commits } = listTrailerCommits(root, ['HEAD']);
    const r = await withCtx(root, { now: at(61) }, (ctx) => reconcile(ctx, { plan: 'demo', commits }));
    expect(r.reconciled).toEqual([{ step_anchor: 'step-0', commit_hash: h, previous_status: 'claimed' }]);
    expect(sql(root, "SELECT status, commit_hash, completed_via FROM steps WHERE anchor = 'step-0'")).toEqual([
      { status: 'completed', commit_hash: h, completed_via: 'reconcile' },
    ]);
  });

  it("settles a step its caller holds in one transaction, and refuses a claim that is not the caller's", async () => {
    const root = planRepo();
    const [W, other] = fakeWorktrees(root, 2) as [string, string];
    const claimed = await withCtx(root, {}, async (ctx) => {
      await init(ctx, { plan: 'demo' });
      return await claim(ctx, { plan: 'demo', worktree: W });
    });
    expect(claimed).toMatchObject({ claimed: true, step_anchor: 'step-0', attempt: 1 });
    const h = commit(root, 'feat: client', ['Tug-Step: step-0', `Tug-Plan: ${DEMO_PATH}`]);
    const { commits } = listTrailerCommits(root, ['HEAD']);
    const before = dump(dbPathOf(root));
    for (const [worktree, attempt, code] of [
      [other, 1, 'NotOwner'],
      [W, 2, 'AttemptMismatch'],
      [undefined, 1, 'InvalidArgument'],
    ] as const) {
      const held = { step: 'step-0', attempt };
      await expect(
        withCtx(root, {}, (ctx) => reconcile(ctx, { plan: 'demo', commits, held, worktree })),
      ).rejects.toMatchObject({ code });
      expect(dump(dbPathOf(root))).toEqual(before);
    }
    const r = await withCtx(root, {}, (ctx) =>
      reconcile(ctx, { plan: 'demo', commits, held: { step: 'step-0', attempt: 1 }, worktree: W }),
    );
    expect(r.reconciled).toEqual([{ step_anchor: 'step-0', commit_hash: h, previous_status: 'pending' }]);
    expect(r.skipped_steps).toEqual([]);
    expect(sql(root, "SELECT status, commit_hash, claimed_by FROM steps WHERE anchor = 'step-0'")).toEqual([
      { status: 'completed', commit_hash: h, claimed_by: null },
    ]);
    // The release and then the completion, both written by the one call.
    const events = sql<{ details_json: string }>(
      root,
      "SELECT details_json FROM events WHERE step_anchor = 'step-0' OR step_anchor IS NULL ORDER BY id",
    )
      .map((e) => JSON.parse(e.details_json) as Record<string, unknown>)
      .filter((d) => d.released === true || d.reconciled !== undefined);
    expect(events.map((d) => (d.released ? 'released' : 'reconciled'))).toEqual(['released', 'reconciled']);
  });
});
