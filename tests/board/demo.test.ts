/**
 * `tugcode demo --board` in a browser (docs/board.md §1, README "The live board"): the run starts once the
 * page is open, a person can follow it (cards Running and Done side by side mid-run: the README's screenshot,
 * taken here), it ends with every step Done, and the board stays up until SIGINT, after which the temporary
 * repository is gone. `UPDATE_SCREENSHOTS=1` writes the screenshot to docs/board.png; otherwise it goes to a
 * temporary file and is only checked.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useBrowser, watchedPage } from '../helpers/browser.js';
import { CLI, ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/repo.js';
import { parseLines } from '../run/helpers.js';
import { boardLineOf, testEnv } from './helpers.js';
import { until } from './page.js';

const chrome = useBrowser();

const count = (page: import('playwright-core').Page, lane: string) => page.locator(`.lane-${lane} .card`).count();

describe('tugcode demo --board', () => {
  it('waits for the page, runs the demo at a watchable pace, stays up until SIGINT', async (ctx) => {
    const browser = chrome.get(ctx);
    const tmp = tempDir();
    const child = spawn(process.execPath, [CLI, 'demo', '--board', '--json'], { env: testEnv({ TMPDIR: tmp }) });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    const exited = new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
    try {
      const w = await boardLineOf(child);
      const demoLine = parseLines(out.split('\n').slice(0, -1).join('\n'))[0];
      expect(demoLine).toMatchObject({ type: 'demo', kept: false });
      // Nothing runs before a page is open.
      expect(out).not.toContain('"run_started"');
      const { page, watch } = await watchedPage(browser, { width: 1440, height: 820 });
      await page.goto(w.url);
      await page.waitForSelector('.plan h2:text("A receipt printer for the shop")', { timeout: 60_000 });
      // Mid-run: something done, something running, something still waiting.
      await page.waitForFunction(
        () => {
          const d = (globalThis as any).document;
          return (
            d.querySelectorAll('.lane-done .card').length >= 1 &&
            d.querySelectorAll('.lane-running .card').length >= 2 &&
            d.querySelectorAll('.lane-blocked .card').length >= 1
          );
        },
        null,
        { timeout: 60_000, polling: 50 },
      );
      const file = process.env.UPDATE_SCREENSHOTS === '1' ? join(ROOT, 'docs', 'board.png') : join(tmp, 'board.png');
      await page.screenshot({ path: file, animations: 'disabled' });
      const png = readFileSync(file);
      expect(png.subarray(1, 4).toString()).toBe('PNG');
      expect(png.length).toBeGreaterThan(20_000);
      await page.waitForFunction(
        () => (globalThis as any).document.querySelector('.pct')?.textContent.startsWith('7/7'),
        null,
        { timeout: 150_000 },
      );
      expect(await count(page, 'done')).toBe(7);
      expect(await watch.eventSources()).toBe(1);
      expect(watch.errors).toEqual([]);
      // The run is over; the board is still up.
      const summary = () => parseLines(out.split('\n').slice(0, -1).join('\n')).find((e) => e.type === 'summary');
      expect(await until('the summary line', summary)).toMatchObject({ status: 'ok', failed_steps: [] });
      expect(child.exitCode).toBeNull();
      await page.waitForSelector('#conn.conn-live');
      child.kill('SIGINT');
      expect(await exited).toBe(0);
      expect(existsSync(demoLine.repo_root)).toBe(false);
      await page.close();
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, 300_000);
});
