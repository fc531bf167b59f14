/**
 * Loads `.tugtool/config.toml` from the main repo root (docs/git.md §8).
 * Precedence: flag (applied by callers) > environment `TUGCODE_<TABLE>_<KEY>` (kernel keys also `TUG_*`)
 * > file > defaults. Malformed files and wrong types are ConfigInvalid; unknown keys are warnings.
 * smol-toml and zod load only when a file or an environment override exists, so the common hot path
 * (no config file) pays for neither.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { TugError } from '../contract/errors.js';
import type { WarningSink } from '../contract/envelope.js';
import { CONFIG_FILE } from '../contract/layout.js';
import { USAGE_MAX_PRICE } from '../contract/usage.js';
import { CONFIG_DEFAULTS, CONFIG_KEYS, KERNEL_TUG_ENV, type ConfigShape } from './defaults.js';
import { CONFIG_RULES, fastMerge, satisfies, type Rule } from './rules.js';
import { envValue, readConfigFile, setsNoValue, tomlErrorReport } from '../kernel/light.js';
import { parseStateUrl } from './state-url.js';

export type Config = ConfigShape;

/** What a rule accepts, in words (the reason of a ConfigInvalid naming an environment variable). */
function expected(rule: Rule): string {
  switch (rule.t) {
    case 'int':
      return rule.max === undefined
        ? `an integer of at least ${rule.min}`
        : `an integer from ${rule.min} to ${rule.max}`;
    case 'bool':
      return 'true or false';
    case 'str':
      return rule.enum ? `one of ${rule.enum.join(', ')}` : rule.min ? 'a non-empty string' : 'a string';
    case 'strs':
      return 'a JSON array of strings';
    case 'argv':
      return 'a command line whose quotes are balanced (it is split shell-style)';
    case 'num':
      return `a number of at least ${rule.min}`;
    case 'prices':
      return `a table of input, output, cache_read, cache_write: numbers from 0 to ${USAGE_MAX_PRICE} (USD per million tokens)`;
  }
}

/**
 * The value of one environment override, checked against the same rule as the file's value, so a bad
 * value is always blamed on the variable that set it (never on config.toml).
 */
function envValueOf(raw: string, table: string, key: string, name: string): unknown {
  const sample = (CONFIG_DEFAULTS as Record<string, Record<string, unknown>>)[table]![key];
  const rule = (CONFIG_RULES as unknown as Record<string, Record<string, Rule>>)[table]![key]!;
  const r = hostEnvValue(raw, rule) ?? envValue(raw, sample);
  if ('reason' in r) throw new TugError('ConfigInvalid', { source: name, key: `${table}.${key}`, reason: r.reason });
  if (!satisfies(rule, r.value)) {
    throw new TugError('ConfigInvalid', {
      source: name,
      key: `${table}.${key}`,
      reason: `${JSON.stringify(raw)} is not valid: ${table}.${key} must be ${expected(rule)}`,
    });
  }
  // The state URL is parsed (never connected to) here, so a URL that cannot work is refused as the
  // configuration loads, naming the variable (docs/state.md §8).
  if (table === 'state' && key === 'url' && r.value !== '')
    parseStateUrl(r.value as string, { source: name, setting: name, drop: 'unset it', subject: 'the URL' });
  return r.value;
}

/** A decimal (`budget_usd`) or a JSON table (`prices`) from the environment; null for the kernel's kinds. */
function hostEnvValue(raw: string, rule: Rule): { value: unknown } | { reason: string } | null {
  if (rule.t === 'num') {
    const v = raw.trim() === '' ? NaN : Number(raw);
    return Number.isFinite(v) ? { value: v } : { reason: `${JSON.stringify(raw)} is not a number` };
  }
  if (rule.t === 'prices') {
    try {
      return { value: JSON.parse(raw) as unknown };
    } catch {
      return { reason: `${JSON.stringify(raw)} is not a JSON object` };
    }
  }
  return null;
}

function envOverrides(env: NodeJS.ProcessEnv): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const [table, keys] of Object.entries(CONFIG_KEYS)) {
    for (const key of keys) {
      const name = `TUGCODE_${table.toUpperCase()}_${key.toUpperCase()}`;
      const alias = table === 'kernel' ? (KERNEL_TUG_ENV as Record<string, string | undefined>)[key] : undefined;
      const raw = env[name] ?? (alias ? env[alias] : undefined);
      if (raw === undefined) continue;
      (out[table] ??= {})[key] = envValueOf(raw, table, key, env[name] !== undefined ? name : alias!);
    }
  }
  return out;
}

/** The variables that override a config key (envOverrides' names, for debug lines). */
function overrideNames(env: NodeJS.ProcessEnv): string[] {
  const names: string[] = [];
  for (const [table, keys] of Object.entries(CONFIG_KEYS)) {
    for (const key of keys) {
      const name = `TUGCODE_${table.toUpperCase()}_${key.toUpperCase()}`;
      const alias = table === 'kernel' ? (KERNEL_TUG_ENV as Record<string, string | undefined>)[key] : undefined;
      if (env[name] !== undefined) names.push(name);
      else if (alias && env[alias] !== undefined) names.push(alias);
    }
  }
  return names;
}

/**
 * A claim's lease must outlive the time between two heartbeats, or it lapses before its first heartbeat
 * renews it and another worker may take the step mid-work (docs/run.md §1 item 4.3). The reason, naming both
 * settings as the caller spells them, or null when the heartbeat comes first.
 */
export function leaseLapsesFirst(
  lease: { seconds: number; name: string },
  heartbeat: { seconds: number; name: string },
): string | null {
  if (heartbeat.seconds < lease.seconds) return null;
  return (
    `${heartbeat.name} (${heartbeat.seconds} s) must be shorter than ${lease.name} (${lease.seconds} s): ` +
    'a lease would lapse before its first heartbeat'
  );
}

/** The config's own lease and heartbeat (file, environment or defaults) must fit together. */
function checkLeaseHeartbeat(c: Config, source: string): Config {
  const reason = leaseLapsesFirst(
    { seconds: c.state.lease_seconds, name: 'state.lease_seconds' },
    { seconds: c.run.heartbeat_seconds, name: 'run.heartbeat_seconds' },
  );
  if (reason)
    throw new TugError('ConfigInvalid', {
      source,
      key: 'run.heartbeat_seconds',
      reason,
      hint: 'raise state.lease_seconds or lower run.heartbeat_seconds (the defaults are 7200 and 60)',
    });
  return c;
}

/** Parse and validate the TOML text; exported for tests and `doctor`. */
export async function parseConfigText(
  text: string,
  source: string,
  warnings?: WarningSink,
  overrides: Record<string, Record<string, unknown>> = {},
): Promise<Config> {
  let doc: Record<string, unknown> = {};
  if (text !== '') {
    const { parse } = await import('smol-toml');
    try {
      // An integer past 2^53 comes back as a BigInt (not a parse error), so its key can be named below.
      doc = parse(text, { integersAsBigInt: 'asNeeded' }) as Record<string, unknown>;
    } catch (e) {
      // Where the error is and what fixes a syntax error (not "fix the value"): kernel/toml-error.ts.
      throw new TugError('ConfigInvalid', { source, ...tomlErrorReport(e, text, source) });
    }
  }
  // Unknown tables and keys: warnings, then dropped so validation accepts the rest.
  const known: Record<string, Record<string, unknown>> = {};
  for (const [table, value] of Object.entries(doc)) {
    const keys = (CONFIG_KEYS as Record<string, readonly string[]>)[table];
    if (!keys) {
      warnings?.add('ConfigUnknownKey', `${source}: unknown table [${table}] ignored`, { key: table });
      continue;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new TugError('ConfigInvalid', { source, reason: `[${table}] must be a table` });
    }
    known[table] = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      if (!keys.includes(k))
        warnings?.add('ConfigUnknownKey', `${source}: unknown key ${table}.${k} ignored`, { key: `${table}.${k}` });
      else if (typeof v === 'bigint') {
        const rule = (CONFIG_RULES as unknown as Record<string, Record<string, Rule>>)[table]![k]!;
        throw new TugError('ConfigInvalid', {
          source,
          key: `${table}.${k}`,
          reason: `${table}.${k} must be ${expected(rule)}, got ${v}`,
        });
      } else known[table]![k] = v;
    }
  }
  const fileUrl = overrides.state?.url === undefined ? known.state?.url : undefined;
  if (typeof fileUrl === 'string' && fileUrl !== '')
    parseStateUrl(fileUrl, {
      source,
      setting: `[state] url in ${source}`,
      drop: 'delete the key',
      subject: 'state.url',
    });
  for (const [table, values] of Object.entries(overrides)) known[table] = { ...known[table], ...values };
  const fast = fastMerge(known, CONFIG_DEFAULTS);
  if (fast) return checkLeaseHeartbeat(fast as Config, source);
  const { configSchema } = await import('./schema.js');
  const r = configSchema.safeParse(known);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    throw new TugError('ConfigInvalid', {
      source,
      key: issue.path.join('.'),
      reason: `${issue.path.join('.')}: ${issue.message}`,
    });
  }
  return checkLeaseHeartbeat(r.data as Config, source);
}

export async function loadConfig(
  mainRoot: string,
  env: NodeJS.ProcessEnv = process.env,
  warnings?: WarningSink,
  debug?: string[],
): Promise<Config> {
  const file = join(mainRoot, CONFIG_FILE);
  const overrides = envOverrides(env);
  const hasFile = existsSync(file);
  // Names only: a value (a state URL) may carry a password.
  if (debug) {
    debug.push(hasFile ? `config: read ${file}` : `config: no ${CONFIG_FILE}, defaults`);
    const set = overrideNames(env);
    if (set.length) debug.push(`config: overridden by ${set.join(', ')}`);
  }
  if (!hasFile && Object.keys(overrides).length === 0) return structuredClone(CONFIG_DEFAULTS) as Config;
  let text = '';
  if (hasFile) {
    const r = readConfigFile(file);
    if ('reason' in r)
      throw new TugError('ConfigInvalid', {
        source: file,
        reason: r.reason,
        // A file too large is a regular file already: what helps is a shorter one.
        hint: r.reason.startsWith('larger than')
          ? 'shorten .tugtool/config.toml (is it the right file?), or remove it to use the defaults'
          : 'replace .tugtool/config.toml with a regular file, or remove it to use the defaults',
      });
    text = r.text;
  }
  // Fast path: the file `tugcode init` writes has every key commented out. Recognizing that needs neither
  // the TOML parser nor zod (about 20 ms of a CLI start, docs/quality.md §2).
  if (Object.keys(overrides).length === 0 && setsNothing(text)) return structuredClone(CONFIG_DEFAULTS) as Config;
  return parseConfigText(text, hasFile ? CONFIG_FILE : 'environment', warnings, overrides);
}

/** True when every line is blank, a comment, or a header of a known table: the file sets no value. */
export function setsNothing(text: string): boolean {
  return setsNoValue(text, (table) => table in CONFIG_KEYS);
}
