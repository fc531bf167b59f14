/**
 * Output schemas of the `tugcode state` commands (docs/state.md §4–§6). The single source of truth for the
 * JSON fields; tests parse every real output with them. Loaded only by `tugcode schema` and tests.
 */
import { z } from 'zod';
import {
  absPath,
  anchor,
  ownerName,
  commitHash,
  okEnvelope,
  repoPath,
  sha256,
  timestamp,
  runDriverLine,
  lastRunLine,
  touchesHeld,
} from './common.js';
import { stateExportDocument } from './state-export.js';
import { usageTotalsSchema } from './usage.js';
import {
  ARTIFACT_KINDS,
  ITEM_KINDS,
  ITEM_STATUSES,
  PLAN_STATUSES,
  REFACTOR_STATUSES,
  STEP_STATUSES,
} from '../status.js';

const count = z.number().int().nonnegative();
const anchors = z.array(anchor);
const itemStatus = z.enum(ITEM_STATUSES);
const stepStatus = z.enum(STEP_STATUSES);
const refactorStatus = z.enum(REFACTOR_STATUSES);
const planStatus = z.enum(PLAN_STATUSES);
const completedVia = z.enum(['complete', 'force', 'reconcile']);
const counts = z.object({ open: count, in_progress: count, completed: count, deferred: count }).strict();

const claimed = {
  claimed: z.literal(true),
  step_anchor: anchor,
  step_title: z.string(),
  step_index: count,
  attempt: z.number().int().positive(),
  failures: count,
  remaining_ready: count,
  total_remaining: count,
  lease_expires_at: timestamp,
  reclaimed_from_expired: z.boolean(),
  previous_owner: ownerName.nullable(),
  resumed: z.boolean(),
  integration_branch: z.string().nullable(),
  integration_tip: commitHash.nullable(),
  human_decision: z.literal('approved').nullable(),
  review_commit: commitHash.nullable(),
  human_notes: z.string().nullable(),
};

const notClaimed = {
  claimed: z.literal(false),
  reason: z.enum(['no_ready_steps', 'all_completed', 'not_ready']),
  all_completed: z.boolean(),
  blocked_steps: anchors,
  failed_steps: anchors,
  needs_human_steps: anchors,
  claimed_steps: anchors,
  blocked_by: anchors.optional(),
  claimed_by: ownerName.nullable().optional(),
  touches_overlap: anchor.optional(),
  touches_held: touchesHeld.optional(),
};

const showItem = z
  .object({
    kind: z.enum(ITEM_KINDS),
    ordinal: count,
    depth: count,
    text: z.string(),
    status: itemStatus,
    reason: z.string().nullable(),
  })
  .strict();

const showRefactor = z
  .object({
    ordinal: count,
    op_text: z.string(),
    status: refactorStatus,
    exit_code: z.number().int().nullable(),
    snapshot_before: z.string().nullable(),
    snapshot_after: z.string().nullable(),
  })
  .strict();

/** An artifact listed by `state show --step` (docs/state.md §5.1): no content, only its length. */
const showArtifact = z
  .object({
    id: z.number().int().positive(),
    kind: z.enum(ARTIFACT_KINDS),
    summary: z.string(),
    content_length: count.nullable(),
    recorded_at: timestamp,
    recorded_by: z.string().nullable(),
    attempt: z.number().int().nullable(),
  })
  .strict();

const showStep = z
  .object({
    anchor,
    id: z.string(),
    title: z.string(),
    parent_anchor: anchor.nullable(),
    step_index: count,
    status: stepStatus,
    attempt: count,
    failures: count,
    claimed_by: ownerName.nullable(),
    previous_owner: ownerName.nullable(),
    lease_expires_at: timestamp.nullable(),
    lease_expired: z.boolean(),
    heartbeat_at: timestamp.nullable(),
    started_at: timestamp.nullable(),
    completed_at: timestamp.nullable(),
    commit_hash: commitHash.nullable(),
    completed_via: completedVia.nullable(),
    complete_reason: z.string().nullable(),
    fail_reason: z.string().nullable(),
    review_commit: commitHash.nullable(),
    human_decision: z.literal('approved').nullable(),
    human_notes: z.string().nullable(),
    depends_on: anchors,
    blocked_by: anchors,
    counts: z
      .object({
        tasks: counts,
        tests: counts,
        checkpoints: counts,
        refactors: z.object({ open: count, applied: count, failed: count, skipped: count }).strict(),
        artifacts: count,
      })
      .strict(),
    items: z.array(showItem),
    refactors: z.array(showRefactor),
    artifacts: z.array(showArtifact),
    usage: usageTotalsSchema.nullable(),
  })
  .strict();

const event = z
  .object({
    id: z.number().int().positive(),
    at: timestamp,
    plan_path: repoPath.nullable(),
    step_anchor: anchor.nullable(),
    command: z.string(),
    actor: z.string(),
    attempt: z.number().int().nullable(),
    details: z.record(z.unknown()),
  })
  .strict();

/** Which store answered (docs/state.md §8): never the PostgreSQL password. */
const backend = z.object({ kind: z.enum(['sqlite', 'postgres']), location: z.string() }).strict();

const exportCounts = z
  .object({
    steps: count,
    checklist_items: count,
    step_artifacts: count,
    step_refactors: count,
    step_usage: count,
    events: count,
  })
  .strict();

export const stateSchemas: Record<string, z.ZodTypeAny> = {
  'state init': okEnvelope('state init', {
    plan_path: repoPath,
    plan_hash: sha256,
    structure_hash: sha256,
    steps_created: count,
    checklist_items_created: count,
    refactors_created: count,
    /** Steps (substeps too) `--force` deleted because the plan no longer has them. */
    steps_removed: count,
    already_initialized: z.boolean(),
    reinitialized: z.boolean(),
    implicit_sequential: z.boolean(),
  }),
  'state claim': z.union([okEnvelope('state claim', claimed), okEnvelope('state claim', notClaimed)]),
  'state start': okEnvelope('state start', {
    started: z.literal(true),
    step_anchor: anchor,
    started_at: timestamp,
    already_started: z.boolean(),
  }),
  'state heartbeat': okEnvelope('state heartbeat', {
    renewed: z.literal(true),
    step_anchor: anchor,
    lease_expires_at: timestamp,
  }),
  'state update': okEnvelope('state update', {
    updated: count,
    step_anchor: anchor,
    tasks: counts,
    tests: counts,
    checkpoints: counts,
    step_auto_completed: z.boolean(),
    auto_completed_steps: anchors,
  }),
  'state artifact': okEnvelope('state artifact', {
    recorded: z.literal(true),
    step_anchor: anchor,
    kind: z.enum(ARTIFACT_KINDS),
    artifact_id: z.number().int().positive(),
    truncated: z.boolean(),
  }),
  'state complete': okEnvelope('state complete', {
    completed: z.literal(true),
    step_anchor: anchor,
    commit_hash: commitHash.nullable(),
    forced: z.boolean(),
    force_reason: z.string().nullable(),
    completed_via: completedVia,
    incomplete_items_auto_completed: count,
    already_completed: z.boolean(),
    plan_completed: z.boolean(),
    remaining_steps: count,
  }),
  'state release': okEnvelope('state release', { released: z.literal(true), step_anchor: anchor }),
  'state fail': okEnvelope('state fail', {
    failed_attempt: z.literal(true),
    step_anchor: anchor,
    attempt: z.number().int().positive(),
    failures: z.number().int().positive(),
    step_status: z.enum(['pending', 'failed']),
  }),
  'state show': okEnvelope('state show', {
    backend,
    plans: z.array(
      z
        .object({
          plan_path: repoPath,
          phase_title: z.string().nullable(),
          status: planStatus,
          steps: z.array(showStep),
          overall: z
            .object({ steps_completed: count, steps_total: count, percent: z.number().int().min(0).max(100) })
            .strict(),
          usage: usageTotalsSchema.nullable(),
          // Where the plan integrates (docs/run.md §1.11): a remote's name, or a clone's owner name; null
          // before its first integration records it.
          integration_target: z
            .object({ kind: z.enum(['local', 'remote']), where: z.string() })
            .strict()
            .nullable(),
          // The run holding the plan's lock, as status shows it (docs/state.md §5); claims_expire_at over
          // the steps shown.
          run_driver: runDriverLine,
          // The plan's last run that ended (docs/state.md §2): what a hint's `tugcode run` repeats once no lock is held.
          last_run: lastRunLine,
        })
        .strict(),
    ),
  }),
  'state ready': okEnvelope('state ready', {
    all_steps: anchors,
    ready_steps: anchors,
    completed_steps: anchors,
    failed_steps: anchors,
    needs_human_steps: anchors,
    claimed_steps: anchors,
    blocked_steps: anchors,
    expired_claims: anchors,
    failures: z.record(z.number().int().positive()),
  }),
  'state reset': okEnvelope('state reset', {
    reset: z.literal(true),
    step_anchor: anchor,
    previous_status: stepStatus,
    previous_owner: z.string().nullable(),
    // What the reset dropped of the review gate (docs/state.md §3.11), null when nothing.
    dropped_review: z
      .object({
        review_commit: commitHash.nullable(),
        review_ref: z.string().nullable(),
        human_decision: z.literal('approved').nullable(),
        human_notes: z.string().nullable(),
      })
      .strict()
      .nullable(),
  }),
  'state decide': okEnvelope('state decide', {
    plan_path: repoPath,
    step_anchor: anchor,
    decision: z.enum(['approve', 'revise', 'reject']),
    step_status: z.enum(['pending', 'failed']),
    review_commit: commitHash.nullable(),
  }),
  'state reconcile': okEnvelope('state reconcile', {
    reconciled: z.array(
      z.object({ step_anchor: anchor, commit_hash: commitHash, previous_status: stepStatus }).strict(),
    ),
    skipped_mismatches: z.array(z.object({ step_anchor: anchor, db_hash: z.string(), git_hash: commitHash }).strict()),
    skipped_steps: z.array(z.object({ step_anchor: anchor, status: stepStatus, reason: z.string() }).strict()),
    unknown_steps: z.array(z.string()),
    scanned_commits: count,
  }),
  'state prune': okEnvelope('state prune', { pruned: z.array(repoPath), dry_run: z.boolean() }),
  'state log': okEnvelope('state log', {
    events: z.array(event),
    next_after_id: z.number().int().nonnegative().nullable(),
    /** Matching events the limit left out: older ones, or newer ones with --after-id (docs/state.md §4). */
    omitted: count,
  }),
  'state list': okEnvelope('state list', {
    plans: z.array(
      z
        .object({
          plan_path: repoPath,
          status: planStatus,
          steps_completed: count,
          steps_total: count,
          /** Completed and deferred items; `items_deferred` of them are deferred (docs/state.md §4). */
          items_completed: count,
          items_total: count,
          items_deferred: count,
          claimed_steps: anchors,
        })
        .strict(),
    ),
  }),
  'state export': okEnvelope('state export', {
    plan_path: repoPath,
    /** The file written (--output), or null: the document is then `document`. */
    output: absPath.nullable(),
    counts: exportCounts,
    document: stateExportDocument.optional(),
  }),
  'state import': okEnvelope('state import', {
    plan_path: repoPath,
    replaced: z.boolean(),
    imported: exportCounts,
    source: z.object({ backend: z.enum(['sqlite', 'postgres']), location: z.string() }).strict(),
    backend,
  }),
  'state graph': okEnvelope('state graph', {
    format: z.enum(['mermaid', 'dot']),
    text: z.string(),
    nodes: z.array(z.object({ anchor, status: stepStatus }).strict()),
    edges: z.array(z.tuple([anchor, anchor])),
  }),
};
