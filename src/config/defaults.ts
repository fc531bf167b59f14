import { KERNEL_FILE_DEFAULTS } from '../kernel/config-keys.js';

export { KERNEL_TUG_ENV } from '../kernel/config-keys.js';

/**
 * Config defaults as plain data, so commands without a config file never load zod or a TOML parser.
 * A test checks that this equals `configSchema.parse({})` (src/config/schema.ts is the source of truth).
 * The `[kernel]` table belongs to the kernel (src/kernel/config-keys.ts), which never imports tugcode.
 */
export const CONFIG_DEFAULTS = {
  state: { lease_seconds: 7200, max_attempts: 3 },
  run: {
    workers: 2,
    implementer: '',
    heartbeat_seconds: 60,
    step_timeout_seconds: 3600,
    run_checkpoints: true,
    base_branch: 'main',
    setup_command: [] as string[],
    no_verify: false,
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
