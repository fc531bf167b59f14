/** SHA-256 helpers (node:crypto). Strings are hashed as their UTF-8 bytes. */
import { createHash } from 'node:crypto';
import { canonicalJson } from './canonical-json.js';

/** Lower-case hex SHA-256 of the bytes (a string is UTF-8 encoded first). */
export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Lower-case hex SHA-256 of the canonical JSON of `value` (05-kernel.md §9.6). */
export function sha256Canonical(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}
