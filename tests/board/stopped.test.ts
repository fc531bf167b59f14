/**
 * A page whose board stopped (docs/board.md §5): Ctrl-C, or the run it ran beside ended. The page says the
 * board stopped and that what it shows is the state as it was then — not an endless "reconnecting…" a
 * person back after an hour cannot tell from a live run — and carries on once a board is started again.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { useBrowser, watchedPage } from '../helpers/browser.js';
import { planText, runJsonl, runRepo, step } from '../run/helpers.js';
import { startBoardCli, type BoardChild } from './helpers.js';
import { waitLane } from './page.js';

const chrome = useBrowser();
const boards: BoardChild[] = [];
afterAll(async () => {
  for (const b of boards) await b.stop();
});

describe('a page whose board stopped', () => {
  it('says the board stopped, and is live again once tugcode board runs again', async (ctx) => {
    const browser = chrome.get(ctx);
    const root = runRepo(planText([step(1, 'One')]), 'demo');
    const ok = runJsonl(root, ['demo', '--workers', '1', '--implementer', 'true', '--no-checkpoints']);
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
    const first = await startBoardCli(root);
    boards.push(first);
    const { page, watch } = await watchedPage(browser);
    await page.goto(first.url);
    await waitLane(page, 'step-1', 'done');
    await page.waitForSelector('#conn:text("live")');
    expect(await first.stop('SIGINT')).toBe(130);
    await page.waitForSelector('#conn:text("board stopped")', { timeout: 10_000 });
    // Still so after EventSource's own retries (every second) have failed a few times.
    await page.waitForTimeout(2500);
    expect(await page.textContent('#conn')).toMatch(
      /^board stopped: the page shows the state when it stopped; tugcode board serves this page again/,
    );
    expect(await page.$('.card[data-step="step-1"]')).not.toBeNull();
    const second = await startBoardCli(root);
    boards.push(second);
    expect(second.url).toBe(first.url);
    await page.waitForSelector('#conn:text("live")', { timeout: 40_000 });
    expect(watch.errors.filter((e) => !/ERR_CONNECTION_REFUSED/.test(e))).toEqual([]);
  });
});
