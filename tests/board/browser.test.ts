/**
 * The board in a real headless Chromium (docs/board.md §8), during a real `tugcode run --board` of a diamond
 * plan whose implementer waits for the test: the page shows the plan; step-3 goes Blocked → Ready → Running
 * → Done without a reload (the same card element, moved); one EventSource; no console error; nothing sent
 * while the state is unchanged; no layout jump; the detail's live log; a phone-width window; token and
 * Origin refusals. Then, with `tugcode board --allow-actions`, a failed step reset from the page and run
 * again; and a page that outlives its board reconnects to the next one.
 */
import { rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { useBrowser, watchedPage } from '../helpers/browser.js';
import { runCli } from '../helpers/cli.js';
import { planText, runJsonl, runRepo, startRun, step } from '../run/helpers.js';
import { expectRefused, http, own, startBoardCli, whereOf, type BoardChild } from './helpers.js';
import { gatedImplementer, laneOf, serverSnapshot, until, waitLane } from './page.js';

const chrome = useBrowser();

const DIAMOND = planText([
  step(1, 'One'),
  step(2, 'Two', { deps: [1] }),
  step(3, 'Three', { deps: [1] }),
  step(4, 'Four', { deps: [2, 3] }),
]);

/** The bounding boxes of the plan's head and lanes: what must not move when a card changes lanes. */
const frame = (page: import('playwright-core').Page) =>
  page.evaluate(() =>
    [...(globalThis as any).document.querySelectorAll('.plan-head, .lane')].map((e: any) => {
      const r = e.getBoundingClientRect();
      return [r.x, r.y, r.width, r.height].map(Math.round).join(',');
    }),
  );

describe('the board in a browser during tugcode run --board', () => {
  it('follows a diamond plan live: Ready → Running → Done without reload, one EventSource, quiet when unchanged', async (ctx) => {
    const browser = chrome.get(ctx);
    const root = runRepo(DIAMOND);
    const impl = gatedImplementer();
    // One worker, so step-3 waits in Ready while step-2 runs; a long heartbeat, so only the steps change the state.
    const run = startRun(root, ['demo', '--workers', '1', '--implementer', impl.argv, '--board', '--heartbeat', '600']);
    try {
      const line = await until('the board line', () => {
        if (run.child.exitCode !== null) throw new Error(`run ended: ${run.events().at(-1)}`);
        return run.events().find((e) => e.type === 'board');
      });
      const w = whereOf(line);
      expect(w.line.allow_actions).toBe(false);
      const { page, watch } = await watchedPage(browser);
      await page.goto(w.url);
      await page.waitForSelector('.plan h2:text("Driver test")');
      await waitLane(page, 'step-1', 'running');
      expect(await laneOf(page, 'step-3')).toBe('blocked');
      expect(await page.textContent('.lane-blocked .n')).toBe('3');
      // The card element of step-3 is marked: the same element must travel through the lanes.
      await page.evaluate(
        () => ((globalThis as any).document.querySelector('.card[data-step="step-3"]').dataset.mark = 'same'),
      );
      await page.evaluate(() => ((globalThis as any).__noReload = true));

      impl.open('step-1');
      await waitLane(page, 'step-1', 'done');
      await waitLane(page, 'step-2', 'running');
      await waitLane(page, 'step-3', 'ready');
      const done1 = await page.textContent('.card[data-step="step-1"]');
      expect(done1).toMatch(/commit [0-9a-f]{10}/);
      const running2 = await page.textContent('.card[data-step="step-2"]');
      expect(running2).toMatch(/w1 · implementer · attempt 1/);
      expect(running2).toMatch(/lease .* left/);

      // Unchanged state: once the board has seen step-2's implementer output, not one message for 2 s.
      const log2 = join(root, '.tugtool', 'logs', 'demo', 'step-2-attempt1.log');
      await until('the snapshot to hold step-2 output', async () => {
        const c = (await serverSnapshot(w)).snapshot.plans[0].cards[1];
        const mtime = new Date(statSync(log2).mtimeMs).toISOString();
        return c.phase === 'implementer' && c.last_activity_at >= mtime;
      });
      const hash = (await serverSnapshot(w)).hash;
      await page.waitForFunction((h) => (globalThis as any).document.documentElement.dataset.hash === h, hash);
      const before = await watch.messages();
      await page.waitForTimeout(2000);
      expect(await watch.messages()).toBe(before);

      // The step detail: its items, its attempt, its log, which grows live.
      await page.click('.card[data-step="step-2"]');
      await page.waitForSelector('#d-body .items');
      expect(await page.textContent('#d-title')).toBe('Step 2: Two');
      await page.waitForFunction(() =>
        (globalThis as any).document.getElementById('d-log').textContent.includes('working on step-2'),
      );
      impl.open('step-2', 'the gate opened\n');
      await page.waitForFunction(() =>
        (globalThis as any).document.getElementById('d-log').textContent.includes('done step-2'),
      );
      await page.click('#d-close');

      // No layout jump: step-3 moves from Ready to Running, the plan's head and lanes stay where they were.
      const boxes = await frame(page);
      await waitLane(page, 'step-2', 'done');
      await waitLane(page, 'step-3', 'running');
      expect(await frame(page)).toEqual(boxes);

      // Refusals, from outside the browser.
      expectRefused(await http(w.base, '/api/snapshot', { headers: own(w) }), 401, 'Unauthorized');
      expectRefused(
        await http(w.base, `/api/snapshot?token=${w.token}`, { headers: own(w, { Origin: 'http://evil.example' }) }),
        403,
        'ForbiddenOrigin',
      );

      // A phone-width window: nothing wider than the screen; the lanes swipe side by side.
      await page.setViewportSize({ width: 390, height: 844 });
      const phone = await page.evaluate(() => {
        const d = (globalThis as any).document;
        const lanes = d.querySelector('.lanes');
        return {
          page: d.documentElement.scrollWidth,
          swipe: lanes.scrollWidth > lanes.clientWidth,
          lane: Math.round(d.querySelector('.lane').getBoundingClientRect().width),
        };
      });
      expect(phone.page).toBeLessThanOrEqual(390);
      expect(phone.swipe).toBe(true);
      expect(phone.lane).toBeGreaterThan(300);
      await page.setViewportSize({ width: 1400, height: 900 });

      impl.open('step-3');
      await waitLane(page, 'step-3', 'done');
      await waitLane(page, 'step-4', 'running');
      expect(
        await page.evaluate(() => (globalThis as any).document.querySelector('.card[data-step="step-3"]').dataset.mark),
      ).toBe('same');
      impl.open('step-4');
      await waitLane(page, 'step-4', 'done');
      await page.waitForFunction(() =>
        (globalThis as any).document.querySelector('.pct').textContent.startsWith('4/4'),
      );
      expect(await page.evaluate(() => (globalThis as any).__noReload)).toBe(true);
      expect(await watch.eventSources()).toBe(1);
      expect(watch.errors).toEqual([]);
      const r = await run.done;
      expect(r.code, r.stderr).toBe(0);
      expect(r.events.at(-1)).toMatchObject({ type: 'summary', status: 'ok' });
      // The board stopped with the run: the page says so.
      await page.waitForFunction(
        () => !(globalThis as any).document.getElementById('conn').className.includes('conn-live'),
      );
      await page.close();
    } finally {
      if (run.child.exitCode === null) run.child.kill('SIGKILL');
    }
  }, 180_000);
});

describe('the board in a browser with --allow-actions', () => {
  let board: BoardChild | undefined;
  afterAll(async () => {
    await board?.stop();
  });

  it('resets a failed step from the page after a confirmation; the next run integrates it', async (ctx) => {
    const browser = chrome.get(ctx);
    const root = runRepo(planText([step(1, 'One'), step(2, 'Two', { deps: [1] })]));
    const impl = gatedImplementer();
    impl.open('step-1.fail');
    impl.open('step-1');
    const failed = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv, '--max-attempts', '1']);
    expect(failed.code).not.toBe(0);
    board = await startBoardCli(root, ['--allow-actions']);
    const { page, watch } = await watchedPage(browser);
    await page.goto(board.url);
    await waitLane(page, 'step-1', 'needs_you');
    const card = await page.textContent('.card[data-step="step-1"]');
    expect(card).toContain('ImplementerFailed');
    expect(card).toContain('tugcode state reset demo step-1');
    await page.click('.card[data-step="step-1"] [data-act="reset"]');
    await page.waitForSelector('#confirm[open]');
    expect(await page.textContent('#c-command')).toBe('tugcode state reset demo step-1');
    await page.click('#c-ok');
    await page.waitForSelector('#toast:text("done: state reset step-1")');
    await waitLane(page, 'step-1', 'ready');
    const log = runCli(['state', 'log', 'demo', '--step', 'step-1', '--limit', '1', '--json'], { cwd: root });
    expect(log.json.events[0]).toMatchObject({ command: 'state reset', actor: 'admin', details: { reset: true } });
    // The next run (the implementer now succeeds) integrates it, and the page follows.
    rmSync(join(impl.gate, 'step-1.fail'));
    impl.open('step-2');
    const again = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv]);
    expect(again.code, again.stderr).toBe(0);
    await waitLane(page, 'step-1', 'done');
    await waitLane(page, 'step-2', 'done');
    expect(await watch.eventSources()).toBe(1);
    expect(watch.errors).toEqual([]);
    await page.close();
  }, 180_000);

  it('a page outlives its board: the next board on the same URL gets it back, without a reload', async (ctx) => {
    const browser = chrome.get(ctx);
    const root = runRepo(planText([step(1, 'One'), step(2, 'Two', { deps: [1] })]));
    expect(runCli(['state', 'init', 'demo', '--json'], { cwd: root }).code).toBe(0);
    let b = await startBoardCli(root);
    const { page, watch } = await watchedPage(browser);
    await page.goto(b.url);
    await waitLane(page, 'step-1', 'ready');
    await b.stop();
    await page.waitForSelector('#conn.conn-wait, #conn.conn-down');
    // Changed while no board ran; the next board has the same URL.
    expect(runCli(['state', 'claim', 'demo', '--json'], { cwd: root }).code).toBe(0);
    b = await startBoardCli(root);
    expect(b.url).toBe(page.url());
    await waitLane(page, 'step-1', 'running');
    await page.waitForSelector('#conn.conn-live');
    expect(await watch.eventSources()).toBe(1);
    await b.stop();
    await page.close();
  }, 120_000);
});

describe('the board in a browser: a change draws its plan only', () => {
  let board: BoardChild | undefined;
  afterAll(async () => {
    await board?.stop();
  });

  it("a claim in one plan shows on the page; the other plan's elements stay the same nodes, untouched", async (ctx) => {
    const browser = chrome.get(ctx);
    const root = runRepo(DIAMOND);
    writeFileSync(join(root, '.tugtool', 'tugplan-other.md'), planText([step(1, 'Alpha'), step(2, 'Beta')]));
    for (const p of ['demo', 'other']) expect(runCli(['state', 'init', p, '--json'], { cwd: root }).code).toBe(0);
    board = await startBoardCli(root);
    const { page, watch } = await watchedPage(browser);
    await page.goto(board.url);
    const other = '.plan[data-plan=".tugtool/tugplan-other.md"]';
    await page.waitForSelector(`${other} .card[data-step="step-2"]`);
    await waitLane(page, 'step-1', 'ready');
    // The other plan's section and cards are marked, and every change under them is recorded (the ages'
    // ticks aside: they count every second in place, docs/board.md §3).
    await page.evaluate((sel) => {
      const g = globalThis as any;
      const section = g.document.querySelector(sel);
      g.__marked = [section, ...section.querySelectorAll('.card, .lane, .plan-head *')];
      g.__changes = [];
      new g.MutationObserver((list: any[]) => {
        for (const m of list) if (!m.target.closest?.('.tick')) g.__changes.push(`${m.type} ${m.target.className}`);
      }).observe(section, { subtree: true, childList: true, attributes: true, characterData: true });
    }, other);
    const demo = '.plan[data-plan=".tugtool/tugplan-demo.md"]';
    expect(runCli(['state', 'claim', 'demo', '--json'], { cwd: root }).code).toBe(0);
    await page.waitForFunction(
      (sel) =>
        (globalThis as any).document.querySelector(`${sel} .card[data-step="step-1"]`)?.closest('.lane')?.dataset
          .lane === 'running',
      demo,
    );
    expect(await page.textContent(`${demo} .lane-running .n`)).toBe('1');
    // The page has the board's state (its hash), drawn from a `plans` frame of the demo plan only.
    const hash = (await serverSnapshot(board)).hash;
    await page.waitForFunction((h) => (globalThis as any).document.documentElement.dataset.hash === h, hash);
    const after = await page.evaluate((sel) => {
      const g = globalThis as any;
      const section = g.document.querySelector(sel);
      const now = [section, ...section.querySelectorAll('.card, .lane, .plan-head *')];
      return {
        same: now.length === g.__marked.length && now.every((n: unknown, i: number) => n === g.__marked[i]),
        changes: g.__changes,
      };
    }, other);
    expect(after).toEqual({ same: true, changes: [] });
    expect(await page.textContent(`${other} .lane-ready .n`)).toBe('1');
    expect(await watch.eventSources()).toBe(1);
    expect(watch.errors).toEqual([]);
    await page.close();
  }, 120_000);
});
