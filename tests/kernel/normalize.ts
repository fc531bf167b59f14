/**
 * Golden normalization (docs/kernel.md §13.1 step 4): drop `duration_ms`, `*_at` and `since`; absolute
 * workspace paths → <WS>; check output → <output>; tool versions → <version>.
 */
export function normalizeEnvelope(value: unknown, ws: string[]): unknown {
  const walk = (v: unknown, key: string | null): unknown => {
    if (typeof v === 'string') {
      let s = v;
      for (const w of ws) s = s.split(w).join('<WS>');
      if (key === 'output' && v !== null) return '<output>';
      if (
        key === 'version' ||
        key === 'kernel_version' ||
        key === 'python_version' ||
        key === 'pyright_version' ||
        key === 'cargo_version'
      )
        return '<version>';
      return s;
    }
    if (typeof v === 'number' && (key === 'lock_holder_pid' || key === 'holder_pid' || key === 'pid')) return '<pid>';
    if (Array.isArray(v)) return v.map((x) => walk(x, null));
    if (v && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) {
        if (k === 'duration_ms' || k.endsWith('_at') || k === 'since' || k === 'last_accessed') continue;
        if (k === 'session_bytes') {
          out[k] = '<bytes>';
          continue;
        }
        out[k] = walk(x, k);
      }
      return out;
    }
    return v;
  };
  return walk(value, null);
}

export function normalizedText(stdout: string, ws: string[]): string {
  return JSON.stringify(normalizeEnvelope(JSON.parse(stdout), ws), null, 2) + '\n';
}
