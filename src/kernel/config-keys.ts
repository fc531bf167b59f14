/**
 * The `[kernel]` table of `.tugtool/config.toml` (docs/kernel.md §3.1) as plain data: defaults, the `TUG_*`
 * environment names and zod-free value rules. The kernel owns these (src/kernel imports no host, §2.1);
 * a host's config loader imports them through ./light.ts for its own `[kernel]` table, so both read the
 * same keys. The zod schema (the precise error messages) is `./config-schema.ts`; a property test proves
 * the rules accept exactly what the schema accepts.
 */
import { tokenizeShell } from './opspec.js';

/** Defaults as written in the file: `[]` and `""` mean "unset" (detect / resolve). */
export const KERNEL_FILE_DEFAULTS = {
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
  max_workspace_files: 100_000,
  max_sandbox_mb: 2048,
};

export type KernelFileShape = typeof KERNEL_FILE_DEFAULTS;
export type KernelKey = keyof KernelFileShape;
export const KERNEL_KEYS = Object.keys(KERNEL_FILE_DEFAULTS) as KernelKey[];

/** Kernel keys also honoured under their `TUG_*` names; a host's `settingsEnvPrefix` names win over them. */
export const KERNEL_TUG_ENV: Partial<Record<KernelKey, string>> = {
  verify: 'TUG_VERIFY',
  test_command: 'TUG_TEST_COMMAND',
  test_timeout: 'TUG_TEST_TIMEOUT',
  safety: 'TUG_SAFETY',
  python: 'TUG_PYTHON',
  rust_analyzer: 'TUG_RA_PATH',
  lock_timeout: 'TUG_LOCK_TIMEOUT',
};

export type Rule =
  | { t: 'int'; min: number; max?: number }
  | { t: 'bool' }
  | { t: 'str'; min?: number; enum?: readonly string[] }
  | { t: 'strs' }
  /** A command line split shell-style (`tokenizeShell`): a string whose quotes and escapes are balanced. */
  | { t: 'argv' };

const pos: Rule = { t: 'int', min: 1 };
const str: Rule = { t: 'str' };
const strs: Rule = { t: 'strs' };

export const KERNEL_RULES: { [K in KernelKey]: Rule } = {
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
  max_workspace_files: pos,
  max_sandbox_mb: pos,
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
    case 'argv':
      return typeof v === 'string' && tokenizeShell(v).ok;
  }
}

/**
 * The value of an environment variable for a key whose default is `sample`: integers, booleans and JSON
 * arrays are parsed, strings taken as they are. Returns an error reason instead of throwing.
 */
export function envValue(raw: string, sample: unknown): { value: unknown } | { reason: string } {
  if (typeof sample === 'number') {
    if (!/^-?\d+$/.test(raw.trim())) return { reason: `${JSON.stringify(raw)} is not an integer` };
    return { value: Number(raw) };
  }
  if (typeof sample === 'boolean') {
    if (/^(1|true|yes|on)$/i.test(raw)) return { value: true };
    if (/^(0|false|no|off)$/i.test(raw)) return { value: false };
    return { reason: `${JSON.stringify(raw)} is not a boolean` };
  }
  if (Array.isArray(sample)) {
    try {
      return { value: JSON.parse(raw) as unknown };
    } catch {
      return { reason: `${JSON.stringify(raw)} is not a JSON array of strings` };
    }
  }
  return { value: raw };
}

/**
 * True when every line of a TOML text is blank, a comment, or a table header (`known`, when given, limits
 * the headers allowed): the file sets no value. A host's `init` may write such a file; recognising it
 * needs neither a TOML parser nor zod.
 */
export function setsNoValue(text: string, known?: (table: string) => boolean): boolean {
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const header = /^\[\s*([A-Za-z0-9_-]+)\s*\]\s*(#.*)?$/.exec(line);
    if (header && (!known || known(header[1]!))) continue;
    return false;
  }
  return true;
}
