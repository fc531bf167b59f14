/**
 * The board's stall hint follows the run's own watchdog (docs/board.md §3): a run given `--stall-seconds`
 * lets its implementer be silent that long, so the board must not call the step stalled (Needs you) after
 * the configuration's shorter `stall_seconds` while the run still waits for it.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { useBrowser, watchedPage } from '../helpers/browser.js';
import { planText, runRepo, startRun, step } from '../run/helpers.js';
import { startBoardCli, whereOf, type BoardChild } from './helpers.js';
import { gatedImplementer, laneOf, serverSnapshot, until, waitLane } from './page.js';

const chrome = useBrowser();
let board: BoardChild | undefined;
afterAll(async () => {
  await board?.stop();
});

describe('the board and a run given --stall-seconds', () => {
  it('keeps a silent step Running while the run’s own stall_seconds has not passed, beside the run and apart', async (ctx) => {
    const browser = chrome.get(ctx);
    // The configuration says 1 s; the run is told 600 s, so its watchdog leaves the silent implementer alone.
    const root = runRepo(planText([step(1, 'One')]), 'demo', { '.tugtool/config.toml': '[run]\nstall_seconds = 1\n' });
    const impl = gatedImplementer();
    const run = startRun(root, [
      'demo',
      '--workers',
      '1',
      '--implementer',
      impl.argv,
      '--stall-seconds',
      '600',
      '--board',
    ]);
    try {
      const line = await until('the board line', () => {
        if (run.child.exitCode !== null) throw new Error(`run ended: ${JSON.stringify(run.events().at(-1))}`);
        return run.events().find((e) => e.type === 'board');
      });
      const beside = whereOf(line);
      const { page, watch } = await watchedPage(browser);
      await page.goto(beside.url);
      await waitLane(page, 'step-1', 'running');
      // A board started apart reads the run's flags from its lock.
      board = await startBoardCli(root);
      const apart = await browser.newPage();
      await apart.goto(board.url);
      await waitLane(apart, 'step-1', 'running');
      // Silent for well past the configuration's 1 s, with the snapshot read again meanwhile.
      const since = Date.now();
      await until('3 s of silence', () => Date.now() - since > 3000);
      for (const w of [beside, board]) {
        const card = (await serverSnapshot(w)).snapshot.plans[0].cards[0];
        expect(card.lane, JSON.stringify(card.need)).toBe('running');
      }
      expect(await laneOf(page, 'step-1')).toBe('running');
      expect(await laneOf(apart, 'step-1')).toBe('running');
      impl.open('step-1');
      await waitLane(page, 'step-1', 'done');
      expect(watch.errors).toEqual([]);
      expect((await run.done).code).toBe(0);
    } finally {
      run.child.kill('SIGKILL');
    }
  });
});
