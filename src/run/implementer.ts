/**
 * The implementer protocol (docs/run.md §2): one run of the configured command for one step, in the worker's
 * worktree, in its own process group, with the step timeout, the TUG_* environment and the step brief on
 * stdin and in the file TUG_STEP_JSON names.
 */
import { mkdir, open, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { invalidArgument } from '../contract/errors.js';
import { tokenizeShell } from '../kernel/light.js';
import { runChild } from './child.js';
import type { ChildOutcome, StepBrief } from './types.js';
import { parseUsageFile, USAGE_FILE_MAX, type Usage } from './usage.js';

/** What a run reported of its usage (docs/run.md §7.1): null when nothing; a warning when unreadable. */
export interface UsageReport {
  usage: Usage | null;
  usage_warning: string | null;
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
  /** Told the implementer's process group id once it runs. */
  onSpawn?: (pid: number) => void;
  /** `[run] agent_allow`: command patterns an agent preset may run besides its own (docs/agents.md §1.3). */
  agentAllow?: string[];
}

/**
 * The implementer's argv from its configured string. A shell runs only when the string names one
 * (`sh -c "…"`): there is no implicit shell. Empty or unparsable → InvalidArgument.
 */
export function implementerArgv(text: string): string[] {
  const tok = tokenizeShell(text);
  if (!tok.ok) throw invalidArgument(`the implementer command cannot be parsed: ${tok.reason}`, { implementer: text });
  if (tok.tokens.length === 0 || tok.tokens[0] === '')
    throw invalidArgument('the implementer command is empty', { implementer: text });
  return tok.tokens;
}

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
      return { usage: null, usage_warning: `${path} is ${size} bytes (at most ${USAGE_FILE_MAX}): ignored` };
    const buf = Buffer.alloc(size);
    if (size > 0) await f.read(buf, 0, size, 0);
    const r = parseUsageFile(buf.toString('utf8'));
    return 'reason' in r
      ? { usage: null, usage_warning: `${path}: ${r.reason}: ignored` }
      : { usage: r.usage, usage_warning: null };
  } finally {
    await f.close();
  }
}

/**
 * Runs the implementer once for a step, with what it reported through `TUG_USAGE_OUT`. Throws only for a
 * bad argv string or an unwritable brief/log.
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
    ...(o.onSpawn ? { onSpawn: o.onSpawn } : {}),
  });
  return { ...out, ...(await readUsageOut(o.briefPath)) };
}
