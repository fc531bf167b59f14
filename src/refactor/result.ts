/**
 * The shapes `refactor run-step` records and prints (docs/kernel.md §7.2–§7.3): the compact `result_json`
 * (at most 8 KiB, error details cut to 4 KiB), the `refactor_report` artifact line, the per-row `ops[]`
 * report and the key-ordered kernel envelope. Pure.
 */
import type { Summary, Verification, VerifyMode } from '../kernel/light.js';
import type { RefactorView } from '../state/refactors.js';
import type { RefactorStatus } from '../state/status.js';

export const RESULT_MAX_BYTES = 8 * 1024;
export const DETAILS_MAX_BYTES = 4 * 1024;

export interface ErrorObject {
  code: string;
  message: string;
  details: Record<string, unknown>;
  location?: { file: string; line: number; col: number; byte_start?: number; byte_end?: number };
  /** The catalogue's hint of a tugcode error (docs/output.md §2); kernel errors carry none. */
  hint?: string;
}

export interface OpReport {
  ordinal: number;
  op_text: string;
  op_hash: string | null;
  status: RefactorStatus;
  exit_code: number | null;
  attempts: number;
  snapshot_before: string | null;
  snapshot_after: string | null;
  summary: Summary | null;
  verification: { mode: VerifyMode; status: string } | null;
  warnings: string[];
  error: ErrorObject | null;
}

export interface RunStepSummary {
  total: number;
  executed: number;
  applied: number;
  failed: number;
  skipped: number;
  open: number;
}

export interface RunStepResult {
  status: 'ok' | 'error';
  /** The last snapshot id the run computed (absent when it computed none). */
  snapshot_id: string | null;
  /** The failing row's error, or the ownership error that stopped the run. */
  error: ErrorObject | null;
  plan_path: string;
  step_anchor: string;
  worktree: string;
  ops: OpReport[];
  summary: RunStepSummary;
  warnings: { code: string; message: string }[];
  /** 0, or the exit code of the failing row (or of the error that stopped the run). */
  exit_code: number;
}

const bytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v) ?? '', 'utf8');

/** Details cut to `max` bytes of JSON: whole keys are kept in order while they fit; long strings are cut. */
function cutDetails(details: Record<string, unknown>, max = DETAILS_MAX_BYTES): Record<string, unknown> {
  if (bytes(details) <= max) return details;
  const out: Record<string, unknown> = { truncated: true };
  for (const [k, v] of Object.entries(details)) {
    out[k] = v;
    if (bytes(out) <= max) continue;
    if (typeof v === 'string') {
      const room = max - bytes({ ...out, [k]: '' }) - 16;
      if (room > 0) {
        out[k] = v.slice(0, room) + '…';
        if (bytes(out) <= max) continue;
      }
    }
    delete out[k];
  }
  return out;
}

export interface ResultParts {
  op_hash: string | null;
  files_written: string[];
  summary: Summary | null;
  verification: Verification | null;
  warnings: string[];
  duration_ms: number;
  attempts: number;
  error?: ErrorObject | null;
}

/** The compact `result_json` of docs/kernel.md §7.2. */
export function compactResult(p: ResultParts): Record<string, unknown> {
  const r: Record<string, unknown> = {
    op_hash: p.op_hash,
    files_written: p.files_written,
    files_changed: p.summary?.files_changed ?? 0,
    edits_count: p.summary?.edits_count ?? 0,
    verification: p.verification
      ? {
          mode: p.verification.mode,
          status: p.verification.status,
          checks: p.verification.checks.map((c) => ({ name: c.name, status: c.status })),
        }
      : null,
    warnings: [...new Set(p.warnings)].sort(),
    duration_ms: Math.round(p.duration_ms),
    attempts: p.attempts,
  };
  if (p.error) r.error = { code: p.error.code, message: p.error.message, details: cutDetails(p.error.details) };
  // Hard cap: long file lists go first, then the error details.
  if (bytes(r) > RESULT_MAX_BYTES) {
    const files = p.files_written;
    let keep = files.length;
    while (keep > 0 && bytes({ ...r, files_written: files.slice(0, keep) }) > RESULT_MAX_BYTES)
      keep = Math.floor(keep / 2);
    r.files_written = files.slice(0, keep);
  }
  if (bytes(r) > RESULT_MAX_BYTES && r.error) {
    const e = r.error as ErrorObject;
    r.error = { code: e.code, message: e.message.slice(0, 500), details: cutDetails(e.details, 1024) };
  }
  return r;
}

/** `<op> files=N edits=M verify=<mode>:<status> <before>..<after> [codes]` (+ the error code of a failure). */
export function reportLine(o: {
  operation: string;
  summary: Summary | null;
  mode: VerifyMode;
  verificationStatus: string | null;
  snapshot_before: string | null;
  snapshot_after: string | null;
  warnings: string[];
  error?: ErrorObject | null;
}): string {
  const codes = [...new Set(o.warnings)].sort();
  let line =
    `${o.operation} files=${o.summary?.files_changed ?? 0} edits=${o.summary?.edits_count ?? 0} verify=${o.mode}:${o.verificationStatus ?? 'not_run'} ` +
    `${o.snapshot_before ?? '-'}..${o.snapshot_after ?? '-'}`;
  if (codes.length) line += ` [${codes.join(', ')}]`;
  if (o.error) line += ` error=${o.error.code}`;
  return line;
}

/** A row not executed by this run, as stored. */
export function reportOfRow(r: RefactorView, fallbackHash: string | null): OpReport {
  const res = r.result ?? {};
  const v = res.verification as { mode?: VerifyMode; status?: string } | null | undefined;
  const err = res.error as ErrorObject | undefined;
  return {
    ordinal: r.ordinal,
    op_text: r.op_text,
    op_hash: typeof res.op_hash === 'string' ? res.op_hash : fallbackHash,
    status: r.status,
    exit_code: r.exit_code,
    attempts: typeof res.attempts === 'number' ? res.attempts : 0,
    snapshot_before: r.snapshot_before,
    snapshot_after: r.snapshot_after,
    summary: null,
    verification: r.status !== 'open' && v && v.mode && v.status ? { mode: v.mode, status: v.status } : null,
    warnings: r.status !== 'open' && Array.isArray(res.warnings) ? (res.warnings as string[]) : [],
    error: r.status === 'failed' && err ? err : null,
  };
}

export function summarizeRows(rows: { status: RefactorStatus }[], executed: number): RunStepSummary {
  const s: RunStepSummary = { total: rows.length, executed, applied: 0, failed: 0, skipped: 0, open: 0 };
  for (const r of rows) s[r.status]++;
  return s;
}

/** The kernel envelope (docs/kernel.md §4.1, §7.3): status, schema_version, snapshot_id?, error?, fields, warnings. */
export function runStepEnvelope(r: RunStepResult): Record<string, unknown> {
  const env: Record<string, unknown> = { status: r.status, schema_version: '1' };
  if (r.snapshot_id) env.snapshot_id = r.snapshot_id;
  if (r.error) env.error = r.error;
  env.plan_path = r.plan_path;
  env.step_anchor = r.step_anchor;
  env.worktree = r.worktree;
  env.ops = r.ops;
  env.summary = r.summary;
  env.warnings = r.warnings;
  return env;
}
