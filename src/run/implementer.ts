/**
 * The implementer protocol (docs/run.md §2): one run of the configured command for one step, in the worker's
 * worktree, in its own process group, with the step timeout, the TUG_* environment and the step brief on
 * stdin and in the file TUG_STEP_JSON names.
 */
import { constants } from 'node:fs';
import { access, mkdir, open, rm, stat, writeFile } from 'node:fs/promises';
import { delimiter, dirname, isAbsolute, join, resolve } from 'node:path';
import { invalidArgument, TugError } from '../contract/errors.js';
import { warning } from '../contract/warnings.js';
import { tokenizeShell } from '../kernel/light.js';
import { shellArg } from '../util/shell-arg.js';
import { runChild } from './child.js';
import type { ChildOutcome, StepBrief } from './types.js';
import { parseUsageFile, USAGE_FILE_MAX, type Usage } from './usage.js';

/** What a run reported of its usage (docs/run.md §7.1): null when nothing; a warning when unreadable. */
export interface UsageReport {
  usage: Usage | null;
  usage_warning: string | null;
  /**
   * The `TUG_USAGE_OUT` file it was read from: the ledger removes it once handled, so a report left on disk
   * is one a run killed outright did not record, which the next run records (docs/run.md §7.1) — twice only
   * if the kill fell between the state's write and the file's removal.
   */
  usage_file?: string | undefined;
}

/** What the implementer's environment says beyond the brief (step, title, attempt and plan come from it). */
export interface ImplementerVars {
  /** The worker's worktree (absolute): TUG_WORKTREE, and the base of TUG_PLAN_ABS. */
  worktree: string;
  /** The main checkout's root (absolute): TUG_REPO_ROOT. */
  repo_root: string;
  /** The state.db path: TUG_STATE_DB and TUGCODE_STATE_DB. */
  state_db: string;
}

export interface ImplementerOptions {
  /** The command as one string, split shell-style (quotes honoured, nothing expanded). */
  argv: string;
  cwd: string;
  /** The environment the TUG_* variables are added to (the caller's, e.g. the driver's env). */
  baseEnv: NodeJS.ProcessEnv;
  vars: ImplementerVars;
  brief: StepBrief;
  /** Where the brief's JSON is written (TUG_STEP_JSON); its directory is created. */
  briefPath: string;
  timeoutMs: number;
  /** stdout+stderr are appended here (`.tugtool/logs/<slug>/<step>-attempt<N>.log`). */
  logPath: string;
  signal?: AbortSignal;
  /** Names the implementer's process group once it runs (run/child.ts). */
  pidRecord?: import('../git/git-thread.js').PidRecord;
  /** What the command is, for an error naming it (`--implementer`, `the resolver`); default the implementer. */
  role?: string;
  /** `[run] agent_allow`: command patterns an agent preset may run besides its own (docs/agents.md §1.3). */
  agentAllow?: string[];
  /** The run's thread to start the command from (run/child.ts). */
  thread?: import('../git/git-thread.js').GitThread | undefined;
}

/**
 * The implementer's argv from its configured string. A shell runs only when the string names one
 * (`sh -c "…"`): there is no implicit shell. Empty or unparsable → InvalidArgument.
 */
export function implementerArgv(text: string, what = 'the implementer command'): string[] {
  const tok = tokenizeShell(text);
  if (!tok.ok) throw invalidArgument(`${what} cannot be parsed: ${tok.reason}`, { implementer: text });
  if (tok.tokens.length === 0 || tok.tokens[0] === '') throw invalidArgument(`${what} is empty`, { implementer: text });
  return tok.tokens;
}

/**
 * The command string with its program made absolute (docs/run.md §2): a program named with a slash
 * (`./impl.sh`, `scripts/x.sh`) is resolved against `base` (where the user ran tugcode for a flag, the
 * repository root for a config value), since the command runs in a worker's worktree; a bare name is left
 * to PATH. The string is returned as it is when nothing changes, else rebuilt from its words, each quoted
 * so the tokenizer reads it back.
 */
export function absoluteProgram(text: string, base: string, what?: string): string {
  const argv = implementerArgv(text, what);
  const program = argv[0]!;
  if (!program.includes('/') || isAbsolute(program)) return text;
  return [resolve(base, program), ...argv.slice(1)].map(shellArg).join(' ');
}

/**
 * Why `program` cannot be started, or null when it can: a path must be an executable file; a bare name
 * must be one in a directory of `env.PATH` (the lookup the spawn does).
 */
export async function programProblem(
  program: string,
  env: NodeJS.ProcessEnv,
): Promise<{ reason: string; path?: string } | null> {
  const runnable = async (path: string): Promise<string | null> => {
    const st = await stat(path).catch(() => null);
    if (!st) return 'does not exist';
    if (st.isDirectory()) return 'is a directory';
    return (await access(path, constants.X_OK).then(
      () => true,
      () => false,
    ))
      ? null
      : 'is not executable';
  };
  if (program.includes('/')) {
    const why = await runnable(program);
    return why === null ? null : { reason: why, path: program };
  }
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir === '') continue;
    if ((await runnable(join(dir, program))) === null) return null;
  }
  return { reason: 'is not on PATH' };
}

/**
 * A child whose program could not be started at all (ENOENT, EACCES) would fail every attempt of every
 * step the same way: the run stops with ProgramNotRunnable instead (docs/run.md §2).
 */
export function throwIfNotStarted(
  out: ChildOutcome,
  program: string,
  argument: string,
  o: { preset?: boolean } = {},
): void {
  if (out.spawn_error === undefined) return;
  // A bare name the spawn did not find is one not on PATH (not installed): its hint says so, not `ls -l`.
  const reason =
    out.spawn_error === 'ENOENT'
      ? program.includes('/')
        ? 'does not exist'
        : 'is not on PATH'
      : out.spawn_error === 'EACCES'
        ? 'is not executable'
        : `cannot be started (${out.spawn_error})`;
  throw new TugError('ProgramNotRunnable', {
    argument,
    program,
    reason,
    spawn_error: out.spawn_error,
    ...(o.preset ? { preset: true } : {}),
  });
}

/** The warning of a run without an implementer (docs/run.md §2): allowed, never silent. */
export const NO_IMPLEMENTER = warning(
  'NoImplementer',
  'no implementer (--implementer, --agent, run.implementer or run.agent): each step is done by its refactors ' +
    'and command checkpoints alone, and its remaining items are marked completed',
);

/** The implementer's complete environment: baseEnv plus the TUG_* variables of docs/run.md §2 (these win). */
export function implementerEnv(
  baseEnv: NodeJS.ProcessEnv,
  vars: ImplementerVars,
  brief: StepBrief,
  briefPath: string,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(baseEnv)) if (v !== undefined) env[k] = v;
  return Object.assign(env, {
    TUG_PLAN: brief.plan_path,
    TUG_PLAN_ABS: join(vars.worktree, brief.plan_path),
    TUG_STEP: brief.step_anchor,
    TUG_STEP_TITLE: brief.title,
    TUG_ATTEMPT: String(brief.attempt),
    TUG_WORKTREE: vars.worktree,
    TUG_REPO_ROOT: vars.repo_root,
    TUG_STATE_DB: vars.state_db,
    TUGCODE_STATE_DB: vars.state_db,
    TUG_STEP_JSON: briefPath,
    TUG_USAGE_OUT: usageOutPath(briefPath),
  });
}

/** The file `TUG_USAGE_OUT` names for a run whose brief is at `briefPath`: beside it, one per run. */
export function usageOutPath(briefPath: string): string {
  return briefPath.replace(/\.json$/, '') + '.usage.json';
}

/** Removes an earlier run's usage file: a run that writes none must not report the last one's. */
export async function clearUsageOut(briefPath: string): Promise<void> {
  await rm(usageOutPath(briefPath), { force: true }).catch(() => undefined);
}

/**
 * The usage the run wrote to `TUG_USAGE_OUT`, read once it ended: none when the file does not exist, a
 * warning (never a failure) when it is bigger than USAGE_FILE_MAX or not a usage object.
 */
export async function readUsageOut(briefPath: string): Promise<UsageReport> {
  const path = usageOutPath(briefPath);
  let f: Awaited<ReturnType<typeof open>>;
  try {
    f = await open(path, 'r');
  } catch {
    return { usage: null, usage_warning: null };
  }
  try {
    const size = (await f.stat()).size;
    if (size > USAGE_FILE_MAX)
      return {
        usage: null,
        usage_warning: `${path} is ${size} bytes (at most ${USAGE_FILE_MAX}): ignored`,
        usage_file: path,
      };
    const buf = Buffer.alloc(size);
    if (size > 0) await f.read(buf, 0, size, 0);
    const r = parseUsageFile(buf.toString('utf8'));
    return 'reason' in r
      ? { usage: null, usage_warning: `${path}: ${r.reason}: ignored`, usage_file: path }
      : { usage: r.usage, usage_warning: null, usage_file: path };
  } finally {
    await f.close();
  }
}

/**
 * Runs the implementer once for a step, with what it reported through `TUG_USAGE_OUT`. Throws only for a
 * bad argv string, an unwritable brief/log, or a program that could not be started (ProgramNotRunnable).
 */
export async function runImplementer(o: ImplementerOptions): Promise<ChildOutcome & UsageReport> {
  const argv = implementerArgv(o.argv);
  const json = JSON.stringify(o.brief, null, 2) + '\n';
  await mkdir(dirname(o.briefPath), { recursive: true });
  await writeFile(o.briefPath, json);
  await clearUsageOut(o.briefPath);
  const out = await runChild({
    argv,
    cwd: o.cwd,
    env: implementerEnv(o.baseEnv, o.vars, o.brief, o.briefPath),
    input: json,
    timeoutMs: o.timeoutMs,
    logPath: o.logPath,
    ...(o.signal ? { signal: o.signal } : {}),
    ...(o.pidRecord ? { pidRecord: o.pidRecord } : {}),
    thread: o.thread,
  });
  throwIfNotStarted(out, argv[0]!, o.role ?? 'the implementer');
  return { ...out, ...(await readUsageOut(o.briefPath)) };
}
