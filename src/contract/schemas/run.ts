/**
 * The driver's outputs (docs/run.md §1): the JSON Lines event stream of `tugcode run --json`
 * (`runEventSchema`, one object per line, discriminated by `type`) and the envelope of
 * `tugcode run --dry-run --json` (`runDryRunSchema`, registered as the `run` output schema).
 * tests/contract/run-schema.test.ts checks these against the plain types of src/run/types.ts.
 */
import { z } from 'zod';
import { anchor, commitHash, okEnvelope, repoPath, timestamp, touchesHeld } from './common.js';
import { usageSchema, usageTotalsSchema } from './usage.js';
import { USAGE_ROLES } from '../usage.js';

export const RUN_PHASES = [
  'reset',
  'setup',
  'refactors',
  'implementer',
  'checkpoints',
  'commit',
  'review',
  'integrate',
  'resolve',
  'complete',
] as const;

export const FAIL_CODES = [
  'ImplementerFailed',
  'StepTimeout',
  'RefactorFailed',
  'CheckpointFailed',
  'HookFailed',
  'CommitFailed',
  'ChecklistIncomplete',
  'SubstepsIncomplete',
  'RefactorsIncomplete',
  'IntegrationConflict',
  'WorktreeBroken',
  'OutsideWrite',
  'ReviewRejected',
  'ReviewerFailed',
  'ReviewCommitMissing',
  'Stalled',
  'PlanEdited',
] as const;

/** A reviewer's verdicts (docs/run.md §6.2). */
export const VERDICTS = ['APPROVE', 'REVISE', 'ESCALATE'] as const;

/**
 * The reviewer's verdict (docs/run.md §6.2): one JSON object, the last non-empty line of its output.
 * Unknown keys are dropped; `issues` may be left out when there are none.
 */
export const reviewVerdictSchema = z.object({
  verdict: z.enum(VERDICTS),
  summary: z.string(),
  issues: z
    .array(
      z.object({
        severity: z.enum(['blocker', 'major', 'minor']),
        file: z.string().optional(),
        line: z.number().int().nonnegative().nullable().optional(),
        message: z.string(),
      }),
    )
    .default([]),
});

const count = z.number().int().nonnegative();
const attempt = z.number().int().positive();
/** `w1`, `w2`, … */
const worker = z.string().regex(/^w[1-9][0-9]*$/, 'worker name w<k>');

const runStarted = z
  .object({
    type: z.literal('run_started'),
    at: timestamp,
    plan_path: repoPath,
    integration_branch: z.string().min(1),
    base_branch: z.string().min(1),
    workers: z.number().int().positive(),
    /** `--workers` when the plan can keep fewer busy at once, and the run started fewer (docs/run.md §1 item 3). */
    workers_requested: z.number().int().positive().optional(),
    /** `--remote NAME`: the run integrates through NAME's integration branch (docs/run.md §1.1 item 2). */
    remote: z.string().min(1).optional(),
  })
  .strict();

const claimed = z
  .object({
    type: z.literal('claimed'),
    at: timestamp,
    worker,
    step_anchor: anchor,
    attempt,
    resumed: z.boolean(),
    reclaimed_from_expired: z.boolean(),
    // The attempt counts claims, the cap failures (docs/state.md §3.6): both, so a reader can tell them apart.
    failures: z.number().int().nonnegative().optional(),
    max_attempts: z.number().int().positive().optional(),
  })
  .strict();

const phase = z
  .object({
    type: z.literal('phase'),
    at: timestamp,
    worker,
    step_anchor: anchor,
    phase: z.enum(RUN_PHASES),
    // The substep the phase runs for (docs/run.md §1.3): the claim is the top-level step's.
    substep_anchor: anchor.optional(),
  })
  .strict();

const stepCompleted = z
  .object({
    type: z.literal('step_completed'),
    at: timestamp,
    worker,
    step_anchor: anchor,
    commit_hash: commitHash.nullable(),
  })
  .strict();

const attemptFailed = z
  .object({
    type: z.literal('attempt_failed'),
    at: timestamp,
    worker,
    step_anchor: anchor,
    attempt,
    reason_code: z.enum(FAIL_CODES),
    reason: z.string(),
    logs: z.array(z.string()).optional(),
    substep_anchor: anchor.optional(),
  })
  .strict();

const claimLost = z
  .object({
    type: z.literal('claim_lost'),
    at: timestamp,
    worker,
    step_anchor: anchor,
    attempt,
    error_code: z.string().min(1),
    /** StepCompletedElsewhere: the commit that keeps the worktree's work (docs/agents.md §1.7). */
    kept_commit: z.string().optional(),
  })
  .strict();

const review = z
  .object({
    type: z.literal('review'),
    at: timestamp,
    worker,
    step_anchor: anchor,
    round: z.number().int().positive(),
    verdict: z.enum(VERDICTS),
    summary: z.string(),
  })
  .strict();

const needsHuman = z
  .object({
    type: z.literal('needs_human'),
    at: timestamp,
    step_anchor: anchor,
    review_ref: z.string().min(1),
    reason: z.string(),
  })
  .strict();

/** The integration rebase stopped on a conflict; the resolver gets it (docs/run.md §1.9). */
const conflict = z
  .object({ type: z.literal('conflict'), at: timestamp, worker, step_anchor: anchor, files: z.array(z.string()) })
  .strict();

const conflictResolved = z
  .object({
    type: z.literal('conflict_resolved'),
    at: timestamp,
    worker,
    step_anchor: anchor,
    files: z.array(z.string()),
    /** Which of the attempt's resolution rounds (1-based) merged it. */
    round: z.number().int().positive(),
  })
  .strict();

/** A step an owner outside the run holds, and its lease (docs/run.md §1.4). */
const heldElsewhere = z.array(
  z
    .object({
      step_anchor: anchor,
      owner: z.string().min(1),
      lease_expires_at: timestamp.nullable(),
      lease_expired: z.boolean(),
    })
    .strict(),
);

const waiting = z
  .object({
    type: z.literal('waiting'),
    at: timestamp,
    worker,
    claimed_steps: z.array(anchor).optional(),
    touches_held: touchesHeld.optional(),
    held_by: heldElsewhere.optional(),
  })
  .strict();

const usage = z
  .object({
    type: z.literal('usage'),
    at: timestamp,
    worker,
    step_anchor: anchor,
    attempt,
    role: z.enum(USAGE_ROLES),
    usage: usageSchema,
    plan: z.object({ tokens: count, cost_usd: z.number().nonnegative().nullable() }).strict(),
  })
  .strict();

const stalled = z
  .object({ type: z.literal('stalled'), at: timestamp, worker, step_anchor: anchor, attempt, idle_seconds: count })
  .strict();

const stepFailed = z
  .object({
    type: z.literal('step_failed'),
    at: timestamp,
    worker,
    step_anchor: anchor,
    failures: z.number().int().positive(),
    reason: z.string(),
    max_attempts: z.number().int().positive().optional(),
  })
  .strict();

const budgetExhausted = z
  .object({
    type: z.literal('budget_exhausted'),
    at: timestamp,
    budget_usd: z.number().nonnegative().nullable(),
    budget_tokens: count.nullable(),
    usage: usageTotalsSchema,
    running: z.array(anchor),
  })
  .strict();

const warningEvent = z
  .object({ type: z.literal('warning'), at: timestamp, code: z.string().min(1), message: z.string() })
  .strict();

const workerStopped = z
  .object({ type: z.literal('worker_stopped'), at: timestamp, worker, reason: z.enum(['done', 'signal']) })
  .strict();

/** The fields of RunSummary (docs/run.md §1 item 6), shared by the `summary` event. */
export const runSummaryFields = {
  status: z.enum(['ok', 'error']),
  steps_completed: z.array(anchor),
  failed_steps: z.array(
    z.object({ step_anchor: anchor, reason: z.string(), logs: z.array(z.string()).optional() }).strict(),
  ),
  blocked_steps: z.array(anchor),
  blocked_reasons: z
    .array(z.object({ step_anchor: anchor, blocked_by: z.array(anchor), reason: z.string() }).strict())
    .optional(),
  interrupted_steps: z.array(z.object({ step_anchor: anchor, released: z.boolean() }).strict()).optional(),
  commits: z.array(commitHash),
  wall_ms: count,
  workers: z.array(z.object({ worker, busy_ms: count }).strict()),
  plan_steps: z.array(anchor).optional(),
  plan_done: z.boolean().optional(),
  already_completed: z.array(anchor).optional(),
  nothing_to_merge: z.literal(true).optional(),
  review_rounds: z
    .array(z.object({ step_anchor: anchor, rounds: z.number().int().positive(), verdict: z.enum(VERDICTS) }).strict())
    .optional(),
  human_approved: z.array(anchor).optional(),
  needs_human: z
    .array(z.object({ step_anchor: anchor, review_ref: z.string().min(1), reason: z.string() }).strict())
    .optional(),
  waiting_steps: z.array(anchor).optional(),
  waiting_reasons: z
    .array(z.object({ step_anchor: anchor, blocked_by: z.array(anchor), reason: z.string() }).strict())
    .optional(),
  not_run_steps: z.array(anchor).optional(),
  held_steps: heldElsewhere.optional(),
  completed_outside: z
    .array(z.object({ step_anchor: anchor, own_worktree: z.boolean(), kept_commit: commitHash.nullable() }).strict())
    .optional(),
  conflicts_resolved: z
    .array(z.object({ step_anchor: anchor, files: z.array(z.string()), round: z.number().int().positive() }).strict())
    .optional(),
  usage: usageTotalsSchema.optional(),
  plan_usage: usageTotalsSchema.optional(),
  error: z
    .object({ code: z.string(), message: z.string(), details: z.record(z.unknown()), hint: z.string().optional() })
    .strict()
    .optional(),
};

const summary = z.object({ type: z.literal('summary'), at: timestamp, ...runSummaryFields }).strict();

/** One line of `tugcode run --json`. */
export const runEventSchema = z.discriminatedUnion('type', [
  runStarted,
  claimed,
  phase,
  stepCompleted,
  attemptFailed,
  claimLost,
  review,
  needsHuman,
  conflict,
  conflictResolved,
  waiting,
  workerStopped,
  usage,
  stalled,
  stepFailed,
  budgetExhausted,
  warningEvent,
  summary,
]);

/**
 * The first line of `tugcode demo --json` (docs/run.md §4: the repository's path is printed either way), before
 * the run's own lines: where the demo repository is, and whether it stays after the run.
 */
export const demoEventSchema = z
  .object({
    type: z.literal('demo'),
    at: timestamp,
    repo_root: z.string().min(1),
    plan_path: repoPath,
    kept: z.boolean(),
  })
  .strict();

/** One top-level step of the dry-run schedule (src/run/schedule.ts `ScheduledStep`). */
const scheduledStep = z
  .object({
    step_anchor: anchor,
    title: z.string(),
    /** 1-based: the step is in `waves[wave - 1]`. */
    wave: z.number().int().positive(),
    depends_on: z.array(anchor),
    refactors: z.array(z.string()),
    implementer: z.string().nullable(),
    /** A human approved the step's kept commit (docs/run.md §6.3): the run integrates it, no implementer. */
    approved_commit: commitHash.optional(),
    checkpoint_commands: z.array(z.string()),
    substeps: z.array(anchor),
  })
  .strict();

/** The schedule (src/run/schedule.ts `Schedule`). */
export const scheduleFields = {
  waves: z.array(z.array(anchor)),
  critical_path: z.array(anchor),
  steps: z.array(scheduledStep),
  done: z.array(anchor),
  apart: z.array(z.tuple([anchor, anchor])),
};

/** `tugcode run --dry-run --json`: the schedule, nothing changed. */
export const runDryRunSchema = okEnvelope('run', {
  dry_run: z.literal(true),
  plan_path: repoPath,
  /** False: the schedule is of the main checkout's copy, which the real run refuses until committed (docs/run.md §1.10). */
  plan_committed: z.boolean(),
  ...scheduleFields,
  /** The workers the real run starts: `--workers`, no more than the steps still to run can keep busy at once. */
  workers: z.number().int().positive(),
  /** `--workers` when the real run starts fewer (docs/run.md §1 item 3). */
  workers_requested: z.number().int().positive().optional(),
  /** Steps failed at their attempt cap: left out of the schedule, as the real run claims none (docs/run.md §1.10). */
  failed_steps: z.array(z.object({ step_anchor: anchor, reason: z.string() }).strict()),
  /** Steps behind a failed step, left out too, and why (as the run's summary says it). */
  blocked_steps: z.array(anchor),
  blocked_reasons: z.array(z.object({ step_anchor: anchor, blocked_by: z.array(anchor), reason: z.string() }).strict()),
  /** Steps a reviewer escalated, waiting for `tugcode state decide` (docs/run.md §6.3): left out too. */
  needs_human: z.array(z.object({ step_anchor: anchor, review_ref: z.string().min(1), reason: z.string() }).strict()),
  /** Steps behind a step waiting for a human (and no failed one), left out, and why. */
  waiting_steps: z.array(anchor),
  waiting_reasons: z.array(z.object({ step_anchor: anchor, blocked_by: z.array(anchor), reason: z.string() }).strict()),
  /**
   * The review gate (docs/run.md §6), null when the run has none: the reviewer command (an agent preset's
   * command line), the preset, and the rounds a step gets.
   */
  review: z
    .object({
      reviewer: z.string().min(1),
      review_agent: z.enum(['claude', 'codex']).nullable(),
      rounds: z.number().int().nonnegative(),
    })
    .strict()
    .nullable(),
});

export const runSchemas = { run: runDryRunSchema };
