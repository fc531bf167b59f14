/**
 * The board's shaping of the state (src/board/model.ts), its log files (files.ts) and its request guard
 * (guard.ts), without a server: lanes and what each Needs-you card asks for, statuses and fields it does not
 * know yet, attempts from events, usage, owners on PostgreSQL, log names, bounded tails.
 */
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  heldStepLogs,
  parseLogName,
  phaseFromLogs,
  readTail,
  stepLogs,
  LOG_TAIL_BYTES,
} from '../../src/board/files.js';
import { allowedHosts, refusal } from '../../src/board/guard.js';
import {
  attemptsOf,
  ownerOf,
  rolesOf,
  topOf,
  placeStep,
  shapeSnapshot,
  sumUsage,
  usageOf,
  type Activity,
  type BoardRead,
  type LoggedEvent,
  type ShownStep,
} from '../../src/board/model.js';
import { slowWatch } from '../../src/board/source.js';
import { tempDir } from '../helpers/repo.js';
import { shownStep } from './helpers.js';

const NOW = '2026-03-01T12:00:00.000Z';
const PLAN = '.tugtool/tugplan-demo.md';

const step = shownStep;

const place = (
  s: ShownStep,
  o: { stall_seconds?: number | null; last?: string | null; reason?: string | null; phase?: string | null } = {},
) =>
  placeStep(s, {
    plan_path: PLAN,
    now: NOW,
    stall_seconds: o.stall_seconds ?? null,
    last_activity_at: o.last ?? null,
    reason: o.reason ?? null,
    phase: o.phase ?? null,
  });

describe('lanes', () => {
  it('puts each status in its lane, with the resolving command for Needs you', () => {
    expect(place(step('step-1')).lane).toBe('ready');
    expect(place(step('step-2', { blocked_by: ['step-1'] })).lane).toBe('blocked');
    expect(place(step('step-3', { status: 'in_progress', claimed_by: '/w' })).lane).toBe('running');
    expect(place(step('step-4', { status: 'completed', commit_hash: 'abc' }))).toEqual({ lane: 'done', need: null });
    const failed = place(step('step-5', { status: 'failed', fail_reason: 'CheckpointFailed: exit 1', failures: 3 }));
    expect(failed).toEqual({
      lane: 'needs_you',
      need: {
        kind: 'failed',
        reason: 'CheckpointFailed: exit 1',
        command: 'tugcode state reset demo step-5',
        commands: ['tugcode state reset demo step-5'],
        actions: ['reset'],
      },
    });
    const expired = place(
      step('step-6', { status: 'claimed', claimed_by: '/w', lease_expired: true, lease_expires_at: NOW }),
    );
    expect(expired.lane).toBe('needs_you');
    expect(expired.need).toMatchObject({
      kind: 'expired',
      command: 'tugcode state reset demo step-6',
      actions: ['release'],
    });
  });

  it('dead_run: the run that takes it over as the command; a release only once the lease ran out', () => {
    const driver = { pid: 4242, host: 'h', started_at: NOW, alive: false, command: 'tugcode run demo --workers 1' };
    const held = step('step-6', {
      status: 'in_progress',
      claimed_by: '/w',
      lease_expires_at: '2026-03-01T13:00:00.000Z',
    });
    const live = placeStep(held, {
      plan_path: PLAN,
      now: NOW,
      stall_seconds: null,
      last_activity_at: null,
      reason: null,
      driver,
    });
    // The lease has time left: the state refuses an unforced reset, so the page offers none (docs/board.md §6).
    expect(live).toEqual({
      lane: 'needs_you',
      need: {
        kind: 'dead_run',
        reason: expect.stringContaining('holds until 2026-03-01T13:00:00.000Z unless a new run takes it over'),
        command: 'tugcode run demo --workers 1',
        commands: ['tugcode run demo --workers 1'],
        actions: [],
      },
    });
    const expired = placeStep(
      { ...held, lease_expires_at: '2026-03-01T11:00:00.000Z', lease_expired: true },
      { plan_path: PLAN, now: NOW, stall_seconds: null, last_activity_at: null, reason: null, driver },
    );
    expect(expired.need).toMatchObject({
      kind: 'dead_run',
      command: 'tugcode run demo --workers 1',
      actions: ['release'],
    });
    expect(expired.need!.reason).toContain('ran out at 2026-03-01T11:00:00.000Z');
  });

  it('needs_human: the reviewer reason, decide as the command, approve/revise/reject as the actions', () => {
    const s = place(step('step-7', { status: 'needs_human' }), { reason: 'the change deletes the public API' });
    expect(s).toEqual({
      lane: 'needs_you',
      need: {
        kind: 'needs_human',
        reason: 'the change deletes the public API',
        command: 'tugcode state decide demo step-7 --approve',
        // A person has three choices: each one's command (docs/board.md §3).
        commands: [
          'tugcode state decide demo step-7 --approve',
          'tugcode state decide demo step-7 --revise "<notes>"',
          'tugcode state decide demo step-7 --reject "<reason>"',
        ],
        actions: ['approve', 'revise', 'reject'],
      },
    });
  });

  it('a status it does not know lands in Needs you under its own name, with state show as the command', () => {
    const s = place(step('step-8', { status: 'quarantined' }));
    expect(s.lane).toBe('needs_you');
    expect(s.need).toMatchObject({ kind: 'unknown', command: 'tugcode state show demo --step step-8', actions: [] });
    expect(s.need!.reason).toContain('quarantined');
  });

  it('stalled only with a configured watchdog threshold and activity older than it', () => {
    const running = step('step-9', { status: 'in_progress', claimed_by: '/w' });
    const old = '2026-03-01T11:40:00.000Z';
    expect(place(running, { last: old }).lane).toBe('running');
    expect(place(running, { last: old, stall_seconds: 600 }).need).toMatchObject({ kind: 'stalled' });
    expect(place(running, { last: '2026-03-01T11:59:00.000Z', stall_seconds: 600 }).lane).toBe('running');
    // The watchdog watches the implementer only (docs/run.md §7.3): a silent reviewer or test suite is not stalled.
    expect(place(running, { last: old, stall_seconds: 600, phase: 'implementer' }).need).toMatchObject({
      kind: 'stalled',
    });
    for (const phase of ['review', 'checkpoints', 'resolve'])
      expect(place(running, { last: old, stall_seconds: 600, phase }).lane, phase).toBe('running');
  });
});

const read = (steps: ShownStep[], extra: Record<string, unknown> = {}): BoardRead => ({
  plans: [
    {
      plan_path: PLAN,
      phase_title: 'Demo',
      status: 'active',
      steps,
      overall: { steps_completed: 1, steps_total: steps.filter((s) => !s.parent_anchor).length, percent: 33 },
      usage: null,
      ...extra,
    },
  ],
  backend: { kind: 'postgres', location: 'postgres://h/db' },
  repo_root: '/r/shop',
  stall_seconds: null,
});

describe('the snapshot', () => {
  it('cards of top-level steps with their substeps counted, the owner split host:path on PostgreSQL, lane counts', () => {
    const steps = [
      step('step-1', { status: 'completed', commit_hash: 'c1' }),
      step('step-2', {
        status: 'in_progress',
        attempt: 2,
        claimed_by: 'ab12:/r/shop/.tugtree/tugplan__demo--w2',
        lease_expires_at: '2026-03-01T13:00:00.000Z',
        heartbeat_at: '2026-03-01T11:59:30.000Z',
        started_at: '2026-03-01T11:58:00.000Z',
      }),
      step('step-2-1', { parent_anchor: 'step-2', status: 'completed' }),
      step('step-3', { blocked_by: ['step-2'] }),
    ];
    const activity = (_p: string, a: string) =>
      a === 'step-2-1'
        ? { files: { phase: 'checkpoints', at: '2026-03-01T11:59:50.000Z' } }
        : a === 'step-2'
          ? { run: { worker: 'w2', phase: 'implementer', event: 'phase', at: '2026-03-01T11:59:40.000Z' } }
          : undefined;
    const s = shapeSnapshot(read(steps), activity, { now: NOW, allow_actions: true });
    expect(s.repo).toEqual({ root: '/r/shop', name: 'shop' });
    const p = s.plans[0]!;
    expect(p.slug).toBe('demo');
    expect(p.cards.map((c) => [c.anchor, c.lane])).toEqual([
      ['step-1', 'done'],
      ['step-2', 'running'],
      ['step-3', 'blocked'],
    ]);
    expect(p.lanes).toEqual({ blocked: 1, ready: 0, running: 1, needs_you: 0, done: 1 });
    const running = p.cards[1]!;
    expect(running.owner).toEqual({
      claimed_by: 'ab12:/r/shop/.tugtree/tugplan__demo--w2',
      host: 'ab12',
      worktree: '/r/shop/.tugtree/tugplan__demo--w2',
      worker: 'w2',
    });
    expect(running.phase).toBe('implementer');
    expect(running.phase_substep).toBeNull(); // the run's phase is the step's own
    // The latest of the run's event, the substep's log and the step's start.
    expect(running.last_activity_at).toBe('2026-03-01T11:59:50.000Z');
    expect(running.substeps).toEqual({ done: 1, total: 1 });
    // A deferred item is counted apart, not as done (docs/state.md §5).
    expect(running.items).toEqual({ done: 2, deferred: 2, total: 6 });
    expect(p.cards[0]!.commit).toBe('c1');
  });

  it("a running card's phase names its substep, from the run's phase event or else the newest log", () => {
    const held = step('step-1', {
      status: 'in_progress',
      attempt: 1,
      claimed_by: '/r/.tugtree/tugplan__demo--w1',
      lease_expires_at: '2026-03-01T13:00:00.000Z',
      started_at: '2026-03-01T11:50:00.000Z',
    });
    const steps = [held, step('step-1-1', { parent_anchor: 'step-1', status: 'in_progress' })];
    const at = '2026-03-01T11:51:00.000Z';
    const cardWith = (a: Activity) =>
      shapeSnapshot(read(steps), (_p, x) => (x === 'step-1' ? a : undefined), { now: NOW, allow_actions: false })
        .plans[0]!.cards[0]!;
    const run = { worker: 'w1', phase: 'checkpoints', event: 'phase', at };
    expect(cardWith({ run: { ...run, substep: 'step-1-1' } })).toMatchObject({
      phase: 'checkpoints',
      phase_substep: 'step-1-1',
    });
    expect(cardWith({ run }).phase_substep).toBeNull();
    // Without a run beside the board, the newest log's (sub)step says it.
    expect(cardWith({ files: { phase: 'implementer', at, anchor: 'step-1-1' } }).phase_substep).toBe('step-1-1');
    expect(cardWith({ files: { phase: 'implementer', at, anchor: 'step-1' } }).phase_substep).toBeNull();
  });

  it("the run's watchdog activity counts for a running card's last activity; never for a step not held", () => {
    const held = step('step-1', {
      status: 'in_progress',
      attempt: 1,
      claimed_by: '/r/.tugtree/tugplan__demo--w1',
      lease_expires_at: '2026-03-01T13:00:00.000Z',
      started_at: '2026-03-01T11:50:00.000Z',
    });
    const run = {
      worker: 'w1',
      phase: 'implementer',
      event: 'phase',
      at: '2026-03-01T11:51:00.000Z',
      active_at: '2026-03-01T11:59:58.000Z',
    };
    const s = shapeSnapshot(
      read([held, step('step-2', { status: 'completed', commit_hash: 'c' })]),
      () => ({ run, files: { phase: 'implementer', at: '2026-03-01T11:52:00.000Z' } }),
      { now: NOW, allow_actions: false },
    );
    expect(s.plans[0]!.cards.map((c) => c.last_activity_at)).toEqual(['2026-03-01T11:59:58.000Z', null]);
  });

  it('usage from the ledger: a card sums its step and substeps; the detail has it per role', () => {
    const totals = (tokens: number, cost: number, role: string) => ({
      input_tokens: tokens,
      output_tokens: 0,
      cache_read_tokens: 0,
      cache_write_tokens: 0,
      tokens,
      cost_usd: cost,
      reports: 1,
      unpriced: 0,
      by_role: { [role]: { tokens, cost_usd: cost, reports: 1 } },
    });
    const steps = [
      step('step-1', { status: 'in_progress', claimed_by: '/w', usage: totals(100, 0.5, 'reviewer') }),
      step('step-1-1', { parent_anchor: 'step-1', usage: totals(1000, 0.25, 'implementer') }),
      step('step-1-2', { parent_anchor: 'step-1', usage: totals(2000, 0.25, 'implementer') }),
    ];
    const card = shapeSnapshot(read(steps), () => undefined, { now: NOW, allow_actions: false }).plans[0]!.cards[0]!;
    expect(card.usage).toMatchObject({ tokens: 3100, cost_usd: 1 });
    expect(rolesOf(steps.map((x) => x.usage))).toEqual({
      reviewer: { tokens: 100, cost_usd: 0.5, reports: 1 },
      implementer: { tokens: 3000, cost_usd: 0.5, reports: 2 },
    });
    expect(rolesOf([null, { by_role: 'x' }])).toBeNull();
    expect(topOf(steps.slice(1))).toBe('step-1-1');
    expect(topOf(steps)).toBe('step-1');
  });

  it('usage of a later state version: per step, summed per plan and for the board; null when absent', () => {
    const steps = [
      step('step-1', { status: 'completed', usage: { input_tokens: 100, output_tokens: 20, cost_usd: 0.5 } } as never),
      step('step-2', { status: 'completed', usage: { input_tokens: 50, cost_usd: 0.25, extra: 'x' } } as never),
    ];
    const s = shapeSnapshot(read(steps), () => undefined, { now: NOW, allow_actions: false });
    expect(s.plans[0]!.cards[0]!.usage).toEqual({
      input_tokens: 100,
      output_tokens: 20,
      cache_read_tokens: null,
      cache_write_tokens: null,
      tokens: 120,
      cost_usd: 0.5,
    });
    expect(s.plans[0]!.usage).toMatchObject({ input_tokens: 150, output_tokens: 20, tokens: 170, cost_usd: 0.75 });
    // The ledger's own total of the four kinds wins over the sum of what the board knows.
    expect(usageOf({ input_tokens: 1, tokens: 9, reports: 2, by_role: {} })).toMatchObject({
      tokens: 9,
      cost_usd: null,
    });
    expect(s.usage).toMatchObject({ cost_usd: 0.75 });
    expect(shapeSnapshot(read([step('step-1')]), () => undefined, { now: NOW, allow_actions: false }).usage).toBeNull();
    expect(usageOf({ cost_usd: 'a lot' })).toBeNull();
    expect(sumUsage([null, null])).toBeNull();
  });

  it('is the same JSON for the same state (its hash decides whether anything is sent)', () => {
    const steps = [step('step-1'), step('step-2', { blocked_by: ['step-1'] })];
    const a = JSON.stringify(shapeSnapshot(read(steps), () => undefined, { now: NOW, allow_actions: false }));
    const b = JSON.stringify(
      shapeSnapshot(read(steps), () => undefined, { now: '2026-03-01T12:00:05.000Z', allow_actions: false }),
    );
    expect(a).toBe(b);
  });

  it('owners on SQLite are paths; a worktree that is no run worker is named by its directory', () => {
    expect(ownerOf('/r/x/.tugtree/tugplan__demo--w1', 'sqlite')).toMatchObject({ host: null, worker: 'w1' });
    expect(ownerOf('/home/me/repo', 'sqlite')).toMatchObject({ host: null, worker: 'repo' });
    expect(ownerOf(null, 'sqlite')).toBeNull();
  });
});

describe('attempts from events', () => {
  const ev = (id: number, command: string, attempt: number | null, details: Record<string, unknown>, actor = '/w1') =>
    ({
      id,
      at: `2026-03-01T10:00:0${id}.000Z`,
      step_anchor: 'step-1',
      command,
      actor,
      attempt,
      details,
    }) as LoggedEvent;

  it('claims, failures with reasons, takeovers, resets, completion; unknown events leave the outcome alone', () => {
    const attempts = attemptsOf([
      ev(1, 'run', 1, { claimed: true }),
      ev(2, 'run', 1, { failed_attempt: true, reason: 'CheckpointFailed: npm test exited 1' }),
      ev(3, 'run', 2, { claimed: true }, '/w2'),
      ev(4, 'takeover', 3, { previous_owner: '/w2', previous_attempt: 2 }, '/w3'),
      ev(5, 'run', 3, { artifact_id: 9, kind: 'note' }, '/w3'),
      ev(6, 'state reset', 3, { reset: true, previous_attempt: 3 }, 'admin'),
      ev(7, 'run', 4, { claimed: true }, '/w1'),
      ev(8, 'review', 4, { input_tokens: 10, cost_usd: 0.1 }, '/w1'),
      ev(9, 'run', 4, { completed: true, commit_hash: 'abc123' }),
    ]);
    expect(attempts.map((a) => [a.attempt, a.owner, a.outcome, a.reason])).toEqual([
      [1, '/w1', 'failed', 'CheckpointFailed: npm test exited 1'],
      [2, '/w2', 'taken over', 'lease expired; taken over by /w3'],
      [3, '/w3', 'reset', 'reset by admin'],
      [4, '/w1', 'completed', null],
    ]);
    expect(attempts[3]!.commit).toBe('abc123');
    expect(attempts[3]!.usage).toMatchObject({ input_tokens: 10, cost_usd: 0.1 });
  });

  it("usage per attempt and per role: the step's reports and its substeps' (those count for usage only)", () => {
    const report = (role: string, tokens: number, cost: number | null) => ({
      usage_id: tokens,
      role,
      input_tokens: tokens,
      output_tokens: null,
      cache_read_tokens: null,
      cache_write_tokens: null,
      cost_usd: cost,
    });
    const sub = (e: LoggedEvent): LoggedEvent => ({ ...e, step_anchor: 'step-1-1' });
    const attempts = attemptsOf(
      [
        ev(1, 'run', 1, { claimed: true }),
        sub(ev(2, 'run', 1, report('implementer', 1000, 0.25))),
        ev(3, 'run', 1, report('reviewer', 10, 0.01)),
        ev(4, 'run', 1, { failed_attempt: true, reason: 'ReviewRejected' }),
        ev(5, 'run', 2, { claimed: true }),
        sub(ev(6, 'run', 2, report('implementer', 2000, null))),
        sub(ev(7, 'run', 2, { completed: true, commit_hash: 'sub' })),
        ev(8, 'run', 2, report('resolver', 30, 0.02)),
        sub(ev(9, 'run', 2, report('implementer', 500, 0.5))),
        ev(9, 'run', 2, report('implementer', 500, 0.5)),
      ],
      'step-1',
    );
    expect(attempts.map((a) => [a.attempt, a.outcome, a.commit])).toEqual([
      [1, 'failed', null],
      [2, 'running', null],
    ]);
    expect(attempts[0]!.usage).toMatchObject({ tokens: 1010, cost_usd: 0.26 });
    expect(attempts[0]!.by_role).toEqual({
      implementer: { tokens: 1000, cost_usd: 0.25, reports: 1 },
      reviewer: { tokens: 10, cost_usd: 0.01, reports: 1 },
    });
    // An event read twice (the step's and a substep's log) counts once.
    expect(attempts[1]!.by_role).toEqual({
      implementer: { tokens: 2500, cost_usd: 0.5, reports: 2 },
      resolver: { tokens: 30, cost_usd: 0.02, reports: 1 },
    });
  });

  it('a needs_human escalation and a decision of a later state version', () => {
    const attempts = attemptsOf([
      ev(1, 'run', 1, { claimed: true }),
      ev(2, 'step_needs_human', 1, { review_commit: 'f00', reason: 'touches auth' }),
    ]);
    expect(attempts[0]).toMatchObject({ outcome: 'needs human', reason: 'touches auth', commit: 'f00' });
    // The decision's event names the kept commit too: the attempt ends decided, the commit kept only if approved.
    const decided = (decision: string, more: Record<string, unknown> = {}) =>
      attemptsOf([
        ev(1, 'run', 1, { claimed: true }),
        ev(2, 'run', 1, { step_anchor: 'step-1', review_commit: 'f00', reason: 'ESCALATE in round 1' }),
        ev(3, 'state decide', 1, { decision, status: 'pending', review_commit: 'f00', ...more }, 'admin'),
      ])[0];
    expect(decided('approve')).toMatchObject({ outcome: 'decided: approve', commit: 'f00' });
    expect(decided('revise', { notes: 'split it' })).toMatchObject({
      outcome: 'decided: revise',
      reason: 'split it',
      commit: null,
    });
    // A reset instead of a decision (or after an approval) drops the kept commit: the attempt says so.
    const reset = (previous_status: string) => ({ reset: true, previous_status, previous_attempt: 1 });
    for (const [decide, status] of [
      [[], 'needs_human'],
      [[ev(3, 'state decide', 1, { decision: 'approve', review_commit: 'f00' }, 'admin')], 'pending'],
    ] as const)
      expect(
        attemptsOf([
          ev(1, 'run', 1, { claimed: true }),
          ev(2, 'step_needs_human', 1, { review_commit: 'f00', reason: 'touches auth' }),
          ...decide,
          ev(4, 'state reset', 1, reset(status), 'admin'),
        ])[0],
      ).toMatchObject({ outcome: 'reset', reason: 'reset by admin; its kept commit dropped', commit: null });
  });

  it('a step waiting for a human names the commit the reviewer escalated, which approve integrates', () => {
    const s = shapeSnapshot(
      read([
        step('step-1', { status: 'needs_human', review_commit: 'f00' }),
        step('step-2', { review_commit: 'f01', human_decision: 'approved' }),
        step('step-3', { status: 'completed', commit_hash: 'c3', review_commit: 'f02' }),
      ]),
      () => undefined,
      { now: NOW, allow_actions: false },
    );
    expect(s.plans[0]!.cards.map((c) => [c.lane, c.kept_commit])).toEqual([
      ['needs_you', 'f00'],
      ['ready', null],
      ['done', null],
    ]);
  });

  it('an approved step waits in Ready with the kept commit the next run integrates', () => {
    const s = shapeSnapshot(
      read([
        step('step-1', { review_commit: 'f00', human_decision: 'approved' }),
        step('step-2', { status: 'completed', commit_hash: 'c2', review_commit: 'f01', human_decision: 'approved' }),
      ]),
      () => undefined,
      { now: NOW, allow_actions: false },
    );
    expect(s.plans[0]!.cards.map((c) => [c.lane, c.approved_commit])).toEqual([
      ['ready', 'f00'],
      ['done', null],
    ]);
  });
});

describe('log files', () => {
  it('names a step, a substep, checkpoints and later kinds; ignores other files', () => {
    const anchors = ['step-4', 'step-4-1'];
    expect(parseLogName('step-4-attempt2.log', anchors)).toMatchObject({
      anchor: 'step-4',
      attempt: 2,
      kind: 'implementer',
    });
    expect(parseLogName('step-4-1-attempt2.log', anchors)).toMatchObject({ anchor: 'step-4-1', attempt: 2 });
    expect(parseLogName('step-4-checkpoint3-attempt1.log', anchors)).toMatchObject({ kind: 'checkpoint', attempt: 1 });
    expect(parseLogName('step-4-review1-attempt1.log', anchors)).toMatchObject({ kind: 'review' });
    expect(parseLogName('step-4-resolve2-attempt1.log', anchors)).toMatchObject({ kind: 'resolve', attempt: 1 });
    expect(parseLogName('step-4-checkpoint1-resolved-attempt3.log', anchors)).toMatchObject({
      kind: 'checkpoint',
      attempt: 3,
    });
    expect(parseLogName('step-4-brief2.json', anchors)).toBeNull();
    expect(parseLogName('w1-setup0.log', anchors)).toBeNull();
    expect(parseLogName('step-44-attempt1.log', anchors)).toBeNull();
  });

  it("a long run's log directory: a full read looks at the held steps' files only, not every step's", async () => {
    // 1,000 steps done, each with its implementer log, a checkpoint log and its brief; step-500 and its two
    // substeps held (attempt 2), step-7 held with no log yet.
    const root = tempDir();
    const dir = join(root, '.tugtool', 'logs', 'big');
    mkdirSync(dir, { recursive: true });
    const steps: { anchor: string; parent_anchor: string | null }[] = [];
    for (let i = 1; i <= 1000; i++) {
      steps.push({ anchor: `step-${i}`, parent_anchor: null });
      if (i === 500) steps.push(...[1, 2].map((k) => ({ anchor: `step-500-${k}`, parent_anchor: 'step-500' })));
      if (i === 7) continue;
      for (const f of [`step-${i}-attempt1.log`, `step-${i}-checkpoint1-attempt1.log`, `step-${i}-brief1.json`])
        writeFileSync(join(dir, f), 'x\n');
    }
    for (const f of ['step-500-1-attempt2.log', 'step-500-2-attempt2.log', 'step-500-attempt2.log'])
      writeFileSync(join(dir, f), 'y\n');
    const r = await heldStepLogs(root, 'big', steps, ['step-500', 'step-7']);
    expect(readdirSync(dir)).toHaveLength(3 * 999 + 3);
    // step-500's own five files and its substeps' two: not the other 2,997.
    expect(r.files_read).toBe(5);
    expect([...r.logs.keys()]).toEqual(['step-500', 'step-7']);
    expect(
      r.logs
        .get('step-500')!
        .map((l) => l.name)
        .sort(),
    ).toEqual([
      'step-500-1-attempt2.log',
      'step-500-2-attempt2.log',
      'step-500-attempt1.log',
      'step-500-attempt2.log',
      'step-500-checkpoint1-attempt1.log',
    ]);
    expect(phaseFromLogs(r.logs.get('step-500')!, 2).phase).toBe('implementer');
    expect(r.logs.get('step-7')).toEqual([]);
    // Nothing held: nothing read.
    expect((await heldStepLogs(root, 'big', steps, [])).files_read).toBe(0);
  });

  it('the phase and time of the newest log of the current attempt; bounded tails that never split a character', async () => {
    const root = tempDir();
    const dir = join(root, '.tugtool', 'logs', 'demo');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'step-1-attempt1.log'), 'old\n');
    writeFileSync(join(dir, 'step-1-attempt2.log'), 'x'.repeat(LOG_TAIL_BYTES) + '\nlast line é\n');
    const logs = await stepLogs(root, 'demo', ['step-1']);
    expect(logs.map((l) => l.name).sort()).toEqual(['step-1-attempt1.log', 'step-1-attempt2.log']);
    expect(phaseFromLogs(logs, 2).phase).toBe('implementer');
    expect(phaseFromLogs(logs, 3)).toEqual({ phase: null, at: null });
    const t = (await readTail(dir, 'step-1-attempt2.log'))!;
    expect(t.cut).toBe(true);
    expect(t.text).toBe('last line é\n');
    expect(Buffer.byteLength(t.text)).toBeLessThanOrEqual(LOG_TAIL_BYTES);
    // From an offset: only what was appended; a half-written character waits for the next read.
    const before = t.size;
    writeFileSync(
      join(dir, 'step-1-attempt2.log'),
      Buffer.concat([
        Buffer.from('x'.repeat(LOG_TAIL_BYTES) + '\nlast line é\nmore '),
        Buffer.from('é').subarray(0, 1),
      ]),
    );
    const next = (await readTail(dir, 'step-1-attempt2.log', before))!;
    expect(next.text).toBe('more ');
    expect(next.cut).toBe(false);
    expect(await readTail(dir, 'missing.log')).toBeNull();
  });
});

describe('the request guard', () => {
  const hosts = allowedHosts('127.0.0.1', 4000);
  const token = 't'.repeat(32);
  it('401 without the token; 403 for a foreign Host or Origin; loopback names and the same origin pass', () => {
    expect(refusal({ host: '127.0.0.1:4000' }, undefined, { hosts, token })).toMatchObject({ status: 401 });
    expect(refusal({ host: '127.0.0.1:4000' }, 'x'.repeat(32), { hosts, token })).toMatchObject({ status: 401 });
    expect(refusal({ host: 'evil.example:4000' }, token, { hosts, token })).toMatchObject({
      status: 403,
      code: 'ForbiddenHost',
    });
    expect(refusal({ host: '127.0.0.1:4001' }, token, { hosts, token })).toMatchObject({ status: 403 });
    expect(refusal({ host: '127.0.0.1:4000', origin: 'http://evil.example' }, token, { hosts, token })).toMatchObject({
      status: 403,
      code: 'ForbiddenOrigin',
    });
    expect(refusal({ host: '127.0.0.1:4000', origin: 'null' }, token, { hosts, token })).toMatchObject({ status: 403 });
    expect(refusal({ host: 'localhost:4000', origin: 'http://localhost:4000' }, token, { hosts, token })).toBeNull();
    expect(refusal({ host: '[::1]:4000' }, token, { hosts, token })).toBeNull();
    expect(refusal({ host: '127.0.0.1:4000', 'sec-fetch-site': 'cross-site' }, token, { hosts, token })).toMatchObject({
      status: 403,
    });
  });
});

describe('the slow read watch', () => {
  // The process the board is in blocked (a run verifying refactors in process): a busy event loop, not a state
  // that does not answer (docs/board.md §5). Atomics.wait blocks the loop as synchronous work does.
  const block = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
  const turn = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it('does not count the time the process was busy', async () => {
    let slow = 0;
    const w = slowWatch(1000, () => slow++);
    block(1500);
    await turn(300);
    w.stop();
    expect(slow).toBe(0);
  });

  it('says a read still under way after its time, once, and nothing after stop', async () => {
    let slow = 0;
    const w = slowWatch(500, () => slow++);
    await expect.poll(() => slow, { timeout: 5000, interval: 50 }).toBe(1);
    await turn(600);
    expect(slow).toBe(1);
    w.stop();
    const w2 = slowWatch(500, () => slow++);
    w2.stop();
    await turn(800);
    expect(slow).toBe(1);
  });
});
