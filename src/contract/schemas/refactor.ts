/**
 * Output of `tugcode refactor run-step` and `tugcode refactor skip` (docs/kernel.md §4.1, §7.3–§7.4). These
 * use the kernel envelope (`status`, `schema_version`, `snapshot_id?`, fields, `warnings`; no `command`),
 * so they are kept apart from OUTPUT_SCHEMAS, whose entries are tugcode envelopes.
 */
import { z } from 'zod';
import { anchor, ownerName, repoPath } from './common.js';
import { REFACTOR_STATUSES } from '../status.js';

const count = z.number().int().nonnegative();
const snapshotId = z.string().regex(/^snap_[0-9a-f]{12}$/);
const opHash = z.string().regex(/^[0-9a-f]{12}$/);
const verifyMode = z.enum(['none', 'syntax', 'tests', 'typecheck']);
const rowStatus = z.enum(REFACTOR_STATUSES);

const location = z
  .object({
    file: z.string(),
    line: z.number().int().positive(),
    col: z.number().int().positive(),
    byte_start: count.optional(),
    byte_end: count.optional(),
  })
  .strict();

export const kernelErrorObject = z
  .object({
    code: z.string(),
    message: z.string(),
    details: z.record(z.unknown()),
    location: location.optional(),
    // A tugcode error's catalogue hint (docs/output.md §2); kernel errors have none.
    hint: z.string().optional(),
  })
  .strict();

const kernelWarning = z
  .object({
    code: z.string(),
    message: z.string(),
    location: location.optional(),
    pattern: z.string().optional(),
    suggestion: z.string().optional(),
  })
  .strict();

const summary = z
  .object({ files_changed: count, edits_count: count, bytes_added: count, bytes_removed: count })
  .strict();

export const runStepOp = z
  .object({
    ordinal: count,
    op_text: z.string(),
    op_hash: opHash.nullable(),
    status: rowStatus,
    exit_code: z.number().int().nullable(),
    attempts: count,
    snapshot_before: snapshotId.nullable(),
    snapshot_after: snapshotId.nullable(),
    summary: summary.nullable(),
    verification: z.object({ mode: verifyMode, status: z.string() }).strict().nullable(),
    warnings: z.array(z.string()),
    error: kernelErrorObject.nullable(),
  })
  .strict();

const runStepFields = {
  schema_version: z.literal('1'),
  snapshot_id: snapshotId.optional(),
  plan_path: repoPath,
  step_anchor: anchor,
  worktree: ownerName,
  ops: z.array(runStepOp),
  summary: z
    .object({ total: count, executed: count, applied: count, failed: count, skipped: count, open: count })
    .strict(),
  warnings: z.array(kernelWarning),
};

/** Either outcome of rows that ran: ok, or error with the failing row's error and the same fields. */
export const runStepEnvelope = z.union([
  z.object({ status: z.literal('ok'), ...runStepFields }).strict(),
  z.object({ status: z.literal('error'), error: kernelErrorObject, ...runStepFields }).strict(),
]);

/** Setup failures (plan, step, ownership, slot, kernel lock): the plain kernel error envelope. */
export const refactorErrorEnvelope = z
  .object({
    status: z.literal('error'),
    schema_version: z.literal('1'),
    snapshot_id: snapshotId.optional(),
    error: kernelErrorObject,
    warnings: z.array(kernelWarning),
  })
  .strict();

export const skipEnvelope = z
  .object({
    status: z.literal('ok'),
    schema_version: z.literal('1'),
    plan_path: repoPath,
    step_anchor: anchor,
    worktree: ownerName,
    ordinal: count,
    op_text: z.string(),
    previous_status: rowStatus,
    skipped_reason: z.string(),
    already_skipped: z.boolean(),
    warnings: z.array(kernelWarning),
  })
  .strict();
