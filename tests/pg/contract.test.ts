/**
 * The state contract on both backends (docs/state.md §8): one suite, run through the built CLI's argv path
 * (the first scenario as a child process, the others in-process: see setup) against the embedded SQLite
 * state.db and a fresh PostgreSQL project. Each scenario asserts the same
 * results on both (owners are `<host>:<path>` on PostgreSQL), every refused command is checked against a
 * dump of every table, and the last block compares the two backends' normalized transcripts as a whole.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, tempRepo } from '../helpers/repo.js';
import { addWorktree, stText } from '../state/cli-helpers.js';
import { DEMO, DEMO_PATH, at, planRepo, planText } from '../state/helpers.js';
import { BACKENDS, backend, type Backend, type BackendKind, type Entry, type Session } from './backend.js';
import pg from 'pg';

const transcripts: Record<string, Partial<Record<BackendKind, Entry[]>>> = {};

/**
 * A repo with the demo plan (or `plans`), two linked worktrees, and a session on backend `b`, initialized.
 * The calls run the built CLI's argv path in-process (a child process costs ~0.1 s of CPU each, and these are
 * rules of the state, not of the process), except those that read stdin and, with `cli`, all of them: the first
 * scenario runs every command it uses through the real CLI on both backends.
 */
function setup(b: Backend, plans?: Record<string, string>, init = true, o: { cli?: boolean } = {}) {
  const root = planRepo(plans);
  const w1 = addWorktree(root, 'one');
  const w2 = addWorktree(root, 'two');
  const t = b.session(root, { w1, w2 }, { inProcess: !o.cli });
  if (init) t.ok(['init', 'demo']);
  return { root, w1, w2, t };
}

/** Runs `fn` as scenario `name` on every backend and keeps its transcript for the comparison below. */
function scenario(name: string, fn: (b: Backend) => Promise<Session>) {
  describe.each(BACKENDS)(`${name} [%s]`, (kind) => {
    it(name, async () => {
      const b = await backend(kind);
      const t = await fn(b);
      (transcripts[name] ??= {})[kind] = t.transcript;
    });
  });
}

scenario('runs a step from claim to completion', async (b) => {
  const { root, w1, w2, t } = setup(b, undefined, true, { cli: true });
  expect(t.ok(['init', 'demo'])).toMatchObject({ already_initialized: true });
  const c = t.ok(['claim', 'demo', '--worktree', w1, '--lease-duration', '600']);
  expect(c).toMatchObject({ claimed: true, step_anchor: 'step-0', attempt: 1, lease_expires_at: at(600) });
  expect(t.ok(['claim', 'demo', '--worktree', w1])).toMatchObject({ resumed: true, attempt: 1 });
  expect(t.ok(['claim', DEMO_PATH, '--worktree', w2])).toMatchObject({
    claimed: false,
    reason: 'no_ready_steps',
    claimed_steps: ['step-0'],
  });
  expect(t.ok(['start', 'demo', 'step-0', '--worktree', w1, '--attempt', '1'])).toMatchObject({
    started: true,
    already_started: false,
  });
  expect(t.ok(['start', 'demo', 'step-0', '--worktree', w1])).toMatchObject({ already_started: true });
  expect(t.ok(['heartbeat', 'demo', '#step-0', '--worktree', w1], { now: at(60) })).toMatchObject({
    renewed: true,
    lease_expires_at: at(60 + 7200),
  });
  const upd = ['update', 'demo', 'step-0', '--worktree', w1];
  expect(
    t.ok([...upd, '--task', '0', 'completed', '--task', '1:in_progress', '--test', '0', 'deferred', '--reason', 'x']),
  ).toMatchObject({
    updated: 3,
    tasks: { open: 0, in_progress: 1, completed: 1, deferred: 0 },
    tests: { deferred: 1 },
  });
  const batch = t.ok([...upd, '--batch'], {
    input: '[{"kind":"checkpoint","ordinal":1,"status":"deferred","reason":"manual"}]',
  });
  expect(batch.checkpoints).toEqual({ open: 1, in_progress: 0, completed: 0, deferred: 1 });
  expect(t.ok([...upd, '--complete-remaining']).updated).toBe(2);
  const art = ['artifact', 'demo', 'step-0', '--worktree', w1, '--kind', 'coder_report'];
  expect(t.ok([...art, '--summary-file', '-'], { input: '## Done\n' })).toMatchObject({
    recorded: true,
    artifact_id: 1,
    truncated: false,
  });
  expect(t.ok([...art, '--summary', 's', '--content-file', '-'], { input: 'é'.repeat(70_000) })).toMatchObject({
    artifact_id: 2,
    truncated: true,
  });
  // A user looking at the step sees its artifacts (docs/state.md §5.1): what, when, by whom, not the content.
  const viewed = t.ok(['show', 'demo', '--step', 'step-0']).plans[0].steps[0];
  expect(viewed.counts.artifacts).toBe(2);
  expect(viewed.artifacts).toEqual([
    {
      id: 1,
      kind: 'coder_report',
      summary: '## Done\n',
      content_length: null,
      recorded_at: at(0),
      recorded_by: b.owner(w1),
      attempt: 1,
    },
    {
      id: 2,
      kind: 'coder_report',
      summary: 's',
      content_length: 65_536,
      recorded_at: at(0),
      recorded_by: b.owner(w1),
      attempt: 1,
    },
  ]);
  const plain = t.ok(['show', 'demo']).plans[0].steps[0];
  expect([plain.counts.artifacts, plain.artifacts]).toEqual([2, []]);
  const text = stText(root, ['show', 'demo', '--step', 'step-0'], { env: b.env });
  expect(text.stdout).toContain(
    `  Artifacts (content: tugcode state export .tugtool/tugplan-demo.md):\n` +
      `    #1 coder_report ${at(0).replace(/\.\d+Z$/, 'Z')} (attempt 1, by one): ## Done\n` +
      `    #2 coder_report ${at(0).replace(/\.\d+Z$/, 'Z')} (attempt 1, by one): s\n`,
  );
  git(w1, 'commit', '-q', '--allow-empty', '-m', 'feat: client');
  const head = git(w1, 'rev-parse', 'HEAD').trim();
  expect(t.ok(['complete', 'demo', 'step-0', '--worktree', w1, '--commit', 'HEAD'])).toMatchObject({
    completed: true,
    commit_hash: head,
    completed_via: 'complete',
    remaining_steps: 2,
    already_completed: false,
    plan_completed: false,
  });
  expect(t.ok(['complete', 'demo', 'step-0', '--worktree', w2])).toMatchObject({
    already_completed: true,
    commit_hash: head,
  });
  // step-1 with its substeps: strict completion refuses, a substep auto-completes, --force finishes.
  expect(t.ok(['claim', 'demo', '--worktree', w2])).toMatchObject({ step_anchor: 'step-1', attempt: 1 });
  expect(t.ok(['start', 'demo', 'step-1-2', '--worktree', w2])).toMatchObject({ started: true });
  await t.refused(['complete', 'demo', 'step-1', '--worktree', w2], 'ChecklistIncomplete', 4);
  t.ok(['update', 'demo', 'step-1', '--worktree', w2, '--all', 'completed']);
  const sub = await t.refused(['complete', 'demo', 'step-1', '--worktree', w2], 'SubstepsIncomplete', 4);
  expect(sub.json.error.details.incomplete_substeps).toHaveLength(2);
  expect(t.ok(['update', 'demo', 'step-1-1', '--worktree', w2, '--complete-remaining'])).toMatchObject({
    step_auto_completed: true,
    auto_completed_steps: ['step-1-1'],
  });
  expect(t.ok(['complete', 'demo', 'step-1', '--worktree', w2, '--force', 'enough'])).toMatchObject({
    forced: true,
    force_reason: 'enough',
    completed_via: 'force',
    remaining_steps: 1,
  });
  t.ok(['claim', 'demo', '--worktree', w1]);
  t.ok(['update', 'demo', 'step-2', '--worktree', w1, '--all', 'completed']);
  expect(t.ok(['complete', 'demo', 'step-2', '--worktree', w1])).toMatchObject({
    plan_completed: true,
    remaining_steps: 0,
  });
  expect(t.ok(['claim', 'demo', '--worktree', w2])).toMatchObject({ claimed: false, reason: 'all_completed' });
  const show = t.ok(['show', 'demo', '--items', 'all']);
  expect(show.plans[0]).toMatchObject({ status: 'done', overall: { steps_completed: 3, percent: 100 } });
  expect(show.plans[0].steps[0]).toMatchObject({ claimed_by: b.owner(w1), commit_hash: head });
  expect(show.backend.kind).toBe(b.kind);
  void root;
  return t;
});

scenario('releases, fails, reaches the cap, resets and fences stale attempts', async (b) => {
  const { w1, w2, t } = setup(b);
  t.ok(['claim', 'demo', '--worktree', w1]);
  t.ok(['update', 'demo', 'step-0', '--worktree', w1, '--task', '0', 'completed']);
  await t.refused(['release', 'demo', 'step-0', '--worktree', w2], 'NotOwner', 4);
  await t.refused(['release', 'demo', 'step-0', '--worktree', w1, '--attempt', '2'], 'AttemptMismatch', 4);
  expect(t.ok(['release', 'demo', 'step-0', '--worktree', w1, '--attempt', '1'])).toMatchObject({ released: true });
  const s = t.ok(['show', 'demo', '--items', 'all']).plans[0].steps[0];
  expect(s).toMatchObject({ status: 'pending', claimed_by: null, attempt: 1 });
  expect(s.counts.tasks.completed).toBe(0);
  await t.refused(['heartbeat', 'demo', 'step-0', '--worktree', w1], 'LeaseExpired', 4);
  await t.refused(['release', 'demo', 'step-1-1', '--worktree', w1], 'InvalidArgument', 2);
  for (let i = 1; i <= 3; i++) {
    const c = t.ok(['claim', 'demo', '--worktree', w2]);
    expect(c).toMatchObject({ step_anchor: 'step-0', attempt: i + 1, failures: i - 1 });
    await t.refused(
      ['fail', 'demo', 'step-0', '--worktree', w2, '--attempt', String(i), '--reason', 'x'],
      'AttemptMismatch',
      4,
    );
    expect(t.ok(['fail', 'demo', 'step-0', '--worktree', w2, '--reason', `red ${i}`])).toMatchObject({
      failed_attempt: true,
      failures: i,
      step_status: i === 3 ? 'failed' : 'pending',
    });
  }
  expect(t.ok(['claim', 'demo', '--worktree', w1])).toMatchObject({
    claimed: false,
    reason: 'no_ready_steps',
    failed_steps: ['step-0'],
  });
  expect(t.ok(['ready', 'demo'])).toMatchObject({ failed_steps: ['step-0'], failures: { 'step-0': 3 } });
  expect(t.ok(['reset', 'demo', 'step-0'])).toMatchObject({ reset: true, previous_status: 'failed' });
  expect(t.ok(['claim', 'demo', '--worktree', w1])).toMatchObject({ attempt: 5, failures: 0 });
  const live = await t.refused(['reset', 'demo', 'step-0'], 'InvalidTransition', 4);
  expect(live.json.error.details.claimed_by).toBe(b.owner(w1));
  expect(t.ok(['reset', 'demo', 'step-0', '--force'])).toMatchObject({
    previous_status: 'claimed',
    previous_owner: b.owner(w1),
  });
  expect(t.ok(['reset', 'demo', 'step-0'])).toMatchObject({ previous_status: 'pending' });
  await t.refused(['reset', 'demo', 'step-1-1'], 'InvalidArgument', 2);
  // The attempt never goes down: the holder of an old attempt stays fenced off.
  expect(t.ok(['claim', 'demo', '--worktree', w1])).toMatchObject({ attempt: 6 });
  const stale = ['--worktree', w1, '--attempt', '5'];
  await t.refused(['heartbeat', 'demo', 'step-0', ...stale], 'AttemptMismatch', 4);
  await t.refused(['start', 'demo', 'step-0', ...stale], 'AttemptMismatch', 4);
  await t.refused(['update', 'demo', 'step-0', ...stale, '--all', 'completed'], 'AttemptMismatch', 4);
  await t.refused(['artifact', 'demo', 'step-0', ...stale, '--kind', 'note', '--summary', 'x'], 'AttemptMismatch', 4);
  await t.refused(['complete', 'demo', 'step-0', ...stale, '--force', 'x'], 'AttemptMismatch', 4);
  t.ok(['complete', 'demo', 'step-0', '--worktree', w1, '--force', 'x', '--attempt', '6']);
  await t.refused(['reset', 'demo', 'step-0'], 'InvalidTransition', 4);
  await t.refused(['start', 'demo', 'step-0', '--worktree', w1], 'InvalidTransition', 4);
  return t;
});

scenario('takes over expired leases at TUGCODE_NOW and fails a step at the cap', async (b) => {
  const { w1, w2, t } = setup(b);
  const env = { TUGCODE_STATE_MAX_ATTEMPTS: '2' };
  t.ok(['claim', 'demo', '--worktree', w1, '--lease-duration', '60'], { env });
  t.ok(['update', 'demo', 'step-0', '--worktree', w1, '--task', '0', 'completed'], { env });
  // At equality the lease is live.
  expect(t.ok(['claim', 'demo', '--worktree', w2], { now: at(60), env })).toMatchObject({ claimed: false });
  expect(t.ok(['ready', 'demo'], { now: at(61) })).toMatchObject({
    ready_steps: ['step-0'],
    expired_claims: ['step-0'],
  });
  // Expired but not taken over: the owner's heartbeat revives the lease.
  expect(
    t.ok(['heartbeat', 'demo', 'step-0', '--worktree', w1, '--lease-duration', '60'], { now: at(61), env }),
  ).toMatchObject({ renewed: true, lease_expires_at: at(121) });
  expect(t.ok(['claim', 'demo', '--worktree', w2], { now: at(121), env }).claimed).toBe(false);
  const take = t.ok(['claim', 'demo', '--worktree', w2, '--lease-duration', '60'], { now: at(122), env });
  expect(take).toMatchObject({
    claimed: true,
    step_anchor: 'step-0',
    reclaimed_from_expired: true,
    previous_owner: b.owner(w1),
    attempt: 2,
    failures: 1,
  });
  const items = t.ok(['show', 'demo', '--items', 'all'], { now: at(122) }).plans[0].steps[0];
  expect(items.counts.tasks.completed).toBe(0);
  await t.refused(['heartbeat', 'demo', 'step-0', '--worktree', w1], 'LeaseExpired', 4, { now: at(123), env });
  await t.refused(['complete', 'demo', 'step-0', '--worktree', w1, '--force', 'x'], 'LeaseExpired', 4, {
    now: at(123),
    env,
  });
  // The second takeover reaches max_attempts = 2: the step fails and nothing is claimed.
  const capped = t.ok(['claim', 'demo', '--worktree', w1], { now: at(1000), env });
  expect(capped).toMatchObject({ claimed: false, failed_steps: ['step-0'] });
  const log = t.ok(['log', 'demo', '--limit', '3'], { now: at(1000) });
  expect(log.events.map((e: { command: string }) => e.command)).toEqual(['state claim', 'step_failed', 'state claim']);
  expect(log.events[0].actor).toBe(b.owner(w2));
  expect(log.events[2].actor).toBe(b.owner(w1));
  expect(log.events[1].details).toMatchObject({ previous_owner: b.owner(w2), fail_reason: 'lease expired' });
  return t;
});

scenario('claims one step with --step', async (b) => {
  const { w1, w2, t } = setup(b);
  expect(t.ok(['claim', 'demo', '--worktree', w1, '--step', 'step-1'])).toMatchObject({
    claimed: false,
    reason: 'not_ready',
    blocked_by: ['step-0'],
    claimed_by: null,
  });
  await t.refused(['claim', 'demo', '--worktree', w1, '--step', 'step-1-1'], 'InvalidArgument', 2);
  await t.refused(['claim', 'demo', '--worktree', w1, '--step', 'step-9'], 'StepNotFound', 3);
  expect(t.ok(['claim', 'demo', '--worktree', w1, '--step', 'step-0'])).toMatchObject({ step_anchor: 'step-0' });
  expect(t.ok(['claim', 'demo', '--worktree', w2, '--step', 'step-0'])).toMatchObject({
    claimed: false,
    reason: 'not_ready',
    claimed_by: b.owner(w1),
  });
  const other = await t.refused(['claim', 'demo', '--worktree', w1, '--step', 'step-2'], 'InvalidTransition', 4);
  expect(other.json.error.details.held_step).toBe('step-0');
  return t;
});

scenario('reports every argument and resolution error with its exit code, changing nothing', async (b) => {
  const { root, w1, t } = setup(b, { [DEMO_PATH]: DEMO, '.tugtool/tugplan-other.md': DEMO });
  t.ok(['claim', 'demo', '--worktree', w1]);
  const upd = ['update', 'demo', 'step-0', '--worktree', w1];
  await t.refused(['claim', 'demo', '--worktree', w1, '--bogus'], 'InvalidArgument', 2);
  await t.refused(['claim', 'demo', '--worktree', w1, '--lease-duration', '-5'], 'InvalidArgument', 2);
  await t.refused([...upd, '--task', '99', 'completed'], 'InvalidArgument', 2);
  await t.refused([...upd, '--task', '0', 'done'], 'InvalidStatus', 2);
  await t.refused([...upd, '--task', '0', 'deferred'], 'InvalidArgument', 2);
  await t.refused([...upd, '--batch', '--task', '0', 'completed'], 'InvalidArgument', 2, { input: '[]' });
  await t.refused([...upd, '--batch'], 'InvalidBatch', 2, { input: '{"kind":"task"}' });
  await t.refused([...upd, '--batch'], 'InvalidBatch', 2, { input: '' });
  await t.refused([...upd, '--batch'], 'InvalidBatch', 2, {
    input: '[{"kind":"task","ordinal":0,"status":"completed"},{"kind":"task","ordinal":0,"status":"completed"}]',
  });
  // Validation before change: the valid first entry of a batch is not applied either.
  await t.refused([...upd, '--batch'], 'InvalidBatch', 2, {
    input: '[{"kind":"task","ordinal":0,"status":"completed"},{"kind":"task","ordinal":42,"status":"completed"}]',
  });
  await t.refused(
    ['artifact', 'demo', 'step-0', '--worktree', w1, '--kind', 'note', '--summary-file', '-'],
    'InvalidArgument',
    2,
    { input: 'a\u0000b' },
  );
  await t.refused(['complete', 'demo', 'step-0', '--worktree', w1, '--commit', 'no-such-rev'], 'InvalidArgument', 2);
  await t.refused(['log', '--limit', '0'], 'InvalidArgument', 2);
  await t.refused(['claim', 'demo', '--worktree', w1], 'ConfigInvalid', 2, { env: { TUGCODE_NOW: 'yesterday' } });
  await t.refused(['claim', 'nope', '--worktree', w1], 'PlanNotFound', 3);
  await t.refused(['claim', 'other', '--worktree', w1], 'PlanNotInitialized', 3);
  await t.refused(['show', 'other'], 'PlanNotInitialized', 3);
  await t.refused(['ready', 'other'], 'PlanNotInitialized', 3);
  await t.refused(['start', 'demo', 'step-99', '--worktree', w1], 'StepNotFound', 3);
  await t.refused(['claim', 'demo', '--worktree', t.name('outside', tempRepo())], 'WorktreeNotFound', 3);
  void root;
  return t;
});

scenario('refuses what the state forbids with exit 4, changing nothing', async (b) => {
  const { w1, w2, t } = setup(b, {
    [DEMO_PATH]: planText([
      { id: '0', deps: [], tasks: ['a'] },
      { id: '1', deps: ['step-0'], tasks: ['b'], refactors: ['organize-imports --file src/x.ts'] },
      { id: '1.1', level: 5, tasks: ['c'] },
    ]),
  });
  t.ok(['claim', 'demo', '--worktree', w1]);
  await t.refused(['start', 'demo', 'step-0', '--worktree', w2], 'NotOwner', 4);
  await t.refused(['heartbeat', 'demo', 'step-0', '--worktree', w2], 'NotOwner', 4);
  await t.refused(['update', 'demo', 'step-0', '--worktree', w2, '--all', 'completed'], 'NotOwner', 4);
  await t.refused(['artifact', 'demo', 'step-0', '--worktree', w2, '--kind', 'note', '--summary', 'x'], 'NotOwner', 4);
  await t.refused(['fail', 'demo', 'step-0', '--worktree', w2, '--reason', 'x'], 'NotOwner', 4);
  await t.refused(['complete', 'demo', 'step-0', '--worktree', w1], 'ChecklistIncomplete', 4);
  t.ok(['complete', 'demo', 'step-0', '--worktree', w1, '--force', 'trivial']);
  await t.refused(['update', 'demo', 'step-0', '--worktree', w1, '--all', 'completed'], 'InvalidTransition', 4);
  t.ok(['claim', 'demo', '--worktree', w1]);
  t.ok(['update', 'demo', 'step-1', '--worktree', w1, '--task', '0', 'deferred', '--reason', 'later']);
  await t.refused(['update', 'demo', 'step-1', '--worktree', w1, '--task', '0', 'open'], 'InvalidTransition', 4);
  await t.refused(['complete', 'demo', 'step-1', '--worktree', w1], 'SubstepsIncomplete', 4);
  t.ok(['update', 'demo', 'step-1-1', '--worktree', w1, '--complete-remaining']);
  const r = await t.refused(['complete', 'demo', 'step-1', '--worktree', w1], 'RefactorsIncomplete', 4);
  expect(r.json.error.details.open_refactors).toHaveLength(1);
  await t.refused(['update', 'demo', 'step-1-1', '--worktree', w1, '--all', 'completed'], 'InvalidTransition', 4);
  return t;
});

scenario('checks drift: prose refresh, structural drift, a plan gone from the worktree', async (b) => {
  const { w1, w2, t } = setup(b);
  t.ok(['claim', 'demo', '--worktree', w1]);
  const plan = join(w1, DEMO_PATH);
  const text = readFileSync(plan, 'utf8');
  writeFileSync(plan, text.replace('Create API client', 'Create the API client'));
  const u = t.ok(['update', 'demo', 'step-0', '--worktree', w1, '--task', '0', 'completed']);
  expect(u.warnings.map((w: { code: string }) => w.code)).toEqual(['PlanProseChanged']);
  expect(t.ok(['show', 'demo']).plans[0].steps[0].title).toBe('Create the API client');
  expect(t.ok(['update', 'demo', 'step-0', '--worktree', w1, '--task', '1', 'completed']).warnings).toEqual([]);
  writeFileSync(plan, text + '\n#### Step 9: Extra {#step-9}\n\n**Tasks:**\n- [ ] more\n');
  const d = await t.refused(['update', 'demo', 'step-0', '--worktree', w1, '--all', 'completed'], 'PlanDrift', 4);
  expect(d.json.error.hint).toContain('--force');
  await t.refused(['complete', 'demo', 'step-0', '--worktree', w1, '--force', 'x'], 'PlanDrift', 4);
  rmSync(plan);
  await t.refused(['complete', 'demo', 'step-0', '--worktree', w1, '--force', 'x'], 'PlanNotFound', 3);
  // Heartbeats and starts never check drift.
  t.ok(['heartbeat', 'demo', 'step-0', '--worktree', w1]);
  // A structural change in the main checkout: init refuses without --force, re-initializes with it.
  writeFileSync(join(t.root, DEMO_PATH), text + '\n#### Step 9: Extra {#step-9}\n\n**Tasks:**\n- [ ] more\n');
  await t.refused(['init', 'demo'], 'PlanDrift', 4);
  const re = t.ok(['init', 'demo', '--force']);
  expect(re).toMatchObject({ reinitialized: true, steps_created: 1 });
  const show = t.ok(['show', 'demo']).plans[0].steps;
  expect(show[0]).toMatchObject({ status: 'claimed', claimed_by: b.owner(w1) });
  expect(show.map((s: { anchor: string }) => s.anchor)).toContain('step-9');
  void w2;
  return t;
});

scenario('reconciles from trailer commits and prunes plans whose file is gone', async (b) => {
  const { root, w1, w2, t } = setup(b, { [DEMO_PATH]: DEMO, '.tugtool/tugplan-old.md': DEMO });
  t.ok(['init', 'old']);
  t.ok(['claim', 'demo', '--worktree', w1]);
  git(root, 'commit', '-q', '--allow-empty', '-m', `feat: client\n\nTug-Step: step-0\nTug-Plan: ${DEMO_PATH}`);
  git(root, 'commit', '-q', '--allow-empty', '-m', `feat: x\n\nTug-Step: step-7\nTug-Plan: ${DEMO_PATH}`);
  const r = t.ok(['reconcile', 'demo']);
  expect(r.reconciled).toEqual([]);
  expect(r.skipped_steps.map((s: { step_anchor: string }) => s.step_anchor)).toEqual(['step-0']);
  expect(r.unknown_steps).toEqual(['step-7']);
  const f = t.ok(['reconcile', 'demo', '--force']);
  expect(f.reconciled.map((x: { step_anchor: string }) => x.step_anchor)).toEqual(['step-0']);
  expect(t.ok(['reconcile', 'demo', '--ref', 'HEAD', '--all-branches']).reconciled).toEqual([]);
  expect(t.ok(['show', 'demo']).plans[0].steps[0]).toMatchObject({
    status: 'completed',
    completed_via: 'reconcile',
    commit_hash: git(root, 'rev-parse', 'HEAD~1').trim(),
  });
  expect(t.ok(['prune', '--dry-run'])).toMatchObject({ pruned: [], dry_run: true });
  git(root, 'rm', '-q', '.tugtool/tugplan-old.md');
  git(root, 'commit', '-q', '-m', 'drop old');
  for (const w of [w1, w2]) rmSync(join(w, '.tugtool/tugplan-old.md'));
  expect(t.ok(['prune', '--dry-run']).pruned).toEqual(['.tugtool/tugplan-old.md']);
  expect(t.ok(['prune'])).toMatchObject({ pruned: ['.tugtool/tugplan-old.md'], dry_run: false });
  expect(t.ok(['list']).plans.map((p: { status: string }) => p.status)).toEqual(['active', 'archived']);
  t.ok(['prune', '--purge']);
  expect(t.ok(['list']).plans.map((p: { plan_path: string }) => p.plan_path)).toEqual([DEMO_PATH]);
  const log = t.ok(['log', '--limit', '1']).events[0];
  expect(log).toMatchObject({ command: 'state prune', plan_path: null, actor: 'admin' });
  return t;
});

scenario('answers the read-only commands, and creates nothing before init', async (b) => {
  const { root, w1, t } = setup(b, undefined, false);
  expect(t.ok(['show']).plans).toEqual([]);
  expect(t.ok(['list']).plans).toEqual([]);
  expect(t.ok(['log']).events).toEqual([]);
  await t.refused(['show', 'demo'], 'PlanNotInitialized', 3);
  await t.refused(['claim', 'demo', '--worktree', w1], 'PlanNotInitialized', 3);
  await t.refused(['graph', 'demo'], 'PlanNotInitialized', 3);
  expect(await b.dump(root)).toBeNull();
  t.ok(['init', 'demo']);
  t.ok(['claim', 'demo', '--worktree', w1]);
  const show = t.ok(['show', 'demo', '--items', 'all']);
  expect(show.plans[0].steps).toHaveLength(5);
  expect(show.plans[0].steps[2]).toMatchObject({ anchor: 'step-1-1', parent_anchor: 'step-1', claimed_by: null });
  expect(
    t
      .ok(['show', 'demo', '--step', 'step-1', '--items', 'none'])
      .plans[0].steps.map((s: { anchor: string }) => s.anchor),
  ).toEqual(['step-1', 'step-1-1', 'step-1-2']);
  const text = stText(root, ['show', 'demo'], { now: at(15 * 60), env: b.env });
  expect(text.code).toBe(0);
  expect(text.stdout).toContain('Lease: expires in 1h 45m');
  expect(text.stdout).toContain(b.kind === 'postgres' ? 'State: PostgreSQL' : 'Plan: .tugtool/tugplan-demo.md');
  expect(t.ok(['ready', 'demo'])).toMatchObject({
    all_steps: ['step-0', 'step-1', 'step-2'],
    claimed_steps: ['step-0'],
    blocked_steps: ['step-1', 'step-2'],
    ready_steps: [],
  });
  const log = t.ok(['log', 'demo', '--limit', '1']).events;
  expect(log[0]).toMatchObject({ command: 'state claim', actor: b.owner(w1), details: { claimed: true } });
  expect(t.ok(['log', '--after-id', '0', '--limit', '1'])).toMatchObject({ next_after_id: 1 });
  expect(t.ok(['log', '--after-id', '1']).events.map((e: { id: number }) => e.id)).toEqual([2]);
  expect(t.ok(['log', '--since', at(1)]).events).toEqual([]);
  expect(t.ok(['list']).plans).toEqual([
    {
      plan_path: DEMO_PATH,
      status: 'active',
      steps_completed: 0,
      steps_total: 3,
      items_completed: 0,
      items_total: 20,
      items_deferred: 0,
      claimed_steps: ['step-0'],
    },
  ]);
  const g = t.ok(['graph', 'demo', '--format', 'dot']);
  expect(g.edges).toContainEqual(['step-0', 'step-1']);
  expect(g.text).toMatch(/^digraph/);
  expect(t.ok(['graph', 'demo']).text).toMatch(/^flowchart TD/);
  return t;
});

scenario('refuses an invalid plan and a newer schema', async (b) => {
  const { root, w1, t } = setup(
    b,
    { '.tugtool/tugplan-bad.md': '# Just a title\n\nNo steps.\n', [DEMO_PATH]: DEMO },
    false,
  );
  await t.refused(['init', 'bad'], 'PlanInvalid', 4);
  expect(await b.dump(root)).toBeNull();
  t.ok(['init', 'demo']);
  if (b.kind === 'postgres') {
    const c = new pg.Client({ connectionString: b.db!.url });
    await c.connect();
    await c.query(`UPDATE "${b.schema}".schema_version SET version = 42`);
    await c.end();
  } else {
    const Database = (await import('better-sqlite3')).default;
    const db = new Database(join(root, '.tugtool', 'state.db'));
    db.prepare('UPDATE schema_version SET version = 42').run();
    db.close();
  }
  await t.refused(['claim', 'demo', '--worktree', w1], 'SchemaTooNew', 4);
  expect(t.ok(['ready', 'demo']).all_steps).toEqual(['step-0', 'step-1', 'step-2']);
  return t;
});

describe('both backends give the same results', () => {
  it('has identical normalized transcripts for every scenario', () => {
    for (const [name, by] of Object.entries(transcripts)) {
      if (!by.sqlite || !by.postgres) continue;
      expect(by.postgres.length, name).toBe(by.sqlite.length);
      for (let i = 0; i < by.sqlite.length; i++) {
        expect.soft(by.postgres[i], `${name}: call ${i} (${by.sqlite[i]!.args.join(' ')})`).toEqual(by.sqlite[i]);
      }
    }
  });
});
