/**
 * Kernel configuration (docs/kernel.md §3.1): CLI flag > environment (`TUG_*`; a host's `settingsEnvPrefix`
 * names win over them) > the `[kernel]` table of `.tugtool/config.toml` > `pyproject.toml [tool.tug]` >
 * defaults. The config file is the main repo root's when the workspace is in a git repository (docs/git.md
 * §1), else the workspace's own.
 *
 * The kernel reads only its own table, with its own key table (./config-keys.ts, which a host's config
 * loader may share) and git-layout reader (./repo-layout.ts): src/kernel imports no host (§2.1). smol-toml
 * loads only when a config file sets something, zod only when a value fails the zod-free rules (for the
 * precise message) or a `[tool.tug]` table exists. Other tables of config.toml are the host's to judge. Any
 * malformed file or value is `ConfigInvalid` (exit 2). Flags are applied by the caller (`withFlags`).
 */
import { existsSync } from 'node:fs';
import { readConfigFile } from './config-file.js';
import { join } from 'node:path';
import { envValue, KERNEL_FILE_DEFAULTS, KERNEL_RULES, KERNEL_TUG_ENV, satisfies, setsNoValue } from './config-keys.js';
import { canonicalPath, gitLayout, insideGit } from './repo-layout.js';
import { KernelError } from './errors.js';
import { tomlErrorReport } from './toml-error.js';
import { gitOutput } from './exec.js';
import type { HostOptions, KernelOptions, VerifyMode } from './types.js';
import type { KernelWarning } from './envelope.js';

export type Safety = 'strict' | 'aggressive';

/** Resolved kernel settings; `null` means "unset" (detect / resolve). */
export interface KernelSettings {
  verify: VerifyMode;
  test_command: string[] | null;
  test_timeout: number;
  typecheck_command: string[] | null;
  typecheck_timeout: number;
  safety: Safety;
  include: string[];
  exclude: string[];
  python: string | null;
  rust_analyzer: string | null;
  lock_timeout: number;
  max_files_affected: number;
  max_edits: number;
  max_concurrent_sessions: number;
  /** Files a workspace listing may hold (docs/kernel.md §10.1); more is WorkspaceTooLarge. */
  max_workspace_files: number;
  /** MiB a full sandbox may copy (§11.1); more is WorkspaceTooLarge. */
  max_sandbox_mb: number;
}

export type SettingKey = keyof KernelSettings;
export type SettingSource = 'flag' | 'env' | 'config' | 'pyproject' | 'default';

export interface LoadedConfig {
  settings: KernelSettings;
  /** Where each value came from (for logs and tests). */
  sources: Record<SettingKey, SettingSource>;
  /** The config files that were read (absolute paths). */
  files: string[];
  /** Unknown keys, ignored: `ConfigUnknownKey` warnings of the call's output (docs/kernel.md §5.3). */
  warnings: KernelWarning[];
}

export const SETTING_DEFAULTS: KernelSettings = {
  verify: 'syntax',
  test_command: null,
  test_timeout: 300,
  typecheck_command: null,
  typecheck_timeout: 600,
  safety: 'strict',
  include: [],
  exclude: [],
  python: null,
  rust_analyzer: null,
  lock_timeout: 30,
  max_files_affected: 50,
  max_edits: 500,
  max_concurrent_sessions: 2,
  max_workspace_files: 100_000,
  max_sandbox_mb: 2048,
};

const KEYS = Object.keys(SETTING_DEFAULTS) as SettingKey[];

const TUG_ENV = KERNEL_TUG_ENV as Partial<Record<SettingKey, string>>;

type Env = Record<string, string | undefined>;

/** The environment names that may set `key` for this front door, strongest first. */
function envNames(key: SettingKey, prefix: string | undefined): string[] {
  const out: string[] = [];
  if (prefix) out.push(`${prefix}${key.toUpperCase()}`);
  const alias = TUG_ENV[key];
  if (alias) out.push(alias);
  return out;
}

/**
 * The directory whose `.tugtool/config.toml` applies: the main checkout when the workspace is inside a git
 * work tree (no `.git` above it means no repository, and git is never spawned), else the workspace. Layouts
 * only git can read (submodule, `--separate-git-dir`) ask `git rev-parse` for the work tree root. GIT_DIR and
 * the other variables that redirect git are ignored, as by every git call of the kernel (git-env.ts).
 */
async function configRoot(workspace: string, env: Env): Promise<string> {
  if (!insideGit(workspace)) return workspace;
  const layout = gitLayout(canonicalPath(workspace));
  if (layout) return layout.mainRoot;
  const out = await gitOutput(['rev-parse', '--show-toplevel'], { cwd: workspace, env, timeoutMs: 30_000 });
  const top = out ? out.toString('utf8').trim() : '';
  return top ? canonicalPath(top) : workspace; // a `.git` that git does not recognise: behave as outside git
}

function configInvalid(
  path: string,
  key: string | null,
  reason: string,
  where: { line?: number; column?: number; table?: string } = {},
): KernelError {
  return new KernelError('ConfigInvalid', `${path}: ${reason}`, { path, key, reason, ...where });
}

/**
 * The TOML document of `path`; a syntax error is ConfigInvalid naming its line, column and table, in the words
 * tugcode uses for its own tables (./toml-error.ts).
 */
async function parseToml(path: string, text: string): Promise<Record<string, unknown>> {
  const { parse } = await import('smol-toml');
  try {
    return parse(text, { integersAsBigInt: 'asNeeded' }) as Record<string, unknown>; // past 2^53: named below
  } catch (e) {
    // The kernel's envelope has no hint: the reason alone names the place (and both lines of a redefinition).
    const { reason, hint: _hint, ...where } = tomlErrorReport(e, text, path);
    throw configInvalid(path, null, reason, where);
  }
}

/** `[]` and `""` mean unset (docs/git.md §8); `safe` is `strict`. */
function normalize(key: SettingKey, v: unknown): unknown {
  if ((key === 'test_command' || key === 'typecheck_command') && Array.isArray(v)) return v.length === 0 ? null : v;
  if ((key === 'python' || key === 'rust_analyzer') && typeof v === 'string') return v === '' ? null : v;
  if (key === 'safety') return v === 'aggressive' ? 'aggressive' : 'strict';
  return v;
}

async function readPyproject(
  workspace: string,
  warnings: KernelWarning[],
): Promise<{ path: string; values: Partial<Record<SettingKey, unknown>> } | null> {
  const path = join(workspace, 'pyproject.toml');
  if (!existsSync(path)) return null;
  const read = readConfigFile(path);
  if ('reason' in read) throw configInvalid(path, null, read.reason);
  const text = read.text;
  if (!/\btug\b/.test(text)) return null; // no [tool.tug] table: the file is not ours to judge
  const doc = await parseToml(path, text);
  const table = (doc.tool as Record<string, unknown> | undefined)?.tug;
  if (table === undefined) return null;
  if (typeof table !== 'object' || table === null || Array.isArray(table))
    throw configInvalid(path, 'tool.tug', '[tool.tug] must be a table');
  const known: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(table)) {
    if ((KEYS as string[]).includes(k)) known[k] = v;
    else warnings.push(unknownKey(`${path}: unknown key tool.tug.${k} ignored`));
  }
  await validate(known, (key, message) => {
    const dotted = `tool.tug.${key}`;
    return configInvalid(path, dotted, `${dotted}: ${message}`);
  });
  return { path, values: known as Partial<Record<SettingKey, unknown>> };
}

/**
 * Check values against the zod-free rules; on the first failure, ask the zod schema for the precise message
 * and throw what `fail(key, message)` builds.
 */
async function validate(values: Record<string, unknown>, fail: (key: string, message: string) => KernelError) {
  const bad = Object.entries(values).find(([k, v]) => !satisfies(KERNEL_RULES[k as SettingKey], v));
  if (!bad) return;
  if (typeof bad[1] === 'bigint') throw fail(bad[0], `${bad[1]} is out of range`);
  const { kernelSchema } = await import('./config-schema.js');
  const r = kernelSchema.partial().safeParse({ [bad[0]]: bad[1] });
  const issue = r.success ? null : r.error.issues[0]!;
  throw fail(issue ? issue.path.join('.') || bad[0] : bad[0], issue ? issue.message : 'invalid value');
}

/** The warning of an unknown key, with the code and words tugcode uses for its own tables (docs/errors.md). */
function unknownKey(message: string): KernelWarning {
  return { code: 'ConfigUnknownKey', message };
}

/** The `[kernel]` table of config.toml: known keys (validated) and warnings for unknown ones. */
async function readKernelTable(file: string, warnings: KernelWarning[]): Promise<Record<string, unknown>> {
  const read = readConfigFile(file);
  if ('reason' in read) throw configInvalid(file, null, read.reason);
  const text = read.text;
  // No "kernel" anywhere means no [kernel] table; a file of comments and headers sets nothing.
  if (!text.includes('kernel') || setsNoValue(text)) return {};
  const doc = await parseToml(file, text);
  const table = doc.kernel;
  if (table === undefined) return {};
  if (typeof table !== 'object' || table === null || Array.isArray(table))
    throw configInvalid(file, 'kernel', '[kernel] must be a table');
  const known: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(table)) {
    if ((KEYS as string[]).includes(k)) known[k] = v;
    else warnings.push(unknownKey(`${file}: unknown key kernel.${k} ignored`));
  }
  await validate(known, (key, message) => configInvalid(file, `kernel.${key}`, `kernel.${key}: ${message}`));
  return known;
}

/** The environment's values, strongest name first per key; a bad value is ConfigInvalid naming the variable. */
async function readEnv(env: Env, prefix: string | undefined): Promise<Partial<Record<SettingKey, unknown>>> {
  const out: Partial<Record<SettingKey, unknown>> = {};
  for (const k of KEYS) {
    const name = envNames(k, prefix).find((n) => env[n] !== undefined);
    if (!name) continue;
    const parsed = envValue(env[name]!, KERNEL_FILE_DEFAULTS[k]);
    if ('reason' in parsed) throw configInvalid(name, k, parsed.reason);
    await validate({ [k]: parsed.value }, (_key, message) => configInvalid(name, k, message));
    out[k] = parsed.value;
  }
  return out;
}

/** Load the kernel settings for a workspace (without flags) from `env` (default: empty). Throws ConfigInvalid. */
export async function loadKernelConfig(
  workspace: string,
  o: { env?: Env } & Pick<HostOptions, 'settingsEnvPrefix'> = {},
): Promise<LoadedConfig> {
  const env = o.env ?? {};
  const warnings: KernelWarning[] = [];
  const files: string[] = [];
  const settings: KernelSettings = { ...SETTING_DEFAULTS, include: [], exclude: [] };
  const sources = Object.fromEntries(KEYS.map((k) => [k, 'default'])) as Record<SettingKey, SettingSource>;

  // Lowest layers first: pyproject [tool.tug], then the [kernel] table and the environment.
  const py = await readPyproject(workspace, warnings);
  if (py) {
    files.push(py.path);
    for (const [k, v] of Object.entries(py.values) as [SettingKey, unknown][]) {
      (settings as unknown as Record<string, unknown>)[k] = normalize(k, v);
      sources[k] = 'pyproject';
    }
  }

  const fromEnv = await readEnv(env, o.settingsEnvPrefix);
  const file = join(await configRoot(workspace, env), '.tugtool', 'config.toml');
  if (existsSync(file)) {
    files.push(file);
    for (const [k, v] of Object.entries(await readKernelTable(file, warnings)) as [SettingKey, unknown][]) {
      (settings as unknown as Record<string, unknown>)[k] = normalize(k, v);
      sources[k] = 'config';
    }
  }
  for (const [k, v] of Object.entries(fromEnv) as [SettingKey, unknown][]) {
    (settings as unknown as Record<string, unknown>)[k] = normalize(k, v);
    sources[k] = 'env';
  }
  return { settings, sources, files, warnings };
}

/** Flags on top of loaded settings: every defined flag value wins. */
export function withFlags(c: LoadedConfig, flags: Partial<KernelSettings>): LoadedConfig {
  const settings = { ...c.settings };
  const sources = { ...c.sources };
  for (const [k, v] of Object.entries(flags) as [SettingKey, unknown][]) {
    if (v === undefined) continue;
    if ((k === 'include' || k === 'exclude') && Array.isArray(v) && v.length === 0) continue;
    (settings as unknown as Record<string, unknown>)[k] = v;
    sources[k] = 'flag';
  }
  return { ...c, settings, sources };
}

/** The subset of KernelOptions that config keys govern. */
export type ConfigurableOptions = Pick<
  KernelOptions,
  | 'lockTimeoutS'
  | 'python'
  | 'rustAnalyzer'
  | 'safety'
  | 'include'
  | 'exclude'
  | 'testCommand'
  | 'testTimeoutS'
  | 'typecheckCommand'
  | 'typecheckTimeoutS'
>;

/** Explicit library/CLI options, as flags over the configuration. */
export function flagsOf(o: ConfigurableOptions): Partial<KernelSettings> {
  return {
    lock_timeout: o.lockTimeoutS,
    python: o.python,
    rust_analyzer: o.rustAnalyzer,
    safety: o.safety,
    include: o.include,
    exclude: o.exclude,
    test_command: o.testCommand,
    test_timeout: o.testTimeoutS,
    typecheck_command: o.typecheckCommand,
    typecheck_timeout: o.typecheckTimeoutS,
  };
}

/** Options with every configurable field taken from the resolved settings. */
export function applySettings<T extends ConfigurableOptions>(o: T, s: KernelSettings): T {
  return {
    ...o,
    lockTimeoutS: s.lock_timeout,
    python: s.python ?? undefined,
    rustAnalyzer: s.rust_analyzer ?? undefined,
    safety: s.safety,
    include: s.include,
    exclude: s.exclude,
    testCommand: s.test_command ?? undefined,
    testTimeoutS: s.test_timeout,
    typecheckCommand: s.typecheck_command ?? undefined,
    typecheckTimeoutS: s.typecheck_timeout,
  };
}
