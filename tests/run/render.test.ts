/* eslint-disable no-control-regex -- these tests read terminal escape sequences */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runEventSchema } from '../../src/contract/schemas/run.js';
import { createRenderer, summaryText, type RenderMode } from '../../src/run/render.js';
import type { RunEvent, RunSummary } from '../../src/run/types.js';

const at = '2026-01-02T03:04:05.678Z';
const h1 = '1234567890ab'.padEnd(40, '0');
const h2 = 'abc123456789'.padEnd(40, 'f');

const summary: RunSummary = {
  status: 'error',
  steps_completed: ['step-1', 'step-3'],
  failed_steps: [{ step_anchor: 'step-2', reason: 'CheckpointFailed: `npm test` exited 1\nmore output' }],
  blocked_steps: ['step-4'],
  commits: [h1, h2],
  wall_ms: 20_000,
  workers: [
    { worker: 'w1', busy_ms: 15_000 },
    { worker: 'w2', busy_ms: 5_000 },
  ],
  error: { code: 'PlanIncomplete', message: 'step-2 failed; step-4 is blocked', details: {}, hint: 'fix it' },
};

/** A recorded stream, each event with the clock (ms since start) at which it arrives. */
const stream: [number, RunEvent][] = [
  [
    0,
    {
      type: 'run_started',
      at,
      plan_path: '.tugtool/tugplan-demo.md',
      integration_branch: 'tugplan/demo',
      base_branch: 'main',
      workers: 2,
    },
  ],
  [
    100,
    {
      type: 'claimed',
      at,
      worker: 'w1',
      step_anchor: 'step-1',
      attempt: 1,
      resumed: false,
      reclaimed_from_expired: false,
    },
  ],
  [200, { type: 'phase', at, worker: 'w1', step_anchor: 'step-1', phase: 'reset' }],
  [
    300,
    {
      type: 'waiting',
      at,
      worker: 'w2',
      claimed_steps: ['step-1'],
      touches_held: [{ step_anchor: 'step-3', overlaps: 'step-1' }],
    },
  ],
  [1_000, { type: 'phase', at, worker: 'w1', step_anchor: 'step-1', phase: 'implementer' }],
  [13_000, { type: 'step_completed', at, worker: 'w1', step_anchor: 'step-1', commit_hash: h1 }],
  [
    13_100,
    {
      type: 'claimed',
      at,
      worker: 'w1',
      step_anchor: 'step-2',
      attempt: 1,
      resumed: false,
      reclaimed_from_expired: true,
    },
  ],
  [
    13_200,
    {
      type: 'claimed',
      at,
      worker: 'w2',
      step_anchor: 'step-3',
      attempt: 1,
      resumed: false,
      reclaimed_from_expired: false,
    },
  ],
  [13_300, { type: 'phase', at, worker: 'w2', step_anchor: 'step-3', phase: 'checkpoints' }],
  [
    14_000,
    {
      type: 'attempt_failed',
      at,
      worker: 'w1',
      step_anchor: 'step-2',
      attempt: 1,
      reason_code: 'CheckpointFailed',
      reason: 'CheckpointFailed: `npm test` exited 1\nmore output',
    },
  ],
  [15_000, { type: 'claim_lost', at, worker: 'w1', step_anchor: 'step-2', attempt: 2, error_code: 'LeaseExpired' }],
  [16_000, { type: 'step_completed', at, worker: 'w2', step_anchor: 'step-3', commit_hash: null }],
  [17_000, { type: 'worker_stopped', at, worker: 'w1', reason: 'done' }],
  [18_000, { type: 'worker_stopped', at, worker: 'w2', reason: 'signal' }],
  [20_000, { type: 'summary', at, ...summary }],
];

function play(mode: RenderMode, color: boolean, columns?: number) {
  let clock = 0;
  const writes: string[] = [];
  const r = createRenderer(mode, {
    write: (s) => writes.push(s),
    color,
    now: () => clock,
    steps_total: 4,
    steps_done: 0,
    workers: ['w1', 'w2'],
    plan_path: '.tugtool/tugplan-demo.md',
    columns,
  });
  const frames: string[] = [];
  for (const [t, e] of stream) {
    clock = t;
    r.event(e);
    frames.push(writes.at(-1)!);
  }
  r.close();
  return { writes, frames, out: writes.join('') };
}

/** What a terminal would show once the cursor movements are applied (only those the live view uses). */
function screen(out: string): string[] {
  const lines: string[] = [''];
  let row = 0;
  const re = /\x1b\[(\d*)([A-Za-z])|\r|\n|[^\x1b\r\n]+/g;
  for (const m of out.matchAll(re)) {
    const tok = m[0];
    if (tok === '\n') {
      row++;
      if (lines.length <= row) lines.push('');
    } else if (tok === '\r') {
      // column 0: the live view only writes whole lines after \r, so nothing to track
    } else if (m[2] === 'A') row = Math.max(0, row - Number(m[1] || 1));
    else if (m[2] === 'J') {
      lines.length = row + 1;
      lines[row] = '';
    } else if (!m[2]) lines[row] += tok;
  }
  return lines;
}

afterEach(() => vi.useRealTimers());

describe('lines renderer', () => {
  it('prints one readable line per event and leaves the summary to the caller', () => {
    const { out, writes } = play('lines', false);
    expect(out).toBe(
      [
        'run .tugtool/tugplan-demo.md: 2 workers, integrating into tugplan/demo (base main)',
        'w1 step-1 claimed (attempt 1)',
        'w1 step-1 → reset',
        'w2 waiting for step-1; held back by Touches: step-3 (overlaps step-1)',
        'w1 step-1 → implementer',
        'w1 step-1 completed 1234567890ab',
        'w1 step-2 claimed (attempt 1, taken over from an expired lease)',
        'w2 step-3 claimed (attempt 1)',
        'w2 step-3 → checkpoints',
        'w1 step-2 attempt 1 failed: CheckpointFailed `npm test` exited 1',
        'w1 step-2 attempt 2 lost its claim: LeaseExpired',
        'w2 step-3 completed (no commit)',
        'w1 stopped (done)',
        'w2 stopped (signal)',
        '',
      ].join('\n'),
    );
    expect(writes.every((w) => w.endsWith('\n') && w.indexOf('\n') === w.length - 1)).toBe(true);
  });

  it('prints a worker that keeps waiting for the same reason once, and again when the reason changes', () => {
    const writes: string[] = [];
    const r = createRenderer('lines', {
      write: (x) => writes.push(x),
      color: false,
      now: () => 0,
      steps_total: 4,
      steps_done: 0,
      workers: ['w1', 'w2'],
      plan_path: '.tugtool/tugplan-demo.md',
    });
    const wait = (claimed: string[]): RunEvent => ({ type: 'waiting', at, worker: 'w2', claimed_steps: claimed });
    for (const e of [wait(['step-1']), wait(['step-1']), wait(['step-1', 'step-2']), wait(['step-1', 'step-2'])])
      r.event(e);
    r.event({ type: 'phase', at, worker: 'w2', step_anchor: 'step-3', phase: 'reset' });
    r.event(wait(['step-1', 'step-2']));
    expect(writes.join('')).toBe(
      [
        'w2 waiting for step-1',
        'w2 waiting for step-1, step-2',
        'w2 step-3 → reset',
        'w2 waiting for step-1, step-2',
        '',
      ].join('\n'),
    );
  });

  it('says the failures against the cap beside an attempt number past the cap (docs/state.md §3.6)', () => {
    // Attempts count claims, interruptions included; the cap counts failures: attempt 6 under a cap of 3.
    const events: RunEvent[] = [
      {
        type: 'claimed',
        at,
        worker: 'w1',
        step_anchor: 'step-1',
        attempt: 6,
        resumed: false,
        reclaimed_from_expired: false,
        failures: 2,
        max_attempts: 3,
      },
      {
        type: 'claimed',
        at,
        worker: 'w2',
        step_anchor: 'step-2',
        attempt: 1,
        resumed: false,
        reclaimed_from_expired: false,
        failures: 0,
        max_attempts: 3,
      },
      {
        type: 'step_failed',
        at,
        worker: 'w1',
        step_anchor: 'step-1',
        failures: 3,
        reason: 'ImplementerFailed: x',
        max_attempts: 3,
      },
      {
        type: 'step_failed',
        at,
        worker: 'w2',
        step_anchor: 'step-2',
        failures: 1,
        reason: 'ImplementerFailed: x',
        max_attempts: 1,
      },
    ];
    for (const e of events) runEventSchema.parse(e);
    const writes: string[] = [];
    const o = { color: false, now: () => 0, steps_total: 2, steps_done: 0, workers: ['w1', 'w2'], plan_path: 'p.md' };
    const r = createRenderer('lines', { ...o, write: (x) => writes.push(x) });
    for (const e of events) r.event(e);
    expect(writes.join('')).toBe(
      [
        'w1 step-1 claimed (attempt 6, 2 of 3 failures)',
        'w2 step-2 claimed (attempt 1)',
        'w1 step-1 failed at its cap (3 of 3 failures)',
        'w2 step-2 failed at its cap (1 of 1 failure)',
        '',
      ].join('\n'),
    );
    // The live view's busy line says the same beside its attempt.
    const live: string[] = [];
    const lr = createRenderer('live', { ...o, write: (x) => live.push(x), columns: 200 });
    lr.event(events[0]!);
    lr.close();
    expect(screen(live.join(''))).toContain('w1  step-1  claimed      0ms  attempt 6, 2 of 3 failures');
  });

  it("says a substep's phase apart from the step's own, in lines and in the live view", () => {
    const base = { at, worker: 'w1', step_anchor: 'step-4' };
    const events: RunEvent[] = [
      { type: 'phase', ...base, phase: 'implementer', substep_anchor: 'step-4-1' },
      { type: 'phase', ...base, phase: 'implementer' },
    ];
    for (const e of events) runEventSchema.parse(e);
    const writes: string[] = [];
    const o = { color: false, now: () => 0, steps_total: 1, steps_done: 0, workers: ['w1'], plan_path: 'p.md' };
    const r = createRenderer('lines', { ...o, write: (x) => writes.push(x) });
    for (const e of events) r.event(e);
    expect(writes.join('')).toBe('w1 step-4 substep step-4-1 → implementer\nw1 step-4 → implementer\n');
    const live: string[] = [];
    const lr = createRenderer('live', { ...o, write: (x) => live.push(x), columns: 200 });
    lr.event(events[0]!);
    expect(screen(live.join(''))).toContain('w1  step-4 substep step-4-1  implementer  0ms');
    lr.event(events[1]!);
    lr.close();
    expect(screen(live.join(''))).toContain('w1  step-4  implementer  0ms');
  });

  it('colours outcomes only when asked', () => {
    expect(play('lines', false).out).not.toMatch(/\x1b/);
    expect(play('lines', true).out).toContain('\x1b[31mfailed\x1b[0m');
  });
});

describe('json renderer', () => {
  it('writes every event, summary included, as one schema-valid JSON object per line', () => {
    const { out } = play('json', false);
    const lines = out.trimEnd().split('\n');
    expect(lines).toHaveLength(stream.length);
    lines.forEach((l, i) => expect(runEventSchema.parse(JSON.parse(l))).toEqual(stream[i]![1]));
    expect(JSON.parse(lines.at(-1)!).type).toBe('summary');
  });
});

describe('live renderer', () => {
  it('shows one line per worker with step, phase and elapsed, and the overall bar', () => {
    const { frames } = play('live', false);
    // After the implementer phase started at 1 s, at 13 s step-1 completes; look at the frame before.
    const implementing = screen(frames.slice(0, 5).join(''));
    expect(implementing).toEqual([
      'run .tugtool/tugplan-demo.md: 2 workers, integrating into tugplan/demo (base main)',
      'w1  step-1  implementer  0ms',
      'w2  waiting for step-1; held back by Touches: step-3 (overlaps step-1)  700ms',
      '[░░░░░░░░░░░░░░░░░░░░░░░░] 0/4 steps  tugplan-demo.md  1s',
      '',
    ]);
    const busy = screen(frames.slice(0, 9).join(''));
    expect(busy).toEqual([
      'run .tugtool/tugplan-demo.md: 2 workers, integrating into tugplan/demo (base main)',
      'w1 step-1 completed 1234567890ab',
      'w1  step-2  claimed      200ms',
      'w2  step-3  checkpoints  0ms',
      '[██████░░░░░░░░░░░░░░░░░░] 1/4 steps  tugplan-demo.md  13s',
      '',
    ]);
  });

  it('keeps failures as permanent lines above the block and leaves the final frame on close', () => {
    const { out } = play('live', false);
    expect(screen(out)).toEqual([
      'run .tugtool/tugplan-demo.md: 2 workers, integrating into tugplan/demo (base main)',
      'w1 step-1 completed 1234567890ab',
      'w1 step-2 attempt 1 failed: CheckpointFailed `npm test` exited 1',
      'w1 step-2 attempt 2 lost its claim: LeaseExpired',
      'w2 step-3 completed (no commit)',
      'w1  done',
      'w2  stopped',
      '[████████████░░░░░░░░░░░░] 2/4 steps  tugplan-demo.md  20s  1 failed attempt',
      '',
    ]);
    expect(out.endsWith('\n')).toBe(true);
  });

  it('redraws in place with cursor movement, and without NO_COLOR colour codes when color is false', () => {
    const { writes, out } = play('live', false);
    expect(writes[1]).toMatch(/^\x1b\[\d+A\r\x1b\[0J/);
    expect(out).not.toMatch(/\x1b\[[0-9;]*m/);
    const coloured = play('live', true).out;
    expect(coloured).toMatch(/\x1b\[3\dm/);
    expect(screen(coloured)).toEqual(screen(out));
  });

  it("prints a line aside (the first Ctrl-C's) above the block, which is drawn again below it", () => {
    const writes: string[] = [];
    const r = createRenderer('live', {
      write: (s) => writes.push(s),
      color: false,
      now: () => 0,
      steps_total: 4,
      steps_done: 0,
      workers: ['w1', 'w2'],
      plan_path: '.tugtool/tugplan-demo.md',
    });
    for (const [, e] of stream.slice(0, 3)) r.event(e);
    const before = screen(writes.join(''));
    // The terminal shows stdout and stderr alike: the aside's line goes into the same stream here.
    r.aside(() => writes.push('tugcode: stopping: …\n'));
    r.close();
    const after = screen(writes.join(''));
    const block = before.slice(1, -1); // the run_started line, then the block (w1, w2, the bar)
    expect(after).toEqual([before[0], 'tugcode: stopping: …', ...block, '']);
  });

  it('clips frame lines to the terminal width', () => {
    const { frames } = play('live', true, 20);
    const last = screen(frames.slice(0, 5).join(''));
    for (const l of last.slice(1, 4)) expect(l.length).toBeLessThanOrEqual(19);
    expect(last[1]).toBe('w1  step-1  impleme');
  });

  it('redraws every second on an unref’d timer that close() stops', () => {
    vi.useFakeTimers();
    let clock = 0;
    const writes: string[] = [];
    const r = createRenderer('live', {
      write: (s) => writes.push(s),
      color: false,
      now: () => clock,
      steps_total: 2,
      steps_done: 1,
      workers: ['w1'],
      plan_path: 'p.md',
    });
    r.event({
      type: 'claimed',
      at,
      worker: 'w1',
      step_anchor: 'step-2',
      attempt: 3,
      resumed: true,
      reclaimed_from_expired: false,
    });
    clock = 5_000;
    vi.advanceTimersByTime(1_000);
    expect(writes).toHaveLength(2);
    expect(screen(writes.join(''))).toEqual([
      'w1  step-2  claimed      5s  attempt 3',
      '[████████████░░░░░░░░░░░░] 1/2 steps  p.md  5s',
      '',
    ]);
    r.close();
    const n = writes.length;
    vi.advanceTimersByTime(5_000);
    r.event({ type: 'waiting', at, worker: 'w1' });
    expect(writes).toHaveLength(n);
  });
});

describe('summaryText', () => {
  it('tabulates steps and workers, then commits and wall time; the error is left to stderr', async () => {
    expect(await summaryText(summary, { color: false })).toBe(
      [
        'step    result     detail',
        'step-1  completed',
        'step-3  completed',
        'step-2  failed     CheckpointFailed: `npm test` exited 1',
        'step-4  blocked',
        '',
        'worker  busy  utilisation',
        'w1      15s   75%',
        'w2      5s    25%',
        '',
        '2 completed, 1 failed, 1 blocked · 2 commits · wall 20s',
        'commits: 1234567890ab abc123456789',
        '',
      ].join('\n'),
    );
  });

  it('says an idle worker as `0s`, like the others, not a precise-looking `0ms`', async () => {
    const idle = {
      ...summary,
      workers: [
        { worker: 'w1', busy_ms: 20_000 },
        { worker: 'w2', busy_ms: 0 },
      ],
    };
    const text = await summaryText(idle, { color: false });
    expect(text).toContain('\nw2      0s    0%\n');
    expect(text).not.toMatch(/^w\d +0ms /m);
  });

  it("names a reviewer's .out and .log as the failed step's last attempt (docs/run.md §1.1 item 6)", async () => {
    const logs = ['.tugtool/logs/demo/step-2-review1-attempt2.out', '.tugtool/logs/demo/step-2-review1-attempt2.log'];
    const text = await summaryText(
      { ...summary, failed_steps: [{ step_anchor: 'step-2', reason: 'ReviewerFailed: x', logs }] },
      { color: false },
    );
    expect(text).toContain(`\nstep-2 log: ${logs[0]}\nstep-2 log: ${logs[1]}\n`);
    expect(text).not.toContain('earlier attempt');
  });

  it('uses colour codes only with color, and stays short for an empty run', async () => {
    expect(await summaryText(summary, { color: true })).toMatch(/\x1b\[3\dm/);
    const empty: RunSummary = {
      ...summary,
      status: 'ok',
      steps_completed: [],
      failed_steps: [],
      blocked_steps: [],
      commits: [],
      workers: [],
      wall_ms: 300,
      error: undefined,
    };
    expect(await summaryText(empty, { color: false })).toBe('0 completed · 0 commits · wall 300ms\n');
  });
});

describe('summaryText: waiting for you', () => {
  it('after tugcode -C DIR run, the decide commands and the run again carry -C DIR, as the stderr hint does', async () => {
    const text = await summaryText(
      {
        ...summary,
        steps_completed: [],
        failed_steps: [],
        blocked_steps: [],
        needs_human: [{ step_anchor: 'step-1', review_ref: 'refs/tugplan/review/demo/step-1', reason: 'ESCALATE' }],
        error: {
          code: 'NeedsHuman',
          message: 'step-1 needs a human',
          details: { plan_path: '.tugtool/tugplan-demo.md', run_flags: ['-C', '/a b', '--implementer', 'x'] },
          hint: '',
        },
      },
      { color: false },
    );
    expect(text).toContain("  tugcode -C '/a b' state decide .tugtool/tugplan-demo.md step-1 --approve\n");
    expect(text).toContain("then: tugcode -C '/a b' run .tugtool/tugplan-demo.md");
  });
});

describe('conflicts resolved in the same attempt (docs/run.md §1.9)', () => {
  const events: RunEvent[] = [
    { type: 'phase', at, worker: 'w2', step_anchor: 'step-3', phase: 'integrate' },
    { type: 'conflict', at, worker: 'w2', step_anchor: 'step-3', files: ['a.ts', 'b.ts', 'c.ts', 'd.ts'] },
    { type: 'phase', at, worker: 'w2', step_anchor: 'step-3', phase: 'resolve' },
    { type: 'conflict_resolved', at, worker: 'w2', step_anchor: 'step-3', files: ['a.ts'], round: 2 },
  ];
  const render = (mode: RenderMode) => {
    const writes: string[] = [];
    const r = createRenderer(mode, {
      write: (s) => writes.push(s),
      color: false,
      now: () => 0,
      steps_total: 4,
      steps_done: 1,
      workers: ['w1', 'w2'],
      plan_path: '.tugtool/tugplan-demo.md',
    });
    for (const e of events) r.event(e);
    r.close();
    return writes.join('');
  };

  it('the lines and the live view print the conflict and its resolution; the bar counts them', () => {
    expect(render('lines')).toBe(
      [
        'w2 step-3 → integrate',
        'w2 step-3 conflict in a.ts, b.ts, c.ts and 1 more: resolving',
        'w2 step-3 → resolve',
        'w2 step-3 conflict resolved (round 2): a.ts',
        '',
      ].join('\n'),
    );
    expect(screen(render('live'))).toEqual([
      'w2 step-3 conflict in a.ts, b.ts, c.ts and 1 more: resolving',
      'w2 step-3 conflict resolved (round 2): a.ts',
      'w1  idle',
      'w2  step-3  resolve      0ms',
      '[██████░░░░░░░░░░░░░░░░░░] 1/4 steps  tugplan-demo.md  0ms  1 conflict resolved',
      '',
    ]);
  });

  it('the summary lists them after the commits', async () => {
    const text = await summaryText(
      { ...summary, conflicts_resolved: [{ step_anchor: 'step-3', files: ['a.ts'], round: 1 }] },
      { color: false },
    );
    expect(text.trimEnd().split('\n').at(-1)).toBe('conflict resolved: step-3 (round 1) in a.ts');
  });
});
