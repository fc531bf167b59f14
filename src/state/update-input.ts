/**
 * Validation of `state update` input that needs no database (docs/state.md §4 "update rules"): statuses,
 * reasons, duplicates, and the `--batch` JSON. Hand-written (no zod on the hot path).
 */
import { TugError } from '../contract/errors.js';
import { ITEM_STATUSES, isItemStatus, kindFromName, type ItemKind, type ItemStatus } from './status.js';

export interface ItemChange {
  kind: ItemKind;
  ordinal: number;
  status: ItemStatus;
  reason?: string | undefined;
}

export interface BulkChange {
  /** `all` = every kind. */
  kind: ItemKind | 'all';
  status: ItemStatus;
}

/** An item status given by a flag; anything else is InvalidStatus. */
export function checkStatus(value: string): ItemStatus {
  if (isItemStatus(value)) return value;
  throw new TugError('InvalidStatus', { value, allowed: [...ITEM_STATUSES] });
}

/** An item status inside a `--batch` document, where a wrong one is the document's fault: InvalidBatch. */
function checkBatchStatus(value: string): ItemStatus {
  if (isItemStatus(value)) return value;
  throw new TugError('InvalidBatch', {
    reason: `invalid status ${JSON.stringify(value)}; expected one of ${ITEM_STATUSES.join(', ')}`,
  });
}

/** Parse the `--batch` document: a JSON array of `{kind, ordinal, status, reason?}`. */
export function parseBatch(text: string, source = 'stdin'): ItemChange[] {
  if (text.trim() === '') throw new TugError('InvalidBatch', { reason: `${source} is empty; expected a JSON array` });
  if (text.includes('\0')) throw new TugError('InvalidBatch', { reason: 'the input contains a NUL byte' });
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new TugError('InvalidBatch', { reason: `not JSON: ${(e as Error).message}` });
  }
  if (!Array.isArray(doc)) throw new TugError('InvalidBatch', { reason: 'expected a JSON array of entries' });
  return doc.map((entry, i) => {
    const bad = (why: string) => new TugError('InvalidBatch', { reason: `entry ${i}: ${why}`, index: i });
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) throw bad('not an object');
    const e = entry as Record<string, unknown>;
    for (const k of Object.keys(e))
      if (!['kind', 'ordinal', 'status', 'reason'].includes(k)) throw bad(`unknown field ${JSON.stringify(k)}`);
    const kind = typeof e.kind === 'string' ? kindFromName(e.kind) : null;
    if (!kind) throw bad(`kind must be task, test or checkpoint, got ${JSON.stringify(e.kind)}`);
    if (typeof e.ordinal !== 'number' || !Number.isInteger(e.ordinal) || e.ordinal < 0)
      throw bad(`ordinal must be a non-negative integer, got ${JSON.stringify(e.ordinal)}`);
    if (typeof e.status !== 'string') throw bad('status must be a string');
    const status = checkBatchStatus(e.status);
    if (e.reason !== undefined && e.reason !== null && typeof e.reason !== 'string')
      throw bad('reason must be a string');
    const change: ItemChange = { kind, ordinal: e.ordinal, status };
    if (typeof e.reason === 'string') change.reason = e.reason;
    return change;
  });
}

/** Duplicates, deferred without reason, NUL bytes; errors are InvalidBatch for batch input. */
export function validateChanges(
  items: ItemChange[],
  bulk: BulkChange[],
  reason: string | undefined,
  batch: boolean,
): void {
  const err = (why: string, code: 'InvalidArgument' | 'InvalidBatch' = batch ? 'InvalidBatch' : 'InvalidArgument') =>
    new TugError(code, { reason: why });
  if (reason !== undefined && reason.includes('\0')) throw err('--reason contains a NUL byte', 'InvalidArgument');
  const seen = new Set<string>();
  for (const c of items) {
    const key = `${c.kind}:${c.ordinal}`;
    if (seen.has(key))
      throw new TugError('InvalidBatch', {
        reason: `${c.kind} ${c.ordinal} is named more than once`,
        // Per-item flags, not --batch: the message must not blame stdin.
        input: batch ? 'batch' : 'flags',
      });
    seen.add(key);
    const r = c.reason ?? reason;
    if (r !== undefined && r.includes('\0')) throw err(`the reason of ${c.kind} ${c.ordinal} contains a NUL byte`);
    if (c.status === 'deferred' && (r === undefined || r.trim() === ''))
      throw err(`deferring ${c.kind} ${c.ordinal} needs a non-empty reason`);
  }
  const bulkKinds = new Set<string>();
  for (const b of bulk) {
    if (bulkKinds.has(b.kind))
      throw err(`--all${b.kind === 'all' ? '' : `-${b.kind}s`} is given more than once`, 'InvalidArgument');
    bulkKinds.add(b.kind);
    if (b.status === 'deferred' && (reason === undefined || reason.trim() === ''))
      throw err('deferring items needs --reason', 'InvalidArgument');
  }
}
