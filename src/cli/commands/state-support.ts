/**
 * Helpers of the `tugcode state` command bodies: open the state context from the CLI context, validate
 * numbers, canonicalize `--worktree`, read stdin safely, and parse the per-item `update` flags from the raw
 * argv (commander's variadic options lose the grouping across repeats). Loaded lazily by the bodies.
 */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { TugError } from '../../contract/errors.js';
import { resolveWorktreeArg, type Repo } from '../../git/repo.js';
import { openStateContext, type OpenMode, type StateContext } from '../../state/context.js';
import { checkStatus, type ItemChange } from '../../state/update-input.js';
import type { ItemKind } from '../../state/status.js';
import type { CliContext } from '../context.js';

export async function openState(cli: CliContext, command: string, mode: OpenMode): Promise<{ ctx: StateContext; repo: Repo }> {
  const { repo, config } = await cli.load();
  const ctx = openStateContext({
    repoRoot: repo.mainRoot,
    workTree: repo.worktreeRoot,
    clock: cli.clock,
    config,
    warnings: cli.warnings,
    command,
    mode,
    env: cli.env,
    cwd: cli.cwd,
  });
  return { ctx, repo };
}

/** Runs `fn` with an open state context and always closes it. */
export async function withState<T>(cli: CliContext, command: string, mode: OpenMode, fn: (ctx: StateContext, repo: Repo) => Promise<T> | T): Promise<T> {
  const { ctx, repo } = await openState(cli, command, mode);
  try {
    return await fn(ctx, repo);
  } finally {
    if (ctx.store?.db.open) ctx.store.db.close();
  }
}

export function worktreeArg(repo: Repo, arg: string, cli: CliContext): string {
  return resolveWorktreeArg(repo, arg, cli.cwd);
}

/** A non-negative integer option within bounds; undefined when absent. */
export function intOpt(name: string, value: unknown, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  const s = String(value).trim();
  if (!/^\d+$/.test(s) || Number(s) < min || Number(s) > max) {
    throw new TugError('InvalidArgument', { reason: `${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`, argument: name });
  }
  return Number(s);
}

export const MAX_LEASE_SECONDS = 366 * 24 * 3600;

export function leaseOpt(value: unknown): number | undefined {
  return intOpt('--lease-duration', value, 1, MAX_LEASE_SECONDS);
}

export function attemptOpt(value: unknown): number | undefined {
  return intOpt('--attempt', value, 0, Number.MAX_SAFE_INTEGER);
}

/**
 * Read all of stdin (documented stdin inputs only): a TTY is InvalidArgument (never a hang), an empty
 * input is an error for the caller to name.
 */
export function readStdin(what: string): string {
  if (process.stdin.isTTY) {
    throw new TugError('InvalidArgument', { reason: `${what} reads stdin, but stdin is a terminal; pipe the input in` });
  }
  try {
    return readFileSync(0, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EAGAIN' || code === 'EOF') return '';
    throw new TugError('InvalidArgument', { reason: `cannot read stdin for ${what}: ${(e as Error).message}` });
  }
}

/** A file argument (`-` = stdin). */
export function readTextFile(flag: string, path: string): string {
  if (path === '-') return readStdin(flag);
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    throw new TugError('InvalidArgument', { reason: `${flag} ${path}: ${(e as Error).message}`, argument: flag });
  }
}

function rootOf(cmd: Command): Command {
  let c = cmd;
  while (c.parent) c = c.parent;
  return c;
}

const ITEM_FLAGS: Record<string, ItemKind> = { '--task': 'task', '--test': 'test', '--checkpoint': 'checkpoint' };

/**
 * `--task ORD STATUS` / `--task ORD:STATUS`, repeatable, likewise `--test` and `--checkpoint`: each flag
 * takes the tokens up to the next flag; one token `ORD:STATUS` or two tokens; anything else is
 * InvalidArgument.
 */
export function itemFlags(cmd: Command): ItemChange[] {
  // commander keeps the full user argv on the root command (not in its public typings).
  const argv = (rootOf(cmd) as unknown as { rawArgs: string[] }).rawArgs;
  const out: ItemChange[] = [];
  for (let i = 0; i < argv.length; i++) {
    const tok = argv[i]!;
    if (tok === '--') break;
    const eq = tok.indexOf('=');
    const flag = eq > 0 ? tok.slice(0, eq) : tok;
    const kind = ITEM_FLAGS[flag];
    if (!kind) continue;
    const values: string[] = eq > 0 ? [tok.slice(eq + 1)] : [];
    while (i + 1 < argv.length && !argv[i + 1]!.startsWith('-')) values.push(argv[++i]!);
    let ord: string | undefined;
    let status: string | undefined;
    if (values.length === 1 && values[0]!.includes(':')) [ord, status] = values[0]!.split(/:(.*)/s) as [string, string];
    else if (values.length === 2 && !values[0]!.includes(':')) [ord, status] = values as [string, string];
    else {
      throw new TugError('InvalidArgument', {
        reason: `${flag} takes ORD STATUS or ORD:STATUS, got ${values.length === 0 ? 'nothing' : JSON.stringify(values.join(' '))}`,
        argument: flag,
      });
    }
    if (!/^\d+$/.test(ord)) throw new TugError('InvalidArgument', { reason: `${flag}: the ordinal must be a non-negative integer, got ${JSON.stringify(ord)}`, argument: flag });
    out.push({ kind, ordinal: Number(ord), status: checkStatus(status, false) });
  }
  return out;
}

/** Colour only when stdout is a TTY and NO_COLOR is unset (02-state.md §5). */
export function useColor(env: NodeJS.ProcessEnv): boolean {
  return Boolean(process.stdout.isTTY) && (env.NO_COLOR === undefined || env.NO_COLOR === '');
}
