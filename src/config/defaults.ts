import { MAX_LEASE_SECONDS } from '../contract/inputs/limits.js';
import { KERNEL_FILE_DEFAULTS } from '../kernel/light.js';

export { KERNEL_TUG_ENV } from '../kernel/light.js';

/**
 * Config defaults as plain data, so commands without a config file never load zod or a TOML parser.
 * A test checks that this equals `configSchema.parse({})` (src/config/schema.ts is the source of truth).
 * The `[kernel]` table belongs to the kernel (src/kernel/config-keys.ts), which never imports tugcode.
 */
/**
 * The longest claim lease, in seconds (366 days), from any source: `--lease-duration`, `state.lease_seconds`
 * in config.toml, `TUGCODE_STATE_LEASE_SECONDS`, or a library caller. Longer leases would not mean "held"
 * anyway, and past year 9999 the stored timestamp would stop sorting as time.
 */
export { MAX_LEASE_SECONDS };

/**
 * Upper bounds of the numeric keys (the lower bound is 1). Every source of a value — config.toml, the
 * environment, a flag — gets the same bound. Durations that feed a timer stay far below Node's 2^31-1 ms
 * timer limit (24.8 days), past which a timer fires at once.
 */
export const CONFIG_MAX = {
  state: { lease_seconds: MAX_LEASE_SECONDS, max_attempts: 1000 },
  run: {
    workers: 64,
    heartbeat_seconds: 24 * 3600,
    step_timeout_seconds: 7 * 24 * 3600,
    stall_seconds: 7 * 24 * 3600,
    log_max_mb: 1024 * 1024,
    budget_tokens: 1e15,
    review_rounds: 20,
    resolve_rounds: 100,
  },
} as const;

export const CONFIG_DEFAULTS = {
  state: { lease_seconds: 7200, max_attempts: 3, url: '', project: '', host: '' },
  run: {
    workers: 2,
    implementer: '',
    agent: '' as '' | 'claude' | 'codex',
    agent_allow: [] as string[],
    heartbeat_seconds: 60,
    step_timeout_seconds: 3600,
    run_checkpoints: true,
    base_branch: 'main',
    setup_command: [] as string[],
    no_verify: false,
    remote: '',
    reviewer: '',
    review_agent: '' as '' | 'claude' | 'codex',
    review_rounds: 3,
    resolver: '',
    resolve_rounds: 2,
    budget_usd: 0,
    budget_tokens: 0,
    stall_seconds: 600,
    log_max_mb: 256,
    notify: '',
    prices: {} as import('../contract/usage.js').Prices,
  },
  validate: { level: 'normal' as 'lenient' | 'normal' | 'strict' },
  kernel: KERNEL_FILE_DEFAULTS,
};

export type ConfigShape = typeof CONFIG_DEFAULTS;

export const CONFIG_KEYS: { [T in keyof ConfigShape]: readonly (keyof ConfigShape[T] & string)[] } = {
  state: Object.keys(CONFIG_DEFAULTS.state) as (keyof ConfigShape['state'])[],
  run: Object.keys(CONFIG_DEFAULTS.run) as (keyof ConfigShape['run'])[],
  validate: Object.keys(CONFIG_DEFAULTS.validate) as (keyof ConfigShape['validate'])[],
  kernel: Object.keys(CONFIG_DEFAULTS.kernel) as (keyof ConfigShape['kernel'])[],
};
