/**
 * Key-ordered kernel envelopes (docs/kernel.md §4.1, §4.6) and warning ordering (§5.3).
 */
import { KernelError, type KernelLocation } from './errors.js';
import { compareUtf8 } from './ids.js';

export const SCHEMA_VERSION = '1';
const MAX_WARNINGS = 200;

export interface KernelWarning {
  code: string;
  message: string;
  location?: KernelLocation;
  pattern?: string;
  suggestion?: string;
}

/** Sort (located first by file, line, col, code; the rest by code, message), dedupe, cap at 200. */
export function sortWarnings(ws: KernelWarning[]): KernelWarning[] {
  const seen = new Set<string>();
  const uniq: KernelWarning[] = [];
  for (const w of ws) {
    const key = JSON.stringify(w);
    if (seen.has(key)) continue;
    seen.add(key);
    uniq.push(w);
  }
  uniq.sort((a, b) => {
    if (a.location && !b.location) return -1;
    if (!a.location && b.location) return 1;
    if (a.location && b.location) {
      const f = compareUtf8(a.location.file, b.location.file);
      if (f) return f;
      if (a.location.line !== b.location.line) return a.location.line - b.location.line;
      if (a.location.col !== b.location.col) return a.location.col - b.location.col;
      return a.code < b.code ? -1 : a.code > b.code ? 1 : 0;
    }
    if (a.code !== b.code) return a.code < b.code ? -1 : 1;
    return a.message < b.message ? -1 : a.message > b.message ? 1 : 0;
  });
  if (uniq.length <= MAX_WARNINGS) return uniq;
  const kept = uniq.slice(0, MAX_WARNINGS);
  kept.push({ code: 'WarningsTruncated', message: `${uniq.length - MAX_WARNINGS} more warnings were dropped` });
  return kept;
}

/** `{status, schema_version, snapshot_id?, ...fields, warnings}` — fields keep their insertion order. */
export function okEnvelope(snapshotId: string | undefined, fields: Record<string, unknown>): Record<string, unknown> {
  const env: Record<string, unknown> = { status: 'ok', schema_version: SCHEMA_VERSION };
  if (snapshotId) env.snapshot_id = snapshotId;
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) env[k] = v;
  if (!('warnings' in env)) env.warnings = [];
  return env;
}

export function errorEnvelope(err: KernelError, warnings: KernelWarning[] = []): Record<string, unknown> {
  const env: Record<string, unknown> = { status: 'error', schema_version: SCHEMA_VERSION };
  if (err.snapshotId) env.snapshot_id = err.snapshotId;
  const error: Record<string, unknown> = { code: err.code, message: err.message, details: err.details ?? {} };
  if (err.location) error.location = err.location;
  env.error = error;
  for (const [k, v] of Object.entries(err.extra ?? {})) if (v !== undefined && k !== 'status') env[k] = v;
  if (!('warnings' in env)) env.warnings = sortWarnings(warnings);
  return env;
}
