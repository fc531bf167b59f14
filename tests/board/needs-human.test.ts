/**
 * A reviewer's escalation decided from the board (docs/board.md §3, §6), as a user runs it: a real
 * `tugcode run` whose reviewer answers ESCALATE for three steps exits 4 NeedsHuman; `tugcode board
 * --allow-actions` shows them in Needs you with the reviewer's reason; Approve, Revise… and Reject… from
 * the page, each after its confirmation, answer the CLI's `state decide` envelope and append its event
 * (actor admin); the next `tugcode run` integrates the approved commit without running the implementer
 * again, runs the revised step again with the notes in its brief, and leaves the rejected one failed. The
 * step's detail shows its usage per attempt and per role.
 */
import type { Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { schemaFor } from '../../src/contract/schemas/index.js';
import { useBrowser, watchedPage } from '../helpers/browser.js';
import { runCli } from '../helpers/cli.js';
import { git } from '../helpers/repo.js';
import { planText, runJsonl, runRepo, step, stepCommits } from '../run/helpers.js';
import { implementer, reviewerScript } from '../run/review-helpers.js';
import { startBoardCli, type BoardChild } from './helpers.js';
import { waitLane } from './page.js';

const chrome = useBrowser();
/** A person's reason as long as people write them. */
const NOT_WANTED = `not wanted: ${'the migration rewrites every row without a backup, and nobody asked for it; '.repeat(3).trim()}`;
let board: BoardChild | undefined;
afterAll(async () => {
  await board?.stop();
});

/**
 * The agents of tests/run/review-helpers.ts: an implementer that revises on human notes and reports $0.25 ×
 * its run of the step; a reviewer that answers `answers[step]` in order (the last one repeats).
 */
function agents(answers: Record<string, string[]>) {
  const impl = implementer({ billed: true });
  const rev = reviewerScript();
  for (const [s, v] of Object.entries(answers)) rev.answer(s, v);
  return {
    args: ['--implementer', impl.argv, '--reviewer', rev.argv],
    runs: impl.runs,
    briefs: impl.briefs,
    reviews: (s: string): number => rev.inputs(s).length,
  };
}

/** Clicks a card's action, checks the confirmation's command, fills in `text`, confirms: the answer's JSON. */
async function act(page: Page, stepAnchor: string, action: string, command: string, text?: string): Promise<any> {
  await page.click(`.card[data-step="${stepAnchor}"] [data-act="${action}"]`);
  await page.waitForSelector('#confirm[open]');
  expect(await page.textContent('#c-command')).toBe(command);
  if (text !== undefined) await page.fill('#c-field', text);
  const answer = page.waitForResponse((r) => r.url().includes('/api/action') && r.request().method() === 'POST');
  await page.click('#c-ok');
  const r = await answer;
  expect(r.status()).toBe(200);
  await page.waitForSelector(`#toast:text("done: state decide ${stepAnchor}")`);
  return r.json();
}

/** The action buttons and the command of a step's card that do not lie wholly inside the card. */
function clipped(page: Page, stepAnchor: string): Promise<string[]> {
  return page.evaluate((s) => {
    const card = (globalThis as any).document.querySelector(`.card[data-step="${s}"]`);
    const box = card.getBoundingClientRect();
    return [...card.querySelectorAll('[data-act], pre.command')]
      .filter((b: any) => {
        const r = b.getBoundingClientRect();
        return r.left < box.left || r.right > box.right || r.top < box.top || r.bottom > box.bottom;
      })
      .map((b: any) => (b.dataset.act ?? 'command') as string);
  }, stepAnchor);
}

/** The latest event of a step, as `state log` shows it. */
function lastEvent(root: string, s: string): any {
  const r = runCli(['state', 'log', 'demo', '--step', s, '--limit', '1', '--json'], { cwd: root });
  expect(r.code, r.stderr).toBe(0);
  return r.json.events[0];
}

describe('needs_human decided from the board', () => {
  it('Approve, Revise and Reject from the page are `state decide`; the next run integrates the approved commit without the implementer', async (ctx) => {
    const browser = chrome.get(ctx);
    const root = runRepo(
      planText([step(1, 'One'), step(2, 'Two'), step(3, 'Three'), step(4, 'Four', { deps: [1] })]),
      'demo',
    );
    const a = agents({ 'step-1': ['ESCALATE'], 'step-2': ['ESCALATE', 'APPROVE'], 'step-3': ['ESCALATE'] });
    const args = ['demo', '--workers', '2', ...a.args];
    const first = runJsonl(root, args);
    expect(first.code, first.stdout + first.stderr).toBe(4);
    expect(first.events.at(-1)).toMatchObject({ type: 'summary', status: 'error', error: { code: 'NeedsHuman' } });
    expect(
      first.events
        .at(-1)
        .needs_human.map((n: any) => n.step_anchor)
        .sort(),
    ).toEqual(['step-1', 'step-2', 'step-3']);
    const kept = git(root, 'rev-parse', 'refs/tugplan/review/demo/step-1').trim();
    expect(stepCommits(root, 'tugplan/demo')).toEqual([]);

    board = await startBoardCli(root, ['--allow-actions']);
    const { page, watch } = await watchedPage(browser);
    await page.goto(board.url);
    for (const s of ['step-1', 'step-2', 'step-3']) await waitLane(page, s, 'needs_you');
    await waitLane(page, 'step-4', 'blocked');
    expect(await page.textContent('.lane-needs_you .n')).toBe('3');
    const card1 = await page.textContent('.card[data-step="step-1"]');
    expect(card1).toContain('needs human');
    expect(card1).toContain('ESCALATE in round 1');
    // The three choices, not only --approve: on the card in one line, in the detail one command a line.
    expect(card1).toContain('tugcode state decide demo step-1 --approve | --revise "<notes>" | --reject "<reason>"');
    await page.click('.card[data-step="step-1"] .c-title');
    await page.waitForSelector('#d-body pre.command');
    expect(await page.textContent('#d-body pre.command')).toBe(
      [
        'tugcode state decide demo step-1 --approve',
        'tugcode state decide demo step-1 --revise "<notes>"',
        'tugcode state decide demo step-1 --reject "<reason>"',
      ].join('\n'),
    );
    await page.click('#d-close');
    await page.waitForSelector('#detail', { state: 'hidden' });
    // Every button inside its card (a card has one fixed height), on a wide window and on a half-screen one.
    for (const width of [1400, 960]) {
      await page.setViewportSize({ width, height: 900 });
      expect(await clipped(page, 'step-1'), `at ${width} px`).toEqual([]);
    }
    await page.setViewportSize({ width: 1400, height: 900 });

    // Approve: the CLI's envelope, its event with actor admin; the card waits in Ready with the kept commit.
    const decide = schemaFor('state decide');
    const approved = await act(page, 'step-1', 'approve', 'tugcode state decide demo step-1 --approve');
    expect(decide.safeParse(approved).error).toBeUndefined();
    expect(approved).toMatchObject({
      status: 'ok',
      command: 'state decide',
      step_anchor: 'step-1',
      decision: 'approve',
      step_status: 'pending',
      review_commit: kept,
      warnings: [],
    });
    expect(lastEvent(root, 'step-1')).toMatchObject({
      command: 'state decide',
      actor: 'admin',
      details: { decision: 'approve', status: 'pending', review_commit: kept },
    });
    await waitLane(page, 'step-1', 'ready');
    expect(await page.textContent('.card[data-step="step-1"]')).toContain(
      `approved ${kept.slice(0, 10)}the next run integrates it`,
    );

    // Revise… asks for the notes; Reject… for the reason.
    const revised = await act(
      page,
      'step-2',
      'revise',
      "tugcode state decide demo step-2 --revise '<notes>'",
      'name it after the ticket',
    );
    expect(decide.safeParse(revised).error).toBeUndefined();
    expect(revised).toMatchObject({ decision: 'revise', step_status: 'pending', review_commit: null });
    expect(lastEvent(root, 'step-2')).toMatchObject({
      command: 'state decide',
      actor: 'admin',
      details: { decision: 'revise', notes: 'name it after the ticket' },
    });
    const rejected = await act(
      page,
      'step-3',
      'reject',
      "tugcode state decide demo step-3 --reject '<reason>'",
      NOT_WANTED,
    );
    expect(decide.safeParse(rejected).error).toBeUndefined();
    expect(rejected).toMatchObject({ decision: 'reject', step_status: 'failed', review_commit: null });
    expect(lastEvent(root, 'step-3')).toMatchObject({
      command: 'state decide',
      actor: 'admin',
      details: { decision: 'reject', reason: NOT_WANTED },
    });
    await waitLane(page, 'step-2', 'ready');
    // step-3 stays in Needs you (failed now): its card, not its lane, says the snapshot after the decision arrived.
    await waitLane(page, 'step-3', 'needs_you');
    await page.waitForSelector('.card[data-step="step-3"]:has-text("not wanted")');
    // Its attempts' headers each on one line: a long owner path and reason do not squeeze a column to a letter a
    // line (docs/board.md §4), in the drawer beside the lanes and on a phone's whole screen.
    await page.click('.card[data-step="step-3"] .c-title');
    await page.waitForSelector('#d-body table.attempts tr[data-attempt="1"]:has-text("not wanted")');
    for (const width of [1400, 400]) {
      await page.setViewportSize({ width, height: 900 });
      // The lines each header's text is laid out on (one rect per line).
      const lines = await page.$$eval('#d-body table.attempts th', (ths) =>
        ths.map((th) => {
          const r = (globalThis as any).document.createRange();
          r.selectNodeContents(th);
          return `${th.textContent}: ${r.getClientRects().length}`;
        }),
      );
      expect(lines, `at ${width} px`).toEqual(['#: 1', 'owner: 1', 'started: 1', 'outcome: 1', 'usage: 1']);
    }
    await page.setViewportSize({ width: 1400, height: 900 });
    await page.click('#d-close');
    await page.waitForSelector('#detail', { state: 'hidden' });
    // Revise and reject discard the kept work; approve keeps it for the next run.
    expect(git(root, 'for-each-ref', '--format=%(refname)', 'refs/tugplan/review/').trim()).toBe(
      'refs/tugplan/review/demo/step-1',
    );

    // The next run: step-1 integrated as approved (no implementer, no reviewer), step-2 again with the notes.
    const second = runJsonl(root, args);
    expect(second.code, second.stdout + second.stderr).toBe(4);
    expect(second.events.at(-1)).toMatchObject({ error: { code: 'PlanIncomplete' } });
    expect(a.runs('step-1')).toEqual(['attempt 1']);
    expect(a.reviews('step-1')).toBe(1);
    expect(a.runs('step-2')).toEqual(['attempt 1', 'attempt 2']);
    expect(a.briefs('step-2').at(-1).human_notes).toBe('name it after the ticket');
    expect(a.runs('step-3')).toEqual(['attempt 1']);
    const commits = stepCommits(root, 'tugplan/demo');
    expect(commits.filter((s) => s === 'step-1')).toHaveLength(1);
    expect([...commits].sort()).toEqual(['step-1', 'step-2', 'step-4']);
    expect(git(root, 'show', 'tugplan/demo:step-1.txt')).toBe('step-1\n');
    expect(git(root, 'show', 'tugplan/demo:step-2.txt')).toBe('step-2 revised\n');
    expect(git(root, 'for-each-ref', 'refs/tugplan/review/').trim()).toBe('');

    // The page followed without a reload: step-1's card shows the commit on the integration branch.
    for (const s of ['step-1', 'step-2', 'step-4']) await waitLane(page, s, 'done');
    await waitLane(page, 'step-3', 'needs_you');
    const integrated = git(root, 'log', '--format=%H', '--grep', 'Tug-Step: step-1', 'tugplan/demo').trim();
    expect(await page.textContent('.card[data-step="step-1"]')).toContain(`commit ${integrated.slice(0, 10)}`);

    // step-2's detail: two attempts, each with what its implementer used; the step's total per role.
    await page.click('.card[data-step="step-2"]');
    await page.waitForSelector('#d-body table.attempts tr[data-attempt="2"]');
    const row = (n: number) => page.textContent(`#d-body tr[data-attempt="${n}"]`);
    expect(await row(1)).toContain('decided: revise: name it after the ticket');
    expect(await row(1)).toContain('$0.25 · 1,100 tokens');
    expect(await page.textContent('#d-body tr[data-attempt="1"] .role[data-role="implementer"]')).toBe(
      'implementer $0.25 · 1,100 tokens',
    );
    expect(await row(2)).toMatch(/completed .*\$0\.50 · 2,100 tokens/);
    expect(await page.textContent('#d-body dd .role[data-role="implementer"]')).toBe(
      'implementer $0.75 · 3,200 tokens (2 runs)',
    );
    expect(await watch.eventSources()).toBe(1);
    expect(watch.errors).toEqual([]);
    await page.close();
  }, 240_000);
});
