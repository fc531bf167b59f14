/**
 * Issue 22 item 27: `state show --watch` says when it read the state (`updated HH:MM:SS`) and fits each
 * frame to the terminal's height, so the header never scrolls away: whole steps are left out (completed
 * first, claimed last) behind a `… N more step(s)` line.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { show } from '../../src/state/show.js';
import { renderShow } from '../../src/state/show-text.js';
import { init } from '../../src/state/init.js';
import { claim } from '../../src/state/claim.js';
import { complete } from '../../src/state/complete.js';
import { CLI } from '../helpers/cli.js';
import { T0, fakeWorktrees, planRepo, planText, withCtx } from './helpers.js';

/** 12 independent steps of 3 items each; steps 1–3 completed, step 7 claimed. */
async function twelveSteps(): Promise<string> {
  const ids = Array.from({ length: 12 }, (_, i) => String(i + 1));
  const plan = planText(ids.map((id) => ({ id, deps: [], tasks: ['a', 'b'], tests: ['t'] })));
  const root = planRepo({ '.tugtool/tugplan-demo.md': plan });
  const [W] = fakeWorktrees(root, 1) as [string];
  await withCtx(root, { now: T0 }, async (ctx) => {
    await init(ctx, { plan: 'demo' });
    for (const s of ['step-1', 'step-2', 'step-3']) {
      await claim(ctx, { plan: 'demo', worktree: W, step: s });
      await complete(ctx, { plan: 'demo', step: s, worktree: W, force: 'test' });
    }
    await claim(ctx, { plan: 'demo', worktree: W, step: 'step-7' });
  });
  return root;
}

describe('state show fitted to a height', () => {
  it('keeps the plan header, the claimed step and the footer within the height, and says what it left out', async () => {
    const root = await twelveSteps();
    const data = await withCtx(root, { now: T0, mode: 'read' }, (ctx) => show(ctx, { plan: 'demo' }));
    const full = renderShow(data, { now: T0, color: false }).trimEnd().split('\n');
    expect(full.length).toBeGreaterThan(30);
    expect(full.join('\n')).not.toContain('more step(s)');

    const lines = renderShow(data, { now: T0, color: false, maxLines: 29 }).trimEnd().split('\n');
    expect(lines.length).toBeLessThanOrEqual(29);
    expect(lines[0]).toBe('Plan: .tugtool/tugplan-demo.md [active]');
    expect(lines.at(-1)).toBe('Overall: 3/12 steps complete (25%)');
    expect(lines.join('\n')).toMatch(/^Step 7: .* \[claimed\]/m);
    const more = lines.find((l) => l.startsWith('… '));
    expect(more).toMatch(/^… \d+ more step\(s\) not shown \(3 completed, \d+ pending\)$/);
    // The completed steps went first.
    expect(lines.join('\n')).not.toMatch(/^Step [123]: /m);
  });

  it('cuts even the kept steps when the height is tiny, header first', async () => {
    const root = await twelveSteps();
    const data = await withCtx(root, { now: T0, mode: 'read' }, (ctx) => show(ctx, { plan: 'demo' }));
    const lines = renderShow(data, { now: T0, color: false, maxLines: 4 }).trimEnd().split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(/^Plan: /);
    expect(lines[3]).toMatch(/^… \d+ more line\(s\)$/);
  });
});

describe('state show --watch', () => {
  it('starts each frame with the time it read the state and fits the frame to $LINES', async () => {
    const root = await twelveSteps();
    const child = spawn(process.execPath, [CLI, 'state', 'show', 'demo', '--watch', '1'], {
      cwd: root,
      env: { ...process.env, NODE_ENV: 'test', NO_COLOR: '1', TUGCODE_NOW: T0, TZ: 'UTC', LINES: '24' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const exited = new Promise<number | null>((res) => child.on('close', (code) => res(code)));
    await new Promise<void>((res) =>
      child.stdout.on('data', (d) => {
        out += d;
        if (out.includes('Overall:')) res();
      }),
    );
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    const frame = out.split('\u001b[2J\u001b[H')[1]!.replace(/\n$/, '');
    const lines = frame.split('\n');
    expect(lines[0]).toBe('updated 10:00:00 · every 1s · Ctrl-C to stop');
    expect(lines[1]).toBe('Plan: .tugtool/tugplan-demo.md [active]');
    expect(lines.length).toBeLessThanOrEqual(23); // and the cursor's line below
    expect(frame).toMatch(/^… \d+ more step\(s\) not shown/m);
    expect(lines.at(-1)).toBe('Overall: 3/12 steps complete (25%)');
  }, 60_000);
});
