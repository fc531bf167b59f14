import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { runDryRunSchema, runEventSchema } from '../../src/contract/schemas/run.js';
import { jsonSchemaFor, schemaFor } from '../../src/contract/schemas/index.js';
import type { RunEvent } from '../../src/run/types.js';
import type { Schedule } from '../../src/run/schedule.js';

// Type-level: the zod schemas and the plain types of src/run/types.ts accept exactly the same values,
// so neither can drift without `tsc --noEmit` failing.
type Inferred = z.infer<typeof runEventSchema>;
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const eventsMatch: Same<Inferred, RunEvent> = true;
type DryRun = z.infer<typeof runDryRunSchema>;
const scheduleMatches: Same<Pick<DryRun, keyof Schedule>, Schedule> = true;

const at = '2026-01-02T03:04:05.678Z';
const hash = 'a'.repeat(40);

/** One sample per event type: the mapped type makes a missing or extra type a compile error. */
const samples: { [K in RunEvent['type']]: Extract<RunEvent, { type: K }> } = {
  run_started: {
    type: 'run_started',
    at,
    plan_path: '.tugtool/tugplan-demo.md',
    integration_branch: 'tugplan/demo',
    base_branch: 'main',
    workers: 3,
  },
  claimed: {
    type: 'claimed',
    at,
    worker: 'w1',
    step_anchor: 'step-1',
    attempt: 1,
    resumed: false,
    reclaimed_from_expired: false,
  },
  phase: { type: 'phase', at, worker: 'w1', step_anchor: 'step-1', phase: 'implementer' },
  step_completed: { type: 'step_completed', at, worker: 'w2', step_anchor: 'step-3', commit_hash: hash },
  attempt_failed: {
    type: 'attempt_failed',
    at,
    worker: 'w1',
    step_anchor: 'step-2',
    attempt: 2,
    reason_code: 'CheckpointFailed',
    reason: 'CheckpointFailed: `npm test` exited 1',
  },
  claim_lost: { type: 'claim_lost', at, worker: 'w3', step_anchor: 'step-4', attempt: 1, error_code: 'LeaseExpired' },
  review: {
    type: 'review',
    at,
    worker: 'w1',
    step_anchor: 'step-2',
    round: 1,
    verdict: 'REVISE',
    summary: 'the greeting is not printed',
  },
  needs_human: {
    type: 'needs_human',
    at,
    step_anchor: 'step-3',
    review_ref: 'refs/tugplan/review/demo/step-3',
    reason: 'the plan asks for two incompatible things',
  },
  conflict: { type: 'conflict', at, worker: 'w2', step_anchor: 'step-3', files: ['src/a.ts'] },
  conflict_resolved: {
    type: 'conflict_resolved',
    at,
    worker: 'w2',
    step_anchor: 'step-3',
    files: ['src/a.ts'],
    round: 1,
  },
  waiting: { type: 'waiting', at, worker: 'w2' },
  worker_stopped: { type: 'worker_stopped', at, worker: 'w1', reason: 'done' },
  usage: {
    type: 'usage',
    at,
    worker: 'w1',
    step_anchor: 'step-1',
    attempt: 1,
    role: 'implementer',
    usage: { input_tokens: 10, output_tokens: 5, cache_read_tokens: null, cache_write_tokens: 0, cost_usd: 0.25 },
    plan: { tokens: 15, cost_usd: 0.25 },
  },
  stalled: { type: 'stalled', at, worker: 'w1', step_anchor: 'step-2', attempt: 1, idle_seconds: 600 },
  step_failed: { type: 'step_failed', at, worker: 'w1', step_anchor: 'step-2', failures: 3, reason: 'Stalled: …' },
  budget_exhausted: {
    type: 'budget_exhausted',
    at,
    budget_usd: 1,
    budget_tokens: null,
    usage: {
      input_tokens: 10,
      output_tokens: 5,
      cache_read_tokens: 0,
      cache_write_tokens: 0,
      tokens: 15,
      cost_usd: 1.25,
      reports: 1,
      unpriced: 0,
      by_role: { implementer: { tokens: 15, cost_usd: 1.25, reports: 1 } },
    },
    running: ['step-3'],
  },
  warning: { type: 'warning', at, code: 'NotifyFailed', message: 'notify for stalled: exited 1' },
  summary: {
    type: 'summary',
    at,
    status: 'error',
    steps_completed: ['step-1'],
    failed_steps: [{ step_anchor: 'step-2', reason: 'ImplementerFailed: exit 1' }],
    blocked_steps: ['step-4'],
    commits: [hash],
    wall_ms: 1234,
    workers: [{ worker: 'w1', busy_ms: 1000 }],
    error: { code: 'PlanIncomplete', message: 'm', details: { failed_steps: ['step-2'] }, hint: 'h' },
  },
};

describe('run event schemas', () => {
  it('match the TS types (checked by tsc)', () => {
    expect(eventsMatch && scheduleMatches).toBe(true);
  });

  it('parse a sample of every event type, unchanged', () => {
    for (const e of Object.values(samples)) expect(runEventSchema.parse(e)).toEqual(e);
  });

  it('accept a waiting event and a summary naming steps held outside the run (docs/run.md §1.4)', () => {
    const held = {
      step_anchor: 'step-1',
      owner: '/repo/.tugtree/tugplan__demo--20260101-000000',
      lease_expires_at: at,
      lease_expired: false,
    };
    const waiting = { ...samples.waiting, claimed_steps: ['step-1'], held_by: [held] };
    expect(runEventSchema.parse(waiting)).toEqual(waiting);
    const summary = {
      ...samples.summary,
      not_run_steps: ['step-1'],
      held_steps: [{ ...held, lease_expires_at: null }],
    };
    expect(runEventSchema.parse(summary)).toEqual(summary);
    expect(runEventSchema.safeParse({ ...waiting, held_by: [{ ...held, owner: '' }] }).success).toBe(false);
    const outside = {
      ...samples.summary,
      completed_outside: [
        { step_anchor: 'step-1', own_worktree: true, kept_commit: hash },
        { step_anchor: 'step-2', own_worktree: false, kept_commit: null },
      ],
    };
    expect(runEventSchema.parse(outside)).toEqual(outside);
    const noOwn = { step_anchor: 'step-1', kept_commit: hash };
    expect(runEventSchema.safeParse({ ...outside, completed_outside: [noOwn] }).success).toBe(false);
    expect(runEventSchema.safeParse({ ...waiting, held_by: [{ ...held, extra: 1 }] }).success).toBe(false);
  });

  it('accept a null commit hash and a summary without error', () => {
    expect(runEventSchema.safeParse({ ...samples.step_completed, commit_hash: null }).success).toBe(true);
    const { error: _e, ...ok } = samples.summary;
    expect(runEventSchema.safeParse({ ...ok, status: 'ok' }).success).toBe(true);
  });

  it('reject unknown fields, unknown types, bad timestamps, phases and reason codes', () => {
    const bad: unknown[] = [
      { ...samples.waiting, extra: 1 },
      { type: 'nope', at },
      { ...samples.waiting, at: '2026-01-02T03:04:05Z' },
      { ...samples.phase, phase: 'lunch' },
      { ...samples.attempt_failed, reason_code: 'Oops' },
      { ...samples.usage, role: 'architect' },
      { ...samples.usage, usage: { ...samples.usage.usage, input_tokens: -1 } },
      { ...samples.claimed, step_anchor: '#step-1' },
      { ...samples.claimed, attempt: 0 },
      { ...samples.summary, workers: [{ worker: 'w1' }] },
    ];
    for (const b of bad) expect(runEventSchema.safeParse(b).success, JSON.stringify(b)).toBe(false);
  });

  it('register the --dry-run envelope as the `run` output schema, with a JSON Schema', async () => {
    expect(schemaFor('run')).toBe(runDryRunSchema);
    const value = {
      status: 'ok',
      schema_version: '1',
      command: 'run',
      warnings: [],
      dry_run: true,
      plan_path: '.tugtool/tugplan-demo.md',
      plan_committed: true,
      waves: [['step-1'], ['step-2']],
      critical_path: ['step-1', 'step-2'],
      done: [],
      apart: [['step-1', 'step-2']],
      steps: [
        {
          step_anchor: 'step-1',
          title: 'One',
          wave: 1,
          depends_on: [],
          refactors: ['rename-symbol a b'],
          implementer: null,
          checkpoint_commands: ['npm test'],
          substeps: ['step-1-1'],
        },
      ],
      failed_steps: [],
      blocked_steps: [],
      blocked_reasons: [],
      needs_human: [{ step_anchor: 'step-3', review_ref: 'refs/tugplan/review/demo/step-3', reason: 'ESCALATE' }],
      waiting_steps: ['step-4'],
      waiting_reasons: [
        { step_anchor: 'step-4', blocked_by: ['step-3'], reason: 'waits on step-3 (waits for a human)' },
      ],
      review: { reviewer: 'node review.mjs', review_agent: null, rounds: 3 },
      workers: 1,
      workers_requested: 2,
    };
    expect(runDryRunSchema.parse(value)).toEqual(value);
    // `workers_requested` only when the run starts fewer than asked for (docs/run.md §1 item 3).
    const { workers_requested: _, ...all } = value;
    expect(runDryRunSchema.parse(all)).toEqual(all);
    expect(runDryRunSchema.safeParse({ ...value, workers: 0 }).success).toBe(false);
    expect(runDryRunSchema.parse({ ...value, review: null })).toEqual({ ...value, review: null });
    const js = await jsonSchemaFor('run');
    expect(js.type).toBe('object');
  });
});
