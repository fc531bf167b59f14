/**
 * What the board shows of a reviewed step (docs/board.md §4), in a real browser after a real `tugcode run`
 * whose reviewer escalated: the drawer lists the reviewer's output (`<step>-review<k>-attempt<N>.out`, where
 * its verdict is) beside its log, and shows it first when the log is empty; it names the kept commit.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { useBrowser, watchedPage } from '../helpers/browser.js';
import { git } from '../helpers/repo.js';
import { planText, runJsonl, runRepo, step, tugJson } from '../run/helpers.js';
import { implementer, reviewerScript } from '../run/review-helpers.js';
import { startBoardCli, type BoardChild } from './helpers.js';
import { waitLane } from './page.js';

const chrome = useBrowser();
let board: BoardChild | undefined;
afterAll(async () => {
  await board?.stop();
});

describe('a reviewed step on the board', () => {
  it("the drawer of an escalated step lists the reviewer's output and shows its verdict", async (ctx) => {
    const browser = chrome.get(ctx);
    const root = runRepo(planText([step(1, 'One'), step(2, 'Two', { deps: [1] })]), 'demo');
    const impl = implementer();
    const rev = reviewerScript();
    rev.answer('step-1', ['ESCALATE']);
    const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv, '--reviewer', rev.argv]);
    expect(r.code, r.stdout + r.stderr).toBe(4);

    board = await startBoardCli(root, []);
    const { page, watch } = await watchedPage(browser);
    await page.goto(board.url);
    await waitLane(page, 'step-1', 'needs_you');
    await page.click('.card[data-step="step-1"] .c-title');
    await page.waitForSelector('#d-logs option', { state: 'attached' });
    const options = await page.$$eval('#d-logs option', (os) => os.map((o: any) => o.value as string));
    expect(options).toContain('step-1-review1-attempt1.out');
    expect(options).toContain('step-1-review1-attempt1.log');
    // Shown first: the output holding the verdict and its summary, not an empty log.
    expect(await page.inputValue('#d-logs')).toBe('step-1-review1-attempt1.out');
    await page.waitForSelector('#d-log:has-text("ESCALATE in round 1")');
    expect(await page.textContent('#d-log')).toContain('"verdict":"ESCALATE"');
    // The kept commit the escalation is about, which --approve integrates (docs/board.md §4).
    const kept = git(root, 'rev-parse', 'refs/tugplan/review/demo/step-1').trim();
    expect(await page.textContent('#d-body .kept')).toBe(
      `kept commit ${kept.slice(0, 10)}: --approve integrates it, --revise and --reject drop it`,
    );
    expect(watch.errors).toEqual([]);
  });

  it("a revised step's Ready card shows the human's notes for its next attempt", async (ctx) => {
    const browser = chrome.get(ctx);
    const root = runRepo(planText([step(1, 'One'), step(2, 'Two', { deps: [1] })]), 'demo');
    const impl = implementer();
    const rev = reviewerScript();
    rev.answer('step-1', ['ESCALATE']);
    const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv, '--reviewer', rev.argv]);
    expect(r.code, r.stdout + r.stderr).toBe(4);
    const d = tugJson(root, ['state', 'decide', 'demo', 'step-1', '--revise', 'name it after the ticket']);
    expect(d.code, d.stderr).toBe(0);

    await board?.stop();
    board = await startBoardCli(root, []);
    const { page, watch } = await watchedPage(browser);
    await page.goto(board.url);
    await waitLane(page, 'step-1', 'ready');
    expect(await page.textContent('.card[data-step="step-1"]')).toContain('your notes: "name it after the ticket"');
    expect(watch.errors).toEqual([]);
  });
});
