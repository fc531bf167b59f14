/**
 * A plan whose structure is edited while `tugcode board` is up (docs/board.md §3): the page says so beside
 * the plan's path, as `tugcode status` does, instead of showing the old steps as if nothing changed; the
 * edit undone, the notice goes. With no run holding the lock, the same line names the plan's last run; with one,
 * that run.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runLockDir } from '../../src/gitflow/run-driver.js';
import { useBrowser, watchedPage } from '../helpers/browser.js';
import { runCli } from '../helpers/cli.js';
import { planText, runJsonl, runRepo, step } from '../run/helpers.js';
import { startBoardCli, type BoardChild } from './helpers.js';
import { waitLane } from './page.js';

const chrome = useBrowser();
let board: BoardChild | undefined;
afterAll(async () => {
  await board?.stop();
});

describe('tugcode board when the plan is edited', () => {
  it('says the plan changed since the state was made, as status does, until the edit is undone', async (ctx) => {
    const browser = chrome.get(ctx);
    const root = runRepo(planText([step(1, 'One'), step(2, 'Two', { deps: [1] })]), 'demo');
    const ok = runJsonl(root, ['demo', '--workers', '1', '--implementer', 'true', '--no-checkpoints']);
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
    board = await startBoardCli(root);
    const { page, watch } = await watchedPage(browser);
    await page.goto(board.url);
    await waitLane(page, 'step-2', 'done');
    const path = '.plan[data-plan=".tugtool/tugplan-demo.md"] .plan-path';
    expect(await page.textContent(path)).not.toMatch(/edited/);
    // No run holds the lock: the path line names the last run, as the state keeps it (docs/state.md §2).
    const ended = JSON.parse(runCli(['status', '--json'], { cwd: root }).stdout).plans[0].last_run.ended_at;
    expect(await page.textContent(path)).toContain(
      ` · last run: tugcode run .tugtool/tugplan-demo.md --workers 1 --implementer true --no-checkpoints (ended ${ended})`,
    );

    // The lanes stay where they are whatever the path line says (docs/board.md §3: a run starting or ending, an
    // edit): on a wide window and on a half-screen one.
    const lanesTop = () =>
      page.$eval('.plan[data-plan=".tugtool/tugplan-demo.md"] .lanes', (e: any) => e.getBoundingClientRect().top);
    const tops: Record<number, number> = {};
    for (const width of [1400, 960]) {
      await page.setViewportSize({ width, height: 900 });
      tops[width] = await lanesTop();
    }
    await page.setViewportSize({ width: 1400, height: 900 });

    // A run holding the plan (its lock, as src/run/lock.ts makes it): the line says which, as status does,
    // in place of the last run; the lanes stay.
    const lock = runLockDir(root, 'demo');
    mkdirSync(lock);
    const started = new Date().toISOString();
    const holder = { token: 't', pid: process.pid, host: hostname(), started_at: started, workers: 2 };
    writeFileSync(join(lock, 'holder.json'), JSON.stringify({ ...holder, run_flags: ['--implementer', 'true'] }));
    const runNote = ` · run: pid ${process.pid} on ${hostname()} since ${started}, 2 workers`;
    await page.waitForFunction(
      ([sel, note]) => (globalThis as any).document.querySelector(sel).textContent.endsWith(note),
      [path, runNote],
      { timeout: 15_000 },
    );
    expect(await page.textContent(path)).not.toContain('last run');
    expect(await lanesTop()).toBe(tops[1400]);
    rmSync(lock, { recursive: true });
    await page.waitForFunction(
      (sel) => / · last run: /.test((globalThis as any).document.querySelector(sel).textContent),
      path,
      {
        timeout: 15_000,
      },
    );

    const file = join(root, '.tugtool', 'tugplan-demo.md');
    const before = readFileSync(file, 'utf8');
    writeFileSync(file, before + '\n' + step(3, 'Three', { deps: [2] }));
    const status = JSON.parse(runCli(['status', '--json'], { cwd: root }).stdout);
    expect(status.plans[0].structure_changed).toBe(true);
    await page.waitForFunction(
      (sel) => /edited/.test((globalThis as any).document.querySelector(sel).textContent),
      path,
      {
        timeout: 15_000,
      },
    );
    expect(await page.textContent(path)).toMatch(/edited since the state was made: the next tugcode run takes it over/);
    for (const width of [1400, 960]) {
      await page.setViewportSize({ width, height: 900 });
      expect(await lanesTop(), `at ${width} px`).toBe(tops[width]);
    }
    await page.setViewportSize({ width: 1400, height: 900 });

    writeFileSync(file, before);
    await page.waitForFunction(
      (sel) => !/edited/.test((globalThis as any).document.querySelector(sel).textContent),
      path,
      {
        timeout: 15_000,
      },
    );
    expect(watch.errors).toEqual([]);
  });
});
