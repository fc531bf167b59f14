/**
 * One table per command drives the CLI (contract/inputs): commander's options and arguments are declared
 * from it, and flags are validated with it before the operation runs. The runner builds the process's one
 * OpsContext, calls the operation, renders the envelope or text, and keeps the result for main.ts (the
 * only place that writes and sets the exit code).
 */
import { resolve } from 'node:path';
import { Option, type Command } from 'commander';
import { flagOf, validateInput, type Field, type InputTable } from '../contract/inputs/fields.js';
import { MAX_INPUT_BYTES } from '../contract/inputs/limits.js';
import { TugError } from '../contract/errors.js';
import type { Call, OpsContext } from '../ops/context.js';
import { renderError, renderOk, streamsLines, toTugError, type Rendered } from './output.js';

export interface Globals {
  json: boolean;
  quiet: boolean;
  verbose: boolean;
  dir?: string | undefined;
}

/** What a text renderer or a CLI-only preparation may know about the invocation. */
export interface CliEnv {
  globals: Globals;
  env: NodeJS.ProcessEnv;
  now: () => string;
  /** Colour only when stdout is a TTY and NO_COLOR is unset (docs/state.md §5). */
  color: boolean;
  stdinIsTTY: boolean;
  stdoutIsTTY: boolean;
  cmd: Command;
  ctx: OpsContext;
}

export type OpFn<I, O> = (ctx: OpsContext, input: I, call: Call) => Promise<O>;

export interface CliCommand<I = any, O = any> {
  table: InputTable;
  /** The operation, loaded on first use (so `state heartbeat` loads only what it needs); absent with `loop`. */
  op?: () => Promise<OpFn<I, O>>;
  /** CLI-only inputs (stdin documents, raw argv) → fields, after the table's file flags were read. */
  prepare?: (raw: Record<string, unknown>, cli: CliEnv) => Promise<Record<string, unknown>> | Record<string, unknown>;
  /** Human rendering of the same data (no fact only in text); `input` is the validated input. */
  text?: (data: O, cli: CliEnv, input: I) => Promise<string> | string;
  /** Human text of an error on stdout (text mode only), when the error's details carry a result to show. */
  errorText?: (err: TugError, cli: CliEnv) => Promise<string | undefined> | string | undefined;
  /** The JSON document's fields, when not all of the result (a fact shown only as a side note in text). */
  json?: (data: O) => object;
  /** Instead of one result: a loop that renders frames itself (`state show --watch`); returns the exit code. */
  loop?: (input: I, cli: CliEnv) => Promise<number> | undefined;
  /**
   * A process that serves many calls for minutes (`tugcode run`): its PostgreSQL state rides out a lost
   * connection (a server restart) with retries instead of failing at once (docs/state.md §8).
   */
  longLived?: boolean;
}

/** `--lease-duration` → `leaseDuration` (commander's attribute name). */
function attr(flag: string): string {
  return flag.replace(/^--/, '').replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

const collect = (v: string, prev: string[] = []) => [...prev, v];

/**
 * The value commander parsed for `flag`. Commander stores a negated flag `--no-x` as `x: false` (and
 * defaults `x` to true), never as `noX`: a `--no-x` field is true only when `x` came out false.
 */
function optOf(opts: Record<string, unknown>, flag: string): unknown {
  const negated = /^--no-(.+)$/.exec(flag);
  if (negated) return opts[attr(`--${negated[1]}`)] === false ? true : undefined;
  return opts[attr(flag)];
}

function declare(c: Command, name: string, f: Field): void {
  if (f.arg !== undefined) return;
  const flag = flagOf(name, f);
  // A flag the table requires says so in the help (commander's requiredOption alone does not): with a
  // file flag beside it, either one will do.
  const required = !f.required
    ? ''
    : f.type === 'string' && f.fileFlag && !f.fileOnly
      ? ` (required: this or ${f.fileFlag})`
      : ' (required)';
  if (f.type === 'string' && f.fileOnly) {
    c.option(`${f.fileFlag} <path>`, `${f.description}; from a file, or - for stdin${required}`);
    return;
  }
  if (f.type === 'bool') {
    c.option(flag, f.description);
    return;
  }
  const spec = `${flag} ${f.placeholder ?? '<value>'}`;
  // A fixed set the operation checks itself (with its own error code): listed in the help, not refused here.
  const text =
    (f.type === 'string' && f.oneOf ? `${f.description} (one of: ${f.oneOf.join(', ')})` : f.description) +
    (f.cliDefault ? '' : required);
  if (f.type === 'enum') c.addOption(new Option(spec, text).choices([...f.values]));
  else if (f.type === 'list' && !(f.placeholder ?? '').includes('...')) c.option(spec, text, collect);
  else if (f.cliDefault) c.option(spec, `${text}; default: ${f.cliDefault}`);
  else if (f.required && !(f.type === 'string' && f.fileFlag)) c.requiredOption(spec, text);
  else c.option(spec, text);
  if (f.type === 'string' && f.fileFlag)
    c.option(`${f.fileFlag} <path>`, `read ${name.replace(/_/g, ' ')} from a file, or - for stdin`);
}

/** `state claim` + table → `claim <plan>` (with `[plan]` for an optional positional). */
function usageOf(table: InputTable): string {
  const word = table.command.split(' ').pop()!;
  const pos = Object.entries(table.fields)
    .filter(([, f]) => f.arg !== undefined)
    .sort((a, b) => a[1].arg! - b[1].arg!)
    .map(([n, f]) => {
      const v = f.type === 'list' ? `${n}...` : n;
      return f.required ? `<${v}>` : `[${v}]`;
    });
  return [word, ...pos].join(' ');
}

/** The raw values of a call: positionals, flags, and the text of `--x-file` flags (bounded reads). */
async function collectRaw(table: InputTable, args: unknown[], opts: Record<string, unknown>, cli: CliEnv) {
  const raw: Record<string, unknown> = {};
  const stdinReaders = Object.values(table.fields)
    .filter((f) => f.type === 'string' && f.fileFlag && opts[attr(f.fileFlag)] === '-')
    .map((f) => (f as { fileFlag: string }).fileFlag);
  if (stdinReaders.length > 1)
    throw new TugError('InvalidArgument', { reason: `only one of ${stdinReaders.join(' and ')} may read stdin` });
  for (const [name, f] of Object.entries(table.fields)) {
    if (f.arg !== undefined) {
      if (args[f.arg] !== undefined) raw[name] = args[f.arg];
      continue;
    }
    const direct = f.type === 'string' && f.fileOnly ? undefined : optOf(opts, flagOf(name, f));
    if (f.type === 'string' && f.fileFlag) {
      const file = opts[attr(f.fileFlag)] as string | undefined;
      if (file !== undefined) {
        if (direct !== undefined)
          throw new TugError('InvalidArgument', {
            reason: `pass either ${flagOf(name, f)} or ${f.fileFlag}, not both`,
          });
        const { readFileBounded } = await import('./read-input.js');
        const text = readFileBounded(f.fileFlag, file, Math.min(MAX_INPUT_BYTES, f.max * 4), cli.stdinIsTTY);
        if (file === '-' && text === '')
          throw new TugError('InvalidArgument', { reason: `${f.fileFlag} -: stdin is empty`, argument: f.fileFlag });
        raw[name] = text;
        continue;
      }
    }
    if (direct !== undefined) raw[name] = direct;
  }
  return raw;
}

/**
 * Operations name their arguments by field (`lease_seconds`); on the command line the user typed a flag.
 * An InvalidArgument whose `argument` is a field of the table is reworded with the flag.
 */
function withFlagNames(e: unknown, table: InputTable): unknown {
  if (!(e instanceof TugError) || e.code !== 'InvalidArgument') return e;
  const { argument, fields, ...rest } = e.details as { argument?: unknown; fields?: unknown } & Record<string, unknown>;
  const named = [...(Array.isArray(fields) ? fields : []), ...(typeof argument === 'string' ? [argument] : [])];
  const flagOfField = (n: string): string | null => {
    const f = table.fields[n];
    return f ? (f.arg !== undefined ? n : flagOf(n, f)) : null;
  };
  if (!named.some((n) => typeof n === 'string' && flagOfField(n))) return e;
  let reason = typeof rest.reason === 'string' ? rest.reason : undefined;
  for (const n of named) {
    const flag = typeof n === 'string' ? flagOfField(n) : null;
    if (flag && reason !== undefined) reason = reason.replace(new RegExp(`(^|[^\\w-])${n}\\b`), `$1${flag}`);
  }
  const details: Record<string, unknown> = { ...rest, ...(reason !== undefined ? { reason } : {}) };
  if (typeof argument === 'string') details.argument = flagOfField(argument) ?? argument;
  return new TugError('InvalidArgument', details, { hint: e.hint });
}

/** `err` with `text` for stdout; code, message, details and hint unchanged. */
function withText(err: TugError, text: string): TugError {
  return new TugError(err.code, err.details, {
    message: err.message,
    ...(err.hint !== undefined ? { hint: err.hint } : {}),
    ...(err.cause !== undefined ? { cause: err.cause } : {}),
    text,
  });
}

export class CliApp {
  rendered?: Rendered;

  constructor(
    readonly processCwd: string,
    readonly env: NodeJS.ProcessEnv,
    readonly io: { stdinIsTTY: boolean; stdoutIsTTY: boolean },
  ) {}

  /** Declares `spec` under `parent` (the program or a group) and wires its action. */
  register(parent: Command, spec: CliCommand): Command {
    const c = parent.command(usageOf(spec.table)).description(spec.table.description);
    for (const [name, f] of Object.entries(spec.table.fields)) declare(c, name, f);
    c.action((...a: unknown[]) => this.run(spec, a));
    return c;
  }

  private async run(spec: CliCommand, a: unknown[]): Promise<void> {
    const cmd = a[a.length - 1] as Command;
    const opts = (a[a.length - 2] ?? {}) as Record<string, unknown>;
    const args = a.slice(0, -2);
    const o = cmd.optsWithGlobals() as Record<string, unknown>;
    const globals: Globals = {
      json: Boolean(o.json),
      quiet: Boolean(o.quiet),
      verbose: Boolean(o.verbose),
      dir: o.dir as string | undefined,
    };
    const name = spec.table.command;
    const t0 = Date.now();
    const { OpsContext, newCall } = await import('../ops/context.js');
    const ctx = new OpsContext({
      cwd: resolve(this.processCwd, globals.dir ?? '.'),
      dir: globals.dir === undefined ? undefined : resolve(this.processCwd, globals.dir),
      env: this.env,
      ...(spec.longLived ? { longLived: true } : {}),
    });
    const call = newCall(name, 'cli', { debug: globals.verbose });
    const noColor = this.env.NO_COLOR !== undefined && this.env.NO_COLOR !== '';
    const io = this.io;
    // Getters: asking whether a stream is a TTY creates it (main.ts), which only some renderers need.
    const cli: CliEnv = {
      globals,
      env: this.env,
      now: () => ctx.clock.now(),
      get color() {
        return io.stdoutIsTTY && !noColor;
      },
      get stdinIsTTY() {
        return io.stdinIsTTY;
      },
      get stdoutIsTTY() {
        return io.stdoutIsTTY;
      },
      cmd,
      ctx,
    };
    try {
      // Test hook (NODE_ENV=test only): an unexpected exception, to test the top-level handler.
      if (this.env.NODE_ENV === 'test' && this.env.TUGCODE_FAULT === 'exception') throw new Error('injected fault');
      let raw = await collectRaw(spec.table, args, opts, cli);
      if (spec.prepare) raw = await spec.prepare(raw, cli);
      const input = validateInput(spec.table, raw, 'cli');
      const looped = spec.loop?.(input, cli);
      if (looped) {
        this.rendered = { stdout: '', stderr: '', exitCode: await looped };
        return;
      }
      if (!spec.op) throw new TugError('InternalError', { reason: `${name} has no operation` });
      const op = await spec.op();
      const data = await op(ctx, input, call);
      const text = spec.text && !globals.json && !globals.quiet ? await spec.text(data, cli, input) : undefined;
      const doc = spec.json ? spec.json(data) : (data as object);
      this.rendered = renderOk(name, doc, call.warnings.items, { json: globals.json, quiet: globals.quiet, text });
    } catch (e) {
      let err = toTugError(withFlagNames(e, spec.table), { verbose: globals.verbose });
      if (spec.errorText && !globals.json) {
        // A renderer that fails must not hide the error itself.
        const text = await Promise.resolve(spec.errorText(err, cli)).catch(() => undefined);
        if (text !== undefined) err = withText(err, text);
      }
      if (globals.verbose && !(e as { code?: unknown })?.code && e instanceof Error && e.stack)
        process.stderr.write(e.stack + '\n');
      const lines = streamsLines(name, Boolean(opts.dryRun)) ? { at: ctx.clock.now() } : undefined;
      this.rendered = renderError(name, err, call.warnings.items, { json: globals.json, lines });
    } finally {
      await ctx.close();
      if (call.debug && this.rendered) this.rendered.stderr = debugText(name, call.debug, t0) + this.rendered.stderr;
    }
  }
}

/**
 * `-v/--verbose` (docs/output.md §1): the call's debug lines and its elapsed time, before any other line of
 * stderr. Bounded: a command that collects many keeps the first ones.
 */
function debugText(command: string, lines: string[], t0: number): string {
  const MAX = 16;
  const shown = lines.length > MAX ? [...lines.slice(0, MAX), `… ${lines.length - MAX} more`] : lines;
  return [...shown, `${command}: ${Date.now() - t0} ms`].map((l) => `tugcode: debug: ${l}\n`).join('');
}
