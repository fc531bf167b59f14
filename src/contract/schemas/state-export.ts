/**
 * The `state export` document (docs/state.md §8): one plan's rows and events, versioned, so `state import`
 * can load it into either backend. The single source of truth of its fields: `state import` validates
 * every document with this schema (cross-row rules are checked by src/state/export-check.ts), and the
 * `state export --json` envelope carries it as `document`.
 *
 * Owners (`claimed_by`, `previous_owner`, event actors) are written as the exporting store names them:
 * canonical paths from SQLite, `<host>:<path>` from PostgreSQL (an import into PostgreSQL qualifies plain
 * paths with the importing machine's host).
 */
import { z } from 'zod';
import { ITEM_KINDS, ITEM_STATUSES, PLAN_STATUSES, REFACTOR_STATUSES, STEP_STATUSES } from '../status.js';
import { anchor, repoPath, sha256, timestamp } from './common.js';
import { USAGE_ROLES } from '../usage.js';

export const EXPORT_FORMAT = 'tugcode-state-export';
export const EXPORT_VERSION = 1;

const count = z.number().int().nonnegative();
const text = z.string();
const opt = <T extends z.ZodTypeAny>(t: T) => t.nullable();

const plan = z
  .object({
    plan_hash: sha256,
    /** The plan file's bytes, base64. */
    plan_source: z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, 'base64'),
    structure_hash: sha256,
    phase_title: opt(text),
    status: z.enum(PLAN_STATUSES),
    implicit_sequential: z.boolean(),
    steps_total: count,
    steps_completed: count,
    created_at: timestamp,
    updated_at: timestamp,
    /** Where the plan integrates (docs/state.md §8.4); absent from documents of older stores. */
    integration_kind: z.enum(['local', 'remote']).nullable().optional(),
    integration_where: opt(text).optional(),
  })
  .strict();

const step = z
  .object({
    anchor,
    parent_anchor: opt(anchor),
    top_anchor: anchor,
    step_id: text,
    step_index: count,
    depth: count,
    title: text,
    status: z.enum(STEP_STATUSES),
    claimed_by: opt(text),
    claimed_at: opt(timestamp),
    lease_expires_at: opt(timestamp),
    heartbeat_at: opt(timestamp),
    started_at: opt(timestamp),
    completed_at: opt(timestamp),
    commit_hash: opt(text),
    complete_reason: opt(text),
    attempt: count,
    failures: count,
    previous_owner: opt(text),
    fail_reason: opt(text),
    completed_via: opt(z.enum(['complete', 'force', 'reconcile'])),
    commit_message: opt(text),
    unmet_deps: count,
    // Schema 2 (docs/state.md §3.11–§3.12); absent in exports made before it.
    review_commit: opt(text).optional(),
    human_decision: opt(z.literal('approved')).optional(),
    human_notes: opt(text).optional(),
    touches: opt(text).optional(),
  })
  .strict();

const edge = z.object({ step_anchor: anchor, depends_on: anchor }).strict();

const item = z
  .object({
    step_anchor: anchor,
    kind: z.enum(ITEM_KINDS),
    ordinal: count,
    depth: count,
    text,
    status: z.enum(ITEM_STATUSES),
    reason: opt(text),
    updated_at: opt(timestamp),
  })
  .strict();

const artifact = z
  .object({
    step_anchor: anchor,
    kind: text,
    summary: text,
    content: opt(text),
    recorded_at: timestamp,
  })
  .strict();

const refactor = z
  .object({
    step_anchor: anchor,
    ordinal: count,
    op_text: text,
    status: z.enum(REFACTOR_STATUSES),
    snapshot_before: opt(text),
    snapshot_after: opt(text),
    exit_code: opt(z.number().int()),
    result_json: opt(text),
    updated_at: timestamp,
  })
  .strict();

/** One run's usage (docs/state.md §2); a document from before the ledger has none. */
const usage = z
  .object({
    step_anchor: anchor,
    attempt: count,
    role: z.enum(USAGE_ROLES),
    input_tokens: opt(count),
    output_tokens: opt(count),
    cache_read_tokens: opt(count),
    cache_write_tokens: opt(count),
    cost_usd: opt(z.number().nonnegative()),
    recorded_at: timestamp,
  })
  .strict();

const event = z
  .object({
    /** The id in the exporting store (import assigns new ids, in this order). */
    id: z.number().int().positive(),
    at: timestamp,
    step_anchor: opt(anchor),
    command: text,
    actor: text,
    attempt: opt(z.number().int()),
    details: z.record(z.unknown()),
  })
  .strict();

export const stateExportDocument = z
  .object({
    format: z.literal(EXPORT_FORMAT),
    version: z.literal(EXPORT_VERSION),
    /** The state schema version of the exporting store. */
    schema_version: z.number().int().positive(),
    plan_path: repoPath,
    exported_at: timestamp,
    source: z.object({ backend: z.enum(['sqlite', 'postgres']), location: text }).strict(),
    plan,
    steps: z.array(step),
    step_deps: z.array(edge),
    step_lifted_deps: z.array(edge),
    checklist_items: z.array(item),
    step_artifacts: z.array(artifact),
    step_refactors: z.array(refactor),
    step_usage: z.array(usage).default([]),
    events: z.array(event),
  })
  .strict();

export type StateExportDocument = z.infer<typeof stateExportDocument>;
/** A document as written before the ledger (no `step_usage`): what `state import` still accepts. */
export type StateExportInput = z.input<typeof stateExportDocument>;
export type ExportedStep = z.infer<typeof step>;
