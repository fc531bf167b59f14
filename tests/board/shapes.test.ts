/**
 * The page with the state's shapes of what comes next (docs/board.md §3, §6), in a real browser: a
 * `needs_human` step with the reviewer's reason and its decide buttons, a step's usage and the cost totals, a
 * stalled step under a configured watchdog, an expired claim and a status the board does not know. The
 * snapshot is shaped by src/board/model.ts from `state show`-shaped rows and served by the real server; the
 * page's action requests are caught in the browser, so this checks what the page sends, whatever the
 * operation answers.
 */
import type { Request } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { shapeSnapshot, type BoardRead, type ShownStep } from '../../src/board/model.js';
import { startServer, type BoardServer } from '../../src/board/server.js';
import { OpsContext } from '../../src/ops/context.js';
import { useBrowser, watchedPage } from '../helpers/browser.js';
import { tempRepo } from '../helpers/repo.js';
import { shownStep } from './helpers.js';
import { waitLane } from './page.js';

const chrome = useBrowser();
let server: BoardServer | undefined;
afterAll(async () => {
  await server?.close();
});

const NOW = new Date().toISOString();
const ago = (s: number) => new Date(Date.now() - s * 1000).toISOString();
const later = (s: number) => new Date(Date.now() + s * 1000).toISOString();

const step = (n: number, o: Partial<ShownStep> = {}) => shownStep(`step-${n}`, o);

const READ: BoardRead = {
  plans: [
    {
      plan_path: '.tugtool/tugplan-demo.md',
      phase_title: 'Shapes to come',
      status: 'active',
      overall: { steps_completed: 1, steps_total: 6, percent: 16 },
      usage: null,
      steps: [
        step(1, {
          status: 'completed',
          commit_hash: 'a'.repeat(40),
          completed_at: ago(60),
          usage: {
            input_tokens: 1200,
            output_tokens: 300,
            cache_read_tokens: 0,
            cache_write_tokens: 0,
            tokens: 1500,
            cost_usd: 0.5,
            reports: 1,
            unpriced: 0,
            by_role: { implementer: { tokens: 1500, cost_usd: 0.5, reports: 1 } },
          },
        }),
        step(2, { status: 'needs_human', attempt: 1, review_commit: 'b'.repeat(40) }),
        step(3, {
          status: 'in_progress',
          attempt: 2,
          claimed_by: '/r/.tugtree/tugplan__demo--w1',
          lease_expires_at: later(3600),
          heartbeat_at: ago(5),
          started_at: ago(1500),
        }),
        step(4, {
          status: 'claimed',
          attempt: 1,
          claimed_by: '/r/.tugtree/tugplan__demo--w2',
          lease_expires_at: ago(30),
          lease_expired: true,
        }),
        step(5, { status: 'quarantined' }),
        step(6, { blocked_by: ['step-2'], depends_on: ['step-2'] }),
      ],
    },
  ],
  backend: { kind: 'sqlite', location: '/r/.tugtool/state.db' },
  repo_root: '/r',
  stall_seconds: 600,
};
// A second plan whose run was killed: its claim's lease has an hour left (docs/board.md §3, dead_run).
READ.plans.push({
  plan_path: '.tugtool/tugplan-killed.md',
  phase_title: 'A killed run',
  status: 'active',
  overall: { steps_completed: 0, steps_total: 1, percent: 0 },
  usage: null,
  steps: [
    shownStep('step-k', {
      status: 'in_progress',
      attempt: 1,
      claimed_by: '/r/.tugtree/tugplan__killed--w1',
      lease_expires_at: later(3600),
      heartbeat_at: ago(60),
      started_at: ago(120),
    }),
  ],
});
READ.run_drivers = {
  '.tugtool/tugplan-killed.md': {
    pid: 4242,
    host: 'here',
    started_at: ago(200),
    alive: false,
    command: 'tugcode run .tugtool/tugplan-killed.md --workers 1',
  },
};

describe('the page with the shapes of what comes next', () => {
  it('needs_human with decide buttons, usage and cost, stalled, expired and unknown statuses', async (ctx) => {
    const browser = chrome.get(ctx);
    const activity = (_p: string, a: string) =>
      a === 'step-2'
        ? { events: { at: ago(20), reason: 'the change drops a public export' } }
        : a === 'step-3'
          ? { files: { phase: 'implementer', at: ago(1200) } }
          : undefined;
    const snapshot = shapeSnapshot(READ, activity, { now: NOW, allow_actions: true });
    const published = { hash: 'h1', json: JSON.stringify({ hash: 'h1', at: NOW, snapshot }), snapshot };
    const source = {
      snapshot: published,
      status: null,
      now: async () => published,
      subscribe: () => () => {},
      refreshSoon: () => {},
    };
    const token = 't'.repeat(32);
    const ops = new OpsContext({ cwd: tempRepo(), env: process.env });
    server = await startServer({
      source: source as never,
      ctx: ops,
      host: '127.0.0.1',
      port: 0,
      token,
      allowActions: true,
      mainRoot: '/nonexistent',
    });
    const { page, watch } = await watchedPage(browser);
    const sent: { body: any; token: string | undefined }[] = [];
    await page.route('**/api/action', async (route) => {
      const req: Request = route.request();
      const body = req.postDataJSON();
      sent.push({ body, token: req.headers()['x-tug-token'] });
      await route.fulfill({
        status: 200,
        contentType: 'application/json',
        body: JSON.stringify({ status: 'ok', schema_version: '1', command: 'state decide', warnings: [] }),
      });
    });
    await page.goto(`http://127.0.0.1:${server.port}/?token=${token}`);
    await waitLane(page, 'step-2', 'needs_you');
    const human = await page.textContent('.card[data-step="step-2"]');
    expect(human).toContain('needs human');
    expect(human).toContain('the change drops a public export');
    // All three choices on the card, not only --approve.
    expect(human).toContain('tugcode state decide demo step-2 --approve | --revise "<notes>" | --reject "<reason>"');
    await waitLane(page, 'step-3', 'needs_you');
    expect(await page.textContent('.card[data-step="step-3"]')).toMatch(
      /no activity since .* watchdog ends an attempt silent for 600 s/,
    );
    await waitLane(page, 'step-4', 'needs_you');
    expect(await page.textContent('.card[data-step="step-4"] [data-act]')).toBe('Release claim');
    // A dead run's claim with lease left: the run that takes it over, and no button that the state would refuse.
    await waitLane(page, 'step-k', 'needs_you');
    const dead = await page.textContent('.card[data-step="step-k"]');
    expect(dead).toContain('tugcode run .tugtool/tugplan-killed.md --workers 1');
    expect(dead).toContain('unless a new run takes it over');
    expect(await page.$$('.card[data-step="step-k"] [data-act]')).toEqual([]);
    await waitLane(page, 'step-5', 'needs_you');
    expect(await page.textContent('.card[data-step="step-5"]')).toContain('quarantined');
    await waitLane(page, 'step-6', 'blocked');
    expect(await page.textContent('#totals')).toBe('cost $0.50 · 1,500 tokens');
    expect(await page.textContent('.card[data-step="step-1"]')).toContain('$0.50');

    // Revise: the notes are required; the confirmation shows the command they make.
    await page.click('.card[data-step="step-2"] [data-act="revise"]');
    await page.waitForSelector('#confirm[open]');
    expect(await page.textContent('#c-command')).toBe("tugcode state decide demo step-2 --revise '<notes>'");
    await page.click('#c-ok');
    expect(await page.isVisible('#confirm[open]')).toBe(true);
    expect(sent).toEqual([]);
    await page.fill('#c-field', 'split the migration');
    await page.click('#c-ok');
    await page.waitForSelector('#toast:text("done: state decide step-2")');
    await page.click('.card[data-step="step-2"] [data-act="approve"]');
    expect(await page.textContent('#c-command')).toBe('tugcode state decide demo step-2 --approve');
    await page.click('#c-ok');
    await page.click('.card[data-step="step-2"] [data-act="reject"]');
    await page.fill('#c-field', 'out of scope');
    await page.click('#c-ok');
    // A cancelled one sends nothing.
    await page.click('.card[data-step="step-4"] [data-act="release"]');
    expect(await page.textContent('#c-command')).toBe('tugcode state reset demo step-4');
    expect(await page.textContent('#c-text')).toMatch(/^step-4's claim \(.*--w2\) ran out at .*: releasing it/);
    await page.click('#c-cancel');
    await page.waitForFunction(() => !(globalThis as any).document.getElementById('confirm').open);
    expect(sent).toEqual([
      {
        body: {
          action: 'decide',
          plan: '.tugtool/tugplan-demo.md',
          step: 'step-2',
          decision: 'revise',
          notes: 'split the migration',
        },
        token,
      },
      { body: { action: 'decide', plan: '.tugtool/tugplan-demo.md', step: 'step-2', decision: 'approve' }, token },
      {
        body: {
          action: 'decide',
          plan: '.tugtool/tugplan-demo.md',
          step: 'step-2',
          decision: 'reject',
          reason: 'out of scope',
        },
        token,
      },
    ]);
    expect(await watch.eventSources()).toBe(1);
    expect(watch.errors).toEqual([]);
    await page.close();
    await ops.close();
  }, 120_000);
});
