/**
 * Content-derived identifiers (05-kernel.md §9.6): canonical JSON, op_hash, symbol ids, undo tokens.
 */
import { canonicalJson } from '../util/canonical-json.js';
import { sha256Hex } from '../util/hash.js';

export { canonicalJson, sha256Hex };

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
