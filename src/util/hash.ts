/**
 * SHA-256 and canonical JSON for the layers below the kernel (the plan's `plan_hash` and structure hash).
 * The kernel keeps its own copy in src/kernel/canonical-json.ts (it imports only its own modules); the
 * rule is the same, 05-kernel.md §9.6: object keys sorted recursively (UTF-16 code unit order, as
 * `Array.prototype.sort`), no whitespace, arrays in order, `undefined` members dropped, `undefined` array
 * slots and non-finite numbers written as `null`. tests/plan/canonical-json.test.ts checks that both give
 * the same text.
 */
import { createHash } from 'node:crypto';

/** Lower-case hex SHA-256 of the bytes (a string is UTF-8 encoded first). */
export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Canonical JSON of plain data (strings, numbers, booleans, null, arrays, objects). Cycles throw. */
export function canonicalJson(value: unknown): string {
  return write(value, new Set());
}

/** Lower-case hex SHA-256 of the canonical JSON of `value`. */
export function sha256Canonical(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}

function write(value: unknown, seen: Set<object>): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? JSON.stringify(value) : 'null';
    case 'boolean':
      return String(value);
    case 'bigint':
      return value.toString();
    case 'object':
      if (value !== null) break;
      return 'null';
    default:
      return 'null';
  }
  if (seen.has(value)) throw new TypeError('canonicalJson: cyclic value');
  seen.add(value);
  try {
    if (Array.isArray(value)) return '[' + value.map((v) => write(v, seen)).join(',') + ']';
    const toJSON = (value as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') return write((toJSON as () => unknown).call(value), seen);
    const parts: string[] = [];
    const record = value as Record<string, unknown>;
    for (const key of Object.keys(record).sort()) {
      const v = record[key];
      if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
      parts.push(JSON.stringify(key) + ':' + write(v, seen));
    }
    return '{' + parts.join(',') + '}';
  } finally {
    seen.delete(value);
  }
}
