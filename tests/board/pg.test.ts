/**
 * The board on PostgreSQL (docs/board.md §5, docs/state.md §8): owners carry their host; while the server is
 * down the page says the state does not answer, and once it is back the page goes on — the same
 * EventSource, no reload — and shows what changed.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { useBrowser, watchedPage } from '../helpers/browser.js';
import { runCli } from '../helpers/cli.js';
import { startPrivatePg } from '../helpers/pg.js';
import { planText, runRepo, step } from '../run/helpers.js';
import { startBoardCli, type BoardChild } from './helpers.js';
import { waitLane } from './page.js';

const chrome = useBrowser();
let board: BoardChild | undefined;
afterAll(async () => {
  await board?.stop();
});

describe('the board on PostgreSQL', () => {
  it('keeps working across a server restart', async (ctx) => {
    const browser = chrome.get(ctx);
    const own = await startPrivatePg();
    const db = await own.createDatabase('board');
    const env = { TUGCODE_STATE_URL: db.url, TUGCODE_STATE_HOST: 'hostA' };
    const root = runRepo(planText([step(1, 'One'), step(2, 'Two', { deps: [1] })]));
    const cli = (args: string[]) => {
      const r = runCli([...args, '--json'], { cwd: root, env });
      expect(r.code, r.stdout + r.stderr).toBe(0);
      return r.json;
    };
    cli(['state', 'init', 'demo']);
    board = await startBoardCli(root, [], env);
    const { page, watch } = await watchedPage(browser);
    await page.goto(board.url);
    await waitLane(page, 'step-1', 'ready');
    expect(await page.textContent('#repo')).toContain('postgres');
    cli(['state', 'claim', 'demo', '--worktree', root]);
    await waitLane(page, 'step-1', 'running');
    expect(await page.textContent('.card[data-step="step-1"]')).toContain('@ hostA');

    await own.stop('fast');
    // The board's reads wait for the server (a long-lived store retries); after 3 s the page says so.
    await page.waitForSelector('#conn.conn-down', { timeout: 30_000 });
    expect(await page.textContent('#conn')).toMatch(/state unreadable: (Waiting|DatabaseUnavailable)/);
    await own.start();
    await page.waitForSelector('#conn.conn-live', { timeout: 60_000 });
    cli(['state', 'complete', 'demo', 'step-1', '--worktree', root, '--force', 'done by hand']);
    await waitLane(page, 'step-1', 'done');
    await waitLane(page, 'step-2', 'ready');
    expect(await watch.eventSources()).toBe(1);
    expect(watch.errors).toEqual([]);
    await page.close();
  }, 180_000);
});
