/**
 * Revise… or Reject… from the board with notes of blanks only (docs/board.md §6): the confirmation stays
 * open and says why, as `state decide --revise "  "` refuses it, instead of doing nothing a person can see.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { useBrowser, watchedPage } from '../helpers/browser.js';
import { runCli } from '../helpers/cli.js';
import { planText, runJsonl, runRepo, step } from '../run/helpers.js';
import { implementer, reviewerScript } from '../run/review-helpers.js';
import { startBoardCli, type BoardChild } from './helpers.js';
import { waitLane } from './page.js';

const chrome = useBrowser();
const boards: BoardChild[] = [];
afterAll(async () => {
  for (const b of boards) await b.stop();
});

describe('the board’s decide confirmation', () => {
  for (const [act, what] of [
    ['revise', 'notes'],
    ['reject', 'reason'],
  ])
    it(`${act} with blanks only says the ${what} are needed and sends nothing`, async (ctx) => {
      const browser = chrome.get(ctx);
      const root = runRepo(planText([step(1, 'One')]), 'demo');
      const rev = reviewerScript();
      rev.answer('step-1', ['ESCALATE']);
      const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', implementer().argv, '--reviewer', rev.argv]);
      expect(r.code, r.stdout + r.stderr).toBe(4);
      const board = await startBoardCli(root, ['--allow-actions']);
      boards.push(board);
      const { page, watch } = await watchedPage(browser);
      const posts: string[] = [];
      page.on('request', (q) => {
        if (q.method() === 'POST') posts.push(q.url());
      });
      await page.goto(board.url);
      await waitLane(page, 'step-1', 'needs_you');
      await page.click(`.card[data-step="step-1"] [data-act="${act}"]`);
      await page.waitForSelector('#confirm[open]');
      await page.fill('#c-field', '   ');
      await page.click('#c-ok');
      await page.waitForTimeout(300);
      expect(await page.$('#confirm[open]')).not.toBeNull();
      expect(await page.$eval('#c-field', (e: any) => e.validationMessage)).toMatch(
        new RegExp(`${what} .*not only blanks`),
      );
      expect(posts).toEqual([]);
      const show = runCli(['state', 'show', 'demo', '--json'], { cwd: root });
      expect(JSON.parse(show.stdout).plans[0].steps[0].status).toBe('needs_human');
      expect(watch.errors).toEqual([]);
    });
});
