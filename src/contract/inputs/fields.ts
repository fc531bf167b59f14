/**
 * Input tables: one per operation, the single source of a command's arguments. The CLI builds its
 * commander options from a table and validates flags with it; the MCP server gets a zod schema built from
 * the same table (`inputSchema`), so a flag and its tool argument cannot disagree. Validation here is
 * zod-free, because the hot state commands must not pay zod's import (docs/quality.md §2).
 *
 * Errors name the argument the way the caller spelled it: `--lease-duration` for the CLI, `lease_seconds`
 * for a tool call (`Naming`).
 */
import { TugError } from '../errors.js';
import { quoted } from '../../util/quoted.js';

interface Base {
  description: string;
  /** Positional index (CLI) instead of a flag. */
  arg?: number;
  /** CLI flag name without value placeholder, e.g. `--lease-duration`; default `--<name with dashes>`. */
  flag?: string;
  /** Value placeholder in the CLI help, e.g. `<seconds>`. */
  placeholder?: string;
  required?: boolean;
  /** Not exposed outside the CLI (e.g. a read-from-file flag handled by the adapter). */
  cliOnly?: boolean;
  /**
   * A required field the command line may leave out: the operation then uses this default (said in the
   * help). A tool call has no current directory, so it must still give the field.
   */
  cliDefault?: string;
}
export interface StringField extends Base {
  type: 'string';
  /** Longest accepted value in code points (every text input has a bound). */
  max: number;
  /** A value starting with `-` is refused (it is almost always a flag given without its value). */
  noDash?: boolean;
  /** Refuse an empty (or whitespace-only) value. */
  nonEmpty?: boolean;
  /** CLI: `--x-file <path>` reads the value from a file, or `-` for stdin (read up to `max` bytes × 4). */
  fileFlag?: string;
  /** CLI: only the file flag exists (the text itself is too long for argv). */
  fileOnly?: boolean;
  /**
   * The values the operation accepts: a tool publishes them as an enum (and refuses any other); the command
   * line passes the text on and the operation refuses it with its own code (`InvalidStatus`).
   */
  oneOf?: readonly string[];
}
export interface IntField extends Base {
  type: 'int';
  min: number;
  max: number;
}
/** A decimal number (`--budget-usd 2.50`). */
export interface NumberField extends Base {
  type: 'number';
  min: number;
  max: number;
}
export interface BoolField extends Base {
  type: 'bool';
}
export interface EnumField extends Base {
  type: 'enum';
  values: readonly string[];
  default?: string;
}
export interface ListField extends Base {
  type: 'list';
  max: number;
  /** Most entries accepted. */
  maxItems: number;
}
/** Checklist item changes `[{kind, ordinal, status, reason?}]`; the state library checks each entry. */
export interface ItemsField extends Base {
  type: 'items';
}
export type Field = StringField | IntField | NumberField | BoolField | EnumField | ListField | ItemsField;

export interface InputTable {
  /** The operation's command name (`state claim`). */
  command: string;
  description: string;
  /** The tool's description when the CLI's names CLI-only flags (`--task ORD STATUS`). */
  toolDescription?: string;
  fields: Record<string, Field>;
}

export type Naming = 'cli' | 'tool';

export function flagOf(name: string, f: Field): string {
  return f.flag ?? '--' + name.replace(/_/g, '-');
}

/** A command line inside a text (`tugcode state claim … --worktree <wt>`, `tug snapshot`): its flags stay flags. */
const COMMAND_RE = /(\btug(?:code)? [^;()]*)/;

/**
 * A text written for the command line as a tool caller reads it: each flag of the table's tool fields
 * becomes the field's name (`--force reason must not be empty` → `force reason must not be empty`). The table
 * is the one owner of both spellings (`flagOf`); a CLI-only flag and a command line to run are left as they are.
 */
export function toolSpelling(table: InputTable, text: string): string {
  const names = new Map<string, string>();
  for (const [name, f] of Object.entries(table.fields))
    if (!f.cliOnly && f.arg === undefined) names.set(flagOf(name, f), name);
  return respell(names, text);
}

/** `text` with each flag of `names` (flag → field) spelled as its field, outside command lines. */
export function respell(names: ReadonlyMap<string, string>, text: string): string {
  return text
    .split(COMMAND_RE)
    .map((part, i) => (i % 2 === 1 ? part : part.replace(/--[a-z][a-z0-9-]*(?![a-z0-9-])/g, (m) => names.get(m) ?? m)))
    .join('');
}

/** A CLI-spelled error of a table's operation, respelled for a tool caller (message, reason, argument; not the hint). */
export function toolError(table: InputTable, e: TugError): TugError {
  const spell = (v: unknown) => (typeof v === 'string' ? toolSpelling(table, v) : v);
  const details = { ...e.details };
  for (const k of ['reason', 'argument'] as const) if (k in details) details[k] = spell(details[k]);
  const message = toolSpelling(table, e.message);
  if (message === e.message && JSON.stringify(details) === JSON.stringify(e.details)) return e;
  return new TugError(e.code, details, {
    message,
    ...(e.hint !== undefined ? { hint: e.hint } : {}),
    ...(e.text !== undefined ? { text: e.text } : {}),
    ...(e.cause !== undefined ? { cause: e.cause } : {}),
  });
}

function label(name: string, f: Field, naming: Naming): string {
  if (naming === 'tool') return name;
  return f.arg !== undefined ? `<${name}>` : flagOf(name, f);
}

function invalid(reason: string, argument: string): TugError {
  return new TugError('InvalidArgument', { reason, argument });
}

function codePoints(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** One value: a string from argv or any JSON value from a tool call → the typed value. */
function coerce(name: string, f: Field, v: unknown, naming: Naming): unknown {
  const what = label(name, f, naming);
  switch (f.type) {
    case 'bool':
      if (typeof v === 'boolean') return v;
      throw invalid(`${what} must be true or false, got ${quoted(v)}`, what);
    case 'int': {
      const s = typeof v === 'number' ? String(v) : typeof v === 'string' ? v.trim() : '';
      if (!/^\d+$/.test(s) || Number(s) < f.min || Number(s) > f.max)
        throw invalid(`${what} must be an integer from ${f.min} to ${f.max}, got ${quoted(v)}`, what);
      return Number(s);
    }
    case 'number': {
      const s = typeof v === 'number' ? String(v) : typeof v === 'string' ? v.trim() : '';
      if (!/^\d+(\.\d+)?$/.test(s) || Number(s) < f.min || Number(s) > f.max)
        throw invalid(`${what} must be a number from ${f.min} to ${f.max}, got ${quoted(v)}`, what);
      return Number(s);
    }
    case 'enum':
      if (typeof v === 'string' && f.values.includes(v)) return v;
      throw invalid(`${what} must be one of ${f.values.join(', ')}, got ${quoted(v)}`, what);
    case 'string': {
      if (typeof v !== 'string') throw invalid(`${what} must be a string, got ${quoted(v)}`, what);
      if (naming === 'tool' && f.oneOf && !f.oneOf.includes(v))
        throw invalid(`${what} must be one of ${f.oneOf.join(', ')}, got ${quoted(v)}`, what);
      checkText(what, f, v);
      return v;
    }
    case 'items':
      if (!Array.isArray(v)) throw invalid(`${what} must be an array of items`, what);
      if (v.length > 100_000) throw invalid(`${what} has more than 100000 entries`, what);
      return v;
    case 'list': {
      const list = Array.isArray(v) ? v : [v];
      if (list.length > f.maxItems) throw invalid(`${what} is given more than ${f.maxItems} times`, what);
      for (const x of list) {
        if (typeof x !== 'string') throw invalid(`${what} must be strings, got ${quoted(x)}`, what);
        checkText(what, { type: 'string', description: '', max: f.max }, x);
      }
      return list;
    }
  }
}

function checkText(what: string, f: StringField, v: string): void {
  if (v.includes('\0')) throw invalid(`${what} contains a NUL byte`, what);
  if (f.noDash && v.startsWith('-')) throw invalid(`${what} ${quoted(v)} looks like a flag`, what);
  if (f.nonEmpty && v.trim() === '') throw invalid(`${what} must not be empty`, what);
  if (v.length > f.max && codePoints(v) > f.max) throw invalid(`${what} is longer than ${f.max} characters`, what);
}

/**
 * Validate raw input against a table: unknown keys are refused (tool calls), required fields must be
 * present, each value is checked and converted. Returns a fresh object with only the table's fields.
 */
export function validateInput<T>(table: InputTable, raw: Record<string, unknown>, naming: Naming): T {
  const out: Record<string, unknown> = {};
  if (naming === 'tool') {
    for (const k of Object.keys(raw)) {
      const f = table.fields[k];
      if (!f || f.cliOnly) throw invalid(`${table.command} has no argument ${JSON.stringify(k)}`, k);
    }
  }
  for (const [name, f] of Object.entries(table.fields)) {
    const v = raw[name];
    if (v === undefined || v === null) {
      if (f.required && !(naming === 'cli' && f.cliDefault)) {
        const what = label(name, f, naming);
        if (naming === 'cli' && f.type === 'string' && f.fileFlag)
          throw invalid(`${what} (or ${f.fileFlag}) is required and must not be empty`, what);
        throw invalid(`${table.command} needs ${what}`, what);
      }
      if (f.type === 'enum' && f.default !== undefined) out[name] = f.default;
      continue;
    }
    out[name] = coerce(name, f, v, naming);
  }
  return out as T;
}
