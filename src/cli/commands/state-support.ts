/**
 * Helpers of the `tugcode state` command bodies: open the state context from the CLI context, validate
 * numbers, canonicalize `--worktree`, read stdin safely. Loaded lazily by the bodies; kept small, since
 * every state command loads it.
 */
import { readFileSync } from 'node:fs';
import { TugError } from '../../contract/errors.js';
import { resolveWorktreeArg, type Repo } from '../../git/repo.js';
import { openStateContext, type OpenMode, type StateContext } from '../../state/context.js';
import type { CliContext } from '../context.js';

export async function openState(
  cli: CliContext,
  command: string,
  mode: OpenMode,
): Promise<{ ctx: StateContext; repo: Repo }> {
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
export async function withState<T>(
  cli: CliContext,
  command: string,
  mode: OpenMode,
  fn: (ctx: StateContext, repo: Repo) => Promise<T> | T,
): Promise<T> {
  const { ctx, repo } = await openState(cli, command, mode);
  try {
    return await fn(ctx, repo);
  } finally {
    if (ctx.store?.db.open) ctx.store.db.close();
  }
}

export function worktreeArg(repo: Repo, arg: string, cli: CliContext): string {
  return resolveWorktreeArg(repo, arg, cli.cwd, cli.env);
}

/** A non-negative integer option within bounds; undefined when absent. */
export function intOpt(name: string, value: unknown, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  const s = String(value).trim();
  if (!/^\d+$/.test(s) || Number(s) < min || Number(s) > max) {
    throw new TugError('InvalidArgument', {
      reason: `${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`,
      argument: name,
    });
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
    throw new TugError('InvalidArgument', {
      reason: `${what} reads stdin, but stdin is a terminal; pipe the input in`,
    });
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

/** Colour only when stdout is a TTY and NO_COLOR is unset (02-state.md §5). */
export function useColor(env: NodeJS.ProcessEnv): boolean {
  return Boolean(process.stdout.isTTY) && (env.NO_COLOR === undefined || env.NO_COLOR === '');
}
