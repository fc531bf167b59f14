/**
 * Config defaults as plain data, so commands without a config file never load zod or a TOML parser.
 * A test checks that this equals `configSchema.parse({})` (src/config/schema.ts is the source of truth).
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
  kernel: {
    verify: 'syntax' as 'none' | 'syntax' | 'tests' | 'typecheck',
    test_command: [] as string[],
    test_timeout: 300,
    typecheck_command: [] as string[],
    typecheck_timeout: 600,
    safety: 'strict' as 'strict' | 'safe' | 'aggressive',
    include: [] as string[],
    exclude: [] as string[],
    python: '',
    rust_analyzer: '',
    lock_timeout: 30,
    max_files_affected: 50,
    max_edits: 500,
    max_concurrent_sessions: 2,
  },
};

export type ConfigShape = typeof CONFIG_DEFAULTS;

export const CONFIG_KEYS: { [T in keyof ConfigShape]: readonly (keyof ConfigShape[T] & string)[] } = {
  state: Object.keys(CONFIG_DEFAULTS.state) as (keyof ConfigShape['state'])[],
  run: Object.keys(CONFIG_DEFAULTS.run) as (keyof ConfigShape['run'])[],
  validate: Object.keys(CONFIG_DEFAULTS.validate) as (keyof ConfigShape['validate'])[],
  kernel: Object.keys(CONFIG_DEFAULTS.kernel) as (keyof ConfigShape['kernel'])[],
};

/** Kernel keys also honoured under their `TUG_*` names (05-kernel.md §3.1); `TUGCODE_KERNEL_*` wins. */
export const KERNEL_TUG_ENV: Partial<Record<keyof ConfigShape['kernel'], string>> = {
  verify: 'TUG_VERIFY',
  test_command: 'TUG_TEST_COMMAND',
  test_timeout: 'TUG_TEST_TIMEOUT',
  safety: 'TUG_SAFETY',
  python: 'TUG_PYTHON',
  rust_analyzer: 'TUG_RA_PATH',
  lock_timeout: 'TUG_LOCK_TIMEOUT',
};
