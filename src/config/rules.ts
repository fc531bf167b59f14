/**
 * A zod-free check of config values for the hot path (07-quality.md §2: zod costs ~15 ms of a CLI start).
 * It only ever accepts: when a value fails here, the caller validates with the zod schema
 * (src/config/schema.ts, the source of truth) for the precise error. A property test checks that these
 * rules accept exactly what the schema accepts.
 */
import type { ConfigShape } from './defaults.js';

export type Rule =
  | { t: 'int'; min: number; max?: number }
  | { t: 'bool' }
  | { t: 'str'; min?: number; enum?: readonly string[] }
  | { t: 'strs' };

const pos: Rule = { t: 'int', min: 1 };
const str: Rule = { t: 'str' };
const strs: Rule = { t: 'strs' };

export const CONFIG_RULES: { [T in keyof ConfigShape]: { [K in keyof ConfigShape[T]]: Rule } } = {
  state: { lease_seconds: pos, max_attempts: pos },
  run: {
    workers: pos,
    implementer: str,
    heartbeat_seconds: pos,
    step_timeout_seconds: pos,
    run_checkpoints: { t: 'bool' },
    base_branch: { t: 'str', min: 1 },
    setup_command: strs,
    no_verify: { t: 'bool' },
  },
  validate: { level: { t: 'str', enum: ['lenient', 'normal', 'strict'] } },
  kernel: {
    verify: { t: 'str', enum: ['none', 'syntax', 'tests', 'typecheck'] },
    test_command: strs,
    test_timeout: { t: 'int', min: 1, max: 3600 },
    typecheck_command: strs,
    typecheck_timeout: pos,
    safety: { t: 'str', enum: ['strict', 'safe', 'aggressive'] },
    include: strs,
    exclude: strs,
    python: str,
    rust_analyzer: str,
    lock_timeout: { t: 'int', min: 0 },
    max_files_affected: pos,
    max_edits: pos,
    max_concurrent_sessions: pos,
  },
};

export function satisfies(rule: Rule, v: unknown): boolean {
  switch (rule.t) {
    case 'int':
      return typeof v === 'number' && Number.isInteger(v) && v >= rule.min && (rule.max === undefined || v <= rule.max);
    case 'bool':
      return typeof v === 'boolean';
    case 'str':
      return typeof v === 'string' && v.length >= (rule.min ?? 0) && (rule.enum === undefined || rule.enum.includes(v));
    case 'strs':
      return Array.isArray(v) && v.every((x) => typeof x === 'string');
  }
}

/** Defaults merged with `known` when every value passes its rule, else null (validate with zod then). */
export function fastMerge(known: Record<string, Record<string, unknown>>, defaults: ConfigShape): ConfigShape | null {
  const out = structuredClone(defaults) as unknown as Record<string, Record<string, unknown>>;
  for (const [table, values] of Object.entries(known)) {
    const rules = (CONFIG_RULES as unknown as Record<string, Record<string, Rule>>)[table];
    if (!rules) return null;
    for (const [key, v] of Object.entries(values)) {
      const rule = rules[key];
      if (!rule || !satisfies(rule, v)) return null;
      out[table]![key] = v;
    }
  }
  return out as unknown as ConfigShape;
}
