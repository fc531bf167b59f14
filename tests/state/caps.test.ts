/**
 * Caps of the text the state library stores (docs/state.md): every reason is cut to 500 code points
 * (never inside a character) with a `TextTruncated` warning; artifact summaries 500, contents 64 Ki.
 */
import { describe, expect, it } from 'vitest';
import { init } from '../../src/state/init.js';
import { claim } from '../../src/state/claim.js';
import { update } from '../../src/state/update.js';
import { complete } from '../../src/state/complete.js';
import { fail } from '../../src/state/release.js';
import { REASON_MAX_CODE_POINTS } from '../../src/state/status.js';
import { fakeWorktrees, planRepo, sql, withCtx } from './helpers.js';
import { cliRepo, st } from './cli-helpers.js';

const HUGE = '😀' + 'x'.repeat(20 * 1024 * 1024);

function codePoints(s: string): number {
  return [...s].length;
}

describe('caps of stored text', () => {
  it('cuts every reason to 500 code points, with a warning, in the row and in the event', async () => {
    expect(REASON_MAX_CODE_POINTS).toBe(500);
    const root = planRepo();
    const [W] = fakeWorktrees(root, 1) as [string];
    const p = { plan: 'demo', worktree: W };
    const warnings = await withCtx(root, { maxAttempts: 5 }, async (ctx) => {
      await init(ctx, { plan: 'demo' });
      const fromInit = ctx.warnings.items.length; // the demo plan's validator warnings (W003)
      await claim(ctx, { ...p, step: 'step-0' });
      await update(ctx, {
        ...p,
        step: 'step-0',
        batch: true,
        items: [{ kind: 'task', ordinal: 0, status: 'deferred', reason: HUGE }],
      });
      await update(ctx, {
        ...p,
        step: 'step-0',
        items: [{ kind: 'task', ordinal: 1, status: 'deferred' }],
        reason: HUGE,
      });
      await fail(ctx, { ...p, step: 'step-0', reason: HUGE });
      await claim(ctx, { ...p, step: 'step-0' });
      const r = await complete(ctx, { ...p, step: 'step-0', force: HUGE });
      expect(codePoints(r.force_reason!)).toBe(500);
      return ctx.warnings.items.slice(fromInit).map((w) => [w.code, w.details?.field]);
    });
    expect(warnings).toEqual([
      ['TextTruncated', 'reason of task 0'],
      ['TextTruncated', 'reason'],
      ['TextTruncated', 'reason'],
      ['TextTruncated', 'force reason'],
    ]);
    const rows = sql<{ complete_reason: string }>(root, "SELECT complete_reason FROM steps WHERE anchor = 'step-0'");
    expect(codePoints(rows[0]!.complete_reason)).toBe(500);
    expect(rows[0]!.complete_reason.startsWith('😀x')).toBe(true);
    const events = sql<{ details_json: string }>(root, 'SELECT details_json FROM events');
    for (const e of events) expect(e.details_json.length).toBeLessThan(10_000);
  });

  it('stores a long deferral reason given through `state update --batch` as 500 code points', () => {
    // 40 KB fits one pipe buffer: reading a larger stdin is the CLI's concern (the library test above
    // covers 20 MB).
    const { root, w1 } = cliRepo();
    st(root, ['claim', 'demo', '--worktree', w1]);
    const batch = JSON.stringify([{ kind: 'task', ordinal: 0, status: 'deferred', reason: HUGE.slice(0, 40_000) }]);
    const r = st(root, ['update', 'demo', 'step-0', '--worktree', w1, '--batch'], { input: batch });
    expect(r.json.warnings.map((w: { code: string }) => w.code)).toEqual(['TextTruncated']);
    const [row] = sql<{ reason: string }>(
      root,
      "SELECT reason FROM checklist_items WHERE step_anchor = 'step-0' AND kind = 'task' AND ordinal = 0",
    );
    expect(codePoints(row!.reason)).toBe(500);
  });
});
