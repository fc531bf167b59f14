/**
 * Content-derived identifiers (05-kernel.md §9.6): canonical JSON, op_hash, symbol ids, undo tokens.
 */
import { createHash } from 'node:crypto';

export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Keys sorted recursively, no whitespace. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return '[' + value.map((v) => canonicalJson(v === undefined ? null : v)).join(',') + ']';
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort();
  return '{' + keys.map((k) => JSON.stringify(k) + ':' + canonicalJson(obj[k])).join(',') + '}';
}

export type OpTarget = { at: { file: string; line: number; col: number } } | { symbol: string } | { file: string };

export function opHash(op: string, target: OpTarget, args: Record<string, unknown>): string {
  return sha256Hex(canonicalJson({ op, target, args })).slice(0, 12);
}

export function symbolId(snapshotId: string, file: string, byteStart: number, kind: string): string {
  return 'sym_' + sha256Hex(`${snapshotId}\n${file}\n${byteStart}\n${kind}`).slice(0, 12);
}

export function undoToken(snapshotId: string, opHashValue: string): string {
  return `undo_${snapshotId}_${opHashValue}`;
}

/** Compare strings by their UTF-8 bytes (path ordering of §9.3 and §10.1). */
export function compareUtf8(a: string, b: string): number {
  if (a === b) return 0;
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}
