/**
 * Canonical JSON (docs/kernel.md §9.6): object keys sorted recursively (UTF-16 code unit order, as
 * `Array.prototype.sort`), no whitespace, UTF-8 when hashed. Arrays keep their order. Like
 * `JSON.stringify`, `undefined` object members are dropped, `undefined` array slots and non-finite numbers
 * become `null`. Used for every hash of structured data (structure hash, op hash), so two equal values
 * always give the same text.
 */
export function canonicalJson(value: unknown): string {
  return write(value, new Set());
}

function write(value: unknown, seen: Set<object>): string {
  if (value === null || value === undefined) return 'null';
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? JSON.stringify(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'bigint':
      return value.toString();
    case 'object':
      break;
    default:
      return 'null';
  }
  const obj = value as object;
  if (seen.has(obj)) throw new TypeError('canonicalJson: cyclic value');
  seen.add(obj);
  try {
    if (Array.isArray(obj)) return '[' + obj.map((v) => write(v, seen)).join(',') + ']';
    const toJSON = (obj as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') return write((toJSON as () => unknown).call(obj), seen);
    const record = obj as Record<string, unknown>;
    const parts: string[] = [];
    for (const key of Object.keys(record).sort()) {
      const v = record[key];
      if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
      parts.push(JSON.stringify(key) + ':' + write(v, seen));
    }
    return '{' + parts.join(',') + '}';
  } finally {
    seen.delete(obj);
  }
}
