/**
 * `state log` says when its --limit left events out (docs/state.md §4): `omitted` in the JSON, and a line
 * in the text naming how many and how to see them: older ones for the latest page, newer ones with
 * --after-id.
 */
import { describe, expect, it } from 'vitest';
import { renderLog } from '../../src/state/log-text.js';
import { at } from './helpers.js';
import { cliRepo, st, stText } from './cli-helpers.js';

/** The demo plan initialized, then claimed and released three times: 7 events (ids 1–7). */
function sevenEvents(): string {
  const { root } = cliRepo();
  for (let i = 0; i < 3; i++) {
    expect(st(root, ['claim', 'demo'], { now: at(10 * i) }).json.claimed).toBe(true);
    expect(st(root, ['release', 'demo', 'step-0'], { now: at(10 * i + 5) }).json.status).toBe('ok');
  }
  return root;
}

describe('state log: events the limit left out', () => {
  it('the latest page names the older events left out; a page that holds them all says nothing', () => {
    const root = sevenEvents();
    const page = st(root, ['log', 'demo', '--limit', '3']).json;
    expect(page.events.map((e: { id: number }) => e.id)).toEqual([5, 6, 7]);
    expect(page.omitted).toBe(4);
    const text = stText(root, ['log', 'demo', '--limit', '3']).stdout.split('\n');
    expect(text[0]).toBe('Plan: .tugtool/tugplan-demo.md');
    expect(text[1]).toBe('… 4 older events not shown (--limit 7 to see them)');

    // What the line says to run shows everything, and says nothing more.
    expect(st(root, ['log', 'demo', '--limit', '7']).json).toMatchObject({ omitted: 0 });
    expect(stText(root, ['log', 'demo', '--limit', '7']).stdout).not.toContain('not shown');
    // The default limit (50) holds these 7.
    expect(st(root, ['log', 'demo']).json.omitted).toBe(0);
    expect(stText(root, ['log']).stdout).not.toContain('not shown');
  });

  it('counts within the filter (--step); with --after-id the newer events left out, and the next page', () => {
    const root = sevenEvents();
    // Every event but the init is step-0's.
    expect(st(root, ['log', 'demo', '--step', 'step-0', '--limit', '2']).json.omitted).toBe(4);
    const page = st(root, ['log', 'demo', '--after-id', '1', '--limit', '2']).json;
    expect(page.events.map((e: { id: number }) => e.id)).toEqual([2, 3]);
    expect(page).toMatchObject({ omitted: 4, next_after_id: 3 });
    const text = stText(root, ['log', 'demo', '--after-id', '1', '--limit', '2']).stdout.trimEnd().split('\n');
    expect(text.at(-1)).toBe('… 4 newer events not shown (--after-id 3 for the next page)');
    expect(st(root, ['log', 'demo', '--after-id', '5', '--limit', '2']).json).toMatchObject({ omitted: 0 });
  });

  it('past the largest limit the line points at paging from the oldest', () => {
    const e = {
      id: 5000,
      at: '2026-03-01T10:00:00.000Z',
      plan_path: 'p',
      step_anchor: null,
      command: 'x',
      actor: 'admin',
      attempt: null,
      details: {},
    };
    expect(renderLog([e], { omitted: 2000, limit: 50 }).split('\n')[1]).toBe(
      '… 2000 older events not shown (--limit 1000 for the latest 1000, or --after-id 0 to page from the oldest)',
    );
    expect(renderLog([e], { omitted: 1, limit: 1000 }).split('\n')[1]).toBe(
      '… 1 older event not shown (--after-id 0 to page from the oldest)',
    );
  });
});
