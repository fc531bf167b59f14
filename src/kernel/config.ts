/**
 * Kernel configuration (05-kernel.md §3.1): CLI flag > environment (`TUG_*`; under `tugcode refactor` also
 * `TUGCODE_KERNEL_*`, which wins) > the `[kernel]` table of `.tugtool/config.toml` > `pyproject.toml
 * [tool.tug]` > defaults. The config file is the main repo root's when the workspace is in a git repository
 * (04-git.md §1), else the workspace's own.
 *
 * Parsing and validation reuse the project's one loader (`src/config/config.ts` `loadConfig`, schema in
 * `src/config/schema.ts`) and repo resolver (`src/git/repo.ts`): those are leaf modules without SQLite, and
 * they load lazily — only when a config file, a `[tool.tug]` table or an environment override exists.
 * Any malformed file or value is `ConfigInvalid` (exit 2). Flags are applied by the caller (`withFlags`).
 */
import { existsSync, lstatSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { KERNEL_TUG_ENV } from '../config/defaults.js';
import { KernelError } from './errors.js';
import type { VerifyMode } from './types.js';

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
}

export type SettingKey = keyof KernelSettings;
export type SettingSource = 'flag' | 'env' | 'config' | 'pyproject' | 'default';

export interface LoadedConfig {
  settings: KernelSettings;
  /** Where each value came from (for logs and tests). */
  sources: Record<SettingKey, SettingSource>;
  /** The config files that were read (absolute paths). */
  files: string[];
  /** Non-fatal notes (unknown keys), logged at `warn`. */
  notes: string[];
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
};

const KEYS = Object.keys(SETTING_DEFAULTS) as SettingKey[];

/** The `TUG_*` names of config keys (05-kernel.md §3.1), shared with src/config/config.ts. */
const TUG_ENV = KERNEL_TUG_ENV as Partial<Record<SettingKey, string>>;

const tugcodeName = (k: SettingKey) => `TUGCODE_KERNEL_${k.toUpperCase()}`;

type Env = Record<string, string | undefined>;

/** The environment names that may set `key` for this front door, strongest first. */
function envNames(key: SettingKey, prog: 'tug' | 'tugcode'): string[] {
  const out: string[] = [];
  if (prog === 'tugcode') out.push(tugcodeName(key));
  const alias = TUG_ENV[key];
  if (alias) out.push(alias);
  return out;
}

/**
 * The directory whose `.tugtool/config.toml` applies: the main repo root when the workspace is inside a
 * git work tree (no `.git` above it means no repository, and git is never spawned), else the workspace.
 */
async function configRoot(workspace: string, env: Env): Promise<string> {
  let dir = workspace;
  let inGit = Boolean(env.GIT_DIR);
  for (;;) {
    try {
      lstatSync(join(dir, '.git'));
      inGit = true;
      break;
    } catch {
      const up = dirname(dir);
      if (up === dir) break;
      dir = up;
    }
  }
  if (!inGit) return workspace;
  try {
    const { resolveRepo } = await import('../git/repo.js');
    return resolveRepo(workspace, env as NodeJS.ProcessEnv).mainRoot;
  } catch {
    return workspace; // a `.git` that git does not recognise: behave as outside git
  }
}

function configInvalid(path: string, key: string | null, reason: string): KernelError {
  return new KernelError('ConfigInvalid', `${path}: ${reason}`, { path, key, reason });
}

/**
 * The loader's TugError('ConfigInvalid', {source, key?, reason}) → the kernel's ConfigInvalid, naming the
 * environment variable when the bad value came from one.
 */
function loaderError(e: unknown, file: string, envNameOf: (k: SettingKey) => string | null): KernelError {
  const err = e as { code?: string; details?: Record<string, unknown>; message?: string };
  if (err.code !== 'ConfigInvalid') return configInvalid(file, null, err.message ?? String(e));
  const d = err.details ?? {};
  const source = typeof d.source === 'string' ? d.source : '';
  const reason = String(d.reason ?? 'invalid value');
  const fromSource = /^TUGCODE_KERNEL_([A-Z_]+)$/.exec(source)?.[1]?.toLowerCase() as SettingKey | undefined;
  const dotted = typeof d.key === 'string' && d.key !== '' ? d.key : null;
  const fromKey = dotted?.startsWith('kernel.') ? (dotted.slice(7) as SettingKey) : undefined;
  for (const k of [fromSource, fromKey]) {
    const name = k && (KEYS as string[]).includes(k) ? envNameOf(k) : null;
    if (name) return configInvalid(name, k!, reason.replace(/^kernel\.[a-z_]+: /, ''));
  }
  return configInvalid(file, dotted, reason);
}

/** `[]` and `""` mean unset (04-git.md §8); `safe` is `strict`. */
function normalize(key: SettingKey, v: unknown): unknown {
  if ((key === 'test_command' || key === 'typecheck_command') && Array.isArray(v)) return v.length === 0 ? null : v;
  if ((key === 'python' || key === 'rust_analyzer') && typeof v === 'string') return v === '' ? null : v;
  if (key === 'safety') return v === 'aggressive' ? 'aggressive' : 'strict';
  return v;
}

async function readPyproject(
  workspace: string,
  notes: string[],
): Promise<{ path: string; values: Partial<Record<SettingKey, unknown>> } | null> {
  const path = join(workspace, 'pyproject.toml');
  if (!existsSync(path)) return null;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw configInvalid(path, null, `cannot read: ${(e as Error).message}`);
  }
  if (!/\btug\b/.test(text)) return null; // no [tool.tug] table: the file is not ours to judge
  const { parse } = await import('smol-toml');
  let doc: Record<string, unknown>;
  try {
    doc = parse(text) as Record<string, unknown>;
  } catch (e) {
    throw configInvalid(path, null, `malformed TOML: ${((e as Error).message ?? String(e)).split('\n')[0]}`);
  }
  const table = (doc.tool as Record<string, unknown> | undefined)?.tug;
  if (table === undefined) return null;
  if (typeof table !== 'object' || table === null || Array.isArray(table))
    throw configInvalid(path, 'tool.tug', '[tool.tug] must be a table');
  const known: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(table)) {
    if ((KEYS as string[]).includes(k)) known[k] = v;
    else notes.push(`${path}: unknown key tool.tug.${k} ignored`);
  }
  const { kernelSchema } = await import('../config/schema.js');
  const r = kernelSchema.partial().safeParse(known);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    const key = `tool.tug.${issue.path.join('.')}`;
    throw configInvalid(path, key, `${key}: ${issue.message}`);
  }
  return { path, values: r.data as Partial<Record<SettingKey, unknown>> };
}

/** Keys of the `[kernel]` table actually written in the file (the loader fills in defaults). */
async function kernelKeysIn(text: string): Promise<Set<string>> {
  const { parse } = await import('smol-toml');
  const doc = parse(text) as Record<string, unknown>;
  const k = doc.kernel;
  return new Set(k && typeof k === 'object' && !Array.isArray(k) ? Object.keys(k) : []);
}

/** Load the kernel settings for a workspace (without flags). Throws ConfigInvalid. */
export async function loadKernelConfig(
  workspace: string,
  o: { env?: Env; prog?: 'tug' | 'tugcode' } = {},
): Promise<LoadedConfig> {
  const env = o.env ?? process.env;
  const prog = o.prog ?? 'tug';
  const notes: string[] = [];
  const files: string[] = [];
  const settings: KernelSettings = { ...SETTING_DEFAULTS, include: [], exclude: [] };
  const sources = Object.fromEntries(KEYS.map((k) => [k, 'default'])) as Record<SettingKey, SettingSource>;

  // Lowest layers first: pyproject [tool.tug], then the [kernel] table and the environment.
  const py = await readPyproject(workspace, notes);
  if (py) {
    files.push(py.path);
    for (const [k, v] of Object.entries(py.values) as [SettingKey, unknown][]) {
      (settings as unknown as Record<string, unknown>)[k] = normalize(k, v);
      sources[k] = 'pyproject';
    }
  }

  const root = await configRoot(workspace, env);
  const file = join(root, '.tugtool', 'config.toml');
  const hasFile = existsSync(file);
  // Only the kernel's own names reach the shared loader: the chosen TUGCODE_KERNEL_* (tugcode only) and TUG_*.
  const loaderEnv: Env = {};
  const fromEnv = new Set<SettingKey>();
  for (const k of KEYS) {
    for (const name of envNames(k, prog)) {
      if (env[name] === undefined) continue;
      fromEnv.add(k);
      // The loader reads TUGCODE_KERNEL_<KEY> before the TUG_* alias, so pass the winner under that name.
      if (loaderEnv[tugcodeName(k)] === undefined) loaderEnv[tugcodeName(k)] = env[name];
      break;
    }
  }
  if (!hasFile && fromEnv.size === 0) return { settings, sources, files, notes };

  let text = '';
  if (hasFile) {
    files.push(file);
    try {
      text = readFileSync(file, 'utf8');
    } catch (e) {
      throw configInvalid(file, null, `cannot read: ${(e as Error).message}`);
    }
  }
  const { loadConfig } = await import('../config/config.js');
  const sink = { add: (_code: string, message: string) => void notes.push(message) };
  let loaded;
  try {
    loaded = await loadConfig(root, loaderEnv as NodeJS.ProcessEnv, sink as never);
  } catch (e) {
    throw loaderError(e, file, (k) => (fromEnv.has(k) ? envNames(k, prog).find((n) => env[n] !== undefined)! : null));
  }
  const written = hasFile ? await kernelKeysIn(text) : new Set<string>();
  const kernel = loaded.kernel as unknown as Record<string, unknown>;
  for (const k of KEYS) {
    const src: SettingSource | null = fromEnv.has(k) ? 'env' : written.has(k) ? 'config' : null;
    if (!src) continue;
    (settings as unknown as Record<string, unknown>)[k] = normalize(k, kernel[k]);
    sources[k] = src;
  }
  return { settings, sources, files, notes };
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

/** The subset of KernelOptions that config keys govern (kept structural to avoid an import cycle). */
export interface ConfigurableOptions {
  lockTimeoutS?: number;
  python?: string;
  rustAnalyzer?: string;
  safety?: Safety;
  include?: string[];
  exclude?: string[];
  testCommand?: string[];
  testTimeoutS?: number;
  typecheckCommand?: string[];
  typecheckTimeoutS?: number;
}

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
