/**
 * Content-derived identifiers (docs/kernel.md §9.6): canonical JSON, SHA-256, op_hash, symbol ids, undo tokens.
 * A host's own hashes (of plans, of op texts) use these too, through ./light.ts, so there is one
 * definition of canonical JSON (dependencies point into the kernel, never out of it).
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from './canonical-json.js';

export { canonicalJson };

/** Lower-case hex SHA-256 of the bytes (a string is UTF-8 encoded first). */
export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Lower-case hex SHA-256 of the canonical JSON of `value`. */
export function sha256Canonical(value: unknown): string {
  return sha256Hex(canonicalJson(value));
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

/** Compare strings by their UTF-8 bytes (path ordering of §9.3 and §10.1) without allocating. */
export function compareUtf8(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    // UTF-16 order equals code point (= UTF-8 byte) order except that surrogates sort above U+E000–U+FFFF.
    if (x >= 0xd800 && x <= 0xdfff) x += 0x2000;
    else if (x >= 0xe000) x -= 0x800;
    if (y >= 0xd800 && y <= 0xdfff) y += 0x2000;
    else if (y >= 0xe000) y -= 0x800;
    return x - y;
  }
  return a.length - b.length;
}
