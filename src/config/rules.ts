/**
 * A zod-free check of config values for the hot path (docs/quality.md §2: zod costs ~15 ms of a CLI start).
 * It only ever accepts: when a value fails here, the caller validates with the zod schema
 * (src/config/schema.ts, the source of truth) for the precise error. A property test checks that these
 * rules accept exactly what the schema accepts.
 */
import { CONFIG_MAX, type ConfigShape } from './defaults.js';
import { USAGE_MAX_PRICE } from '../contract/usage.js';
import { KERNEL_RULES, satisfies as kernelSatisfies, type Rule as KernelRule } from '../kernel/light.js';

/**
 * The kernel's rules plus two of the `[run]` table's own: a non-negative decimal (`budget_usd`) and the
 * `[run.prices]` sub-table (USD per million tokens of each kind).
 */
export type Rule = KernelRule | { t: 'num'; min: number } | { t: 'prices' };

export const PRICE_KEYS = ['input', 'output', 'cache_read', 'cache_write'] as const;

export function satisfies(rule: Rule, v: unknown): boolean {
  switch (rule.t) {
    case 'num':
      return typeof v === 'number' && Number.isFinite(v) && v >= rule.min;
    case 'prices':
      return (
        typeof v === 'object' &&
        v !== null &&
        !Array.isArray(v) &&
        Object.entries(v).every(
          ([k, x]) =>
            (PRICE_KEYS as readonly string[]).includes(k) &&
            typeof x === 'number' &&
            Number.isFinite(x) &&
            x >= 0 &&
            x <= USAGE_MAX_PRICE,
        )
      );
    default:
      return kernelSatisfies(rule, v);
  }
}

const upTo = (max: number): Rule => ({ t: 'int', min: 1, max });
const S = CONFIG_MAX.state;
const R = CONFIG_MAX.run;
const str: Rule = { t: 'str' };
const strs: Rule = { t: 'strs' };

export const CONFIG_RULES: { [T in keyof ConfigShape]: { [K in keyof ConfigShape[T]]: Rule } } = {
  state: {
    lease_seconds: upTo(S.lease_seconds),
    max_attempts: upTo(S.max_attempts),
    url: str,
    project: str,
    host: str,
  },
  run: {
    workers: upTo(R.workers),
    implementer: { t: 'argv' },
    agent: { t: 'str', enum: ['', 'claude', 'codex'] },
    agent_allow: strs,
    heartbeat_seconds: upTo(R.heartbeat_seconds),
    step_timeout_seconds: upTo(R.step_timeout_seconds),
    run_checkpoints: { t: 'bool' },
    base_branch: { t: 'str', min: 1 },
    setup_command: strs,
    no_verify: { t: 'bool' },
    remote: str,
    reviewer: { t: 'argv' },
    review_agent: { t: 'str', enum: ['', 'claude', 'codex'] },
    review_rounds: upTo(R.review_rounds),
    resolver: { t: 'argv' },
    resolve_rounds: { t: 'int', min: 0, max: R.resolve_rounds },
    budget_usd: { t: 'num', min: 0 },
    budget_tokens: { t: 'int', min: 0, max: R.budget_tokens },
    stall_seconds: upTo(R.stall_seconds),
    log_max_mb: upTo(R.log_max_mb),
    notify: { t: 'argv' },
    prices: { t: 'prices' },
  },
  validate: { level: { t: 'str', enum: ['lenient', 'normal', 'strict'] } },
  kernel: KERNEL_RULES,
};

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
