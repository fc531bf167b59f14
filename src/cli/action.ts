/**
 * Wraps a command body: builds the context, runs it, renders the envelope or text, and records the exit
 * code. Command bodies only map flags to library input and return data (style.md §5).
 */
import type { Command } from 'commander';
import { CliContext, type GlobalOptions } from './context.js';
import { renderError, renderOk, toTugError, type Rendered } from './output.js';

export interface CommandResult<T extends object = object> {
  data: T;
  /** Human rendering of the same data (no fact only in text). */
  text?: string;
  /** Override the exit code of a successful command (never used for errors). */
  exitCode?: number;
}

export type Body = (
  ctx: CliContext,
  args: string[],
  opts: Record<string, unknown>,
  cmd: Command,
) => Promise<CommandResult> | CommandResult;

/** Set by main.ts before parsing, so a body can tell whether its output is the whole story. */
export const outcome: { rendered?: Rendered } = {};

export function globalsOf(cmd: Command): GlobalOptions {
  const o = cmd.optsWithGlobals() as Record<string, unknown>;
  return {
    json: Boolean(o.json),
    quiet: Boolean(o.quiet),
    verbose: Boolean(o.verbose),
    dir: o.dir as string | undefined,
  };
}

export function action(name: string, body: Body): (...a: unknown[]) => Promise<void> {
  return async (...a: unknown[]) => {
    const cmd = a[a.length - 1] as Command;
    const opts = (a[a.length - 2] ?? {}) as Record<string, unknown>;
    const args = a.slice(0, -2).flatMap((v) => (Array.isArray(v) ? v : v === undefined ? [] : [v])) as string[];
    const globals = globalsOf(cmd);
    let ctx: CliContext | undefined;
    try {
      ctx = new CliContext(globals);
      // Test hook (NODE_ENV=test only): an unexpected exception, to test the top-level handler.
      if (process.env.NODE_ENV === 'test' && process.env.TUGCODE_FAULT === 'exception')
        throw new Error('injected fault');
      const r = await body(ctx, args, opts, cmd);
      const rendered = renderOk(name, r.data, ctx.warnings.items, globals.json, globals.quiet, r.text);
      if (r.exitCode !== undefined) rendered.exitCode = r.exitCode;
      outcome.rendered = rendered;
    } catch (e) {
      const err = toTugError(e, globals.verbose);
      if (globals.verbose && !(e as { code?: unknown })?.code && e instanceof Error && e.stack)
        process.stderr.write(e.stack + '\n');
      outcome.rendered = renderError(name, err, ctx?.warnings.items ?? [], globals.json);
    }
  };
}
