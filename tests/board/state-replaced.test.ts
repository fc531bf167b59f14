/**
 * A state.db removed or replaced while `tugcode board` is up (docs/board.md §5): the page follows the file
 * the CLI reads, not the one the board opened first. Removed: no plan, as a board started without a
 * state.db shows; made again (`tugcode state init`): the new state, its step Ready again.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
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

describe('tugcode board when state.db is removed', () => {
  it('shows what the state now holds: no plan once the file is gone, the new state once it is made again', async (ctx) => {
    const browser = chrome.get(ctx);
    const root = runRepo(planText([step(1, 'One')]), 'demo');
    const ok = runJsonl(root, ['demo', '--workers', '1', '--implementer', 'true', '--no-checkpoints']);
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
    board = await startBoardCli(root);
    const { page, watch } = await watchedPage(browser);
    await page.goto(board.url);
    await waitLane(page, 'step-1', 'done');

    for (const f of ['state.db', 'state.db-wal', 'state.db-shm']) rmSync(join(root, '.tugtool', f), { force: true });
    const status = runCli(['status', '--json'], { cwd: root });
    expect(JSON.parse(status.stdout).plans[0].source).not.toBe('state');
    await page.waitForSelector('#empty:not([hidden])', { timeout: 15_000 });
    expect(await page.$('.card[data-step="step-1"]')).toBeNull();

    const init = runCli(['state', 'init', 'demo'], { cwd: root });
    expect(init.code, init.stderr).toBe(0);
    await waitLane(page, 'step-1', 'ready', 15_000);
    expect(watch.errors).toEqual([]);
  });
});
