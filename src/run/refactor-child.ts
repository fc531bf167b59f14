/**
 * A unit's declared refactors, run by `tugcode refactor run-step` as a child process (docs/run.md §5): the
 * kernel's work — a TypeScript rename is seconds of synchronous CPU in the language service — never holds
 * up the driver's event loop, so the other workers' heartbeats, the board beside the run and the signals go
 * on meanwhile. The child is the command an agent runs (docs/kernel.md §7.3), under the same claim.
 */
import { readFile } from 'node:fs/promises';
import { CLAIM_LOST_CODES, TugError, type ErrorCode } from '../contract/errors.js';
import { gitThreadOf } from '../git/git-thread.js';
import { stateDbPath } from '../state/context.js';
import { endedHow, runChild } from './child.js';
import { cliCommand } from './confine.js';
import { groupRecord } from './orphans.js';
import type { ChildOutcome } from './types.js';
import type { RunCtx } from './context.js';

export interface RefactorChildOptions {
  unit: string;
  attempt: number;
  tree: { worker: string; path: string };
  timeoutMs: number;
  signal: AbortSignal;
  /** stderr goes here, the JSON answer beside it (`.json`). */
  logPath: string;
}

/** What the driver needs of run-step's answer: its exit code and the error that stopped it. */
export interface RefactorOutcome {
  out: ChildOutcome;
  exit_code: number;
  error: { code: string; message: string } | null;
}

/**
 * Runs `tugcode refactor run-step <plan> <unit> --worktree W --attempt N` to its end. A refusal that means
 * the claim is lost (CLAIM_LOST_CODES) is thrown as that TugError, as the in-process call threw it.
 */
export async function runRefactorChild(rc: RunCtx, o: RefactorChildOptions): Promise<RefactorOutcome> {
  const cli = cliCommand();
  const stdoutPath = o.logPath.replace(/\.log$/, '') + '.json';
  const out = await runChild({
    argv: [
      cli.node,
      cli.script,
      'refactor',
      'run-step',
      rc.prep.planPath,
      o.unit,
      '--worktree',
      o.tree.path,
      '--attempt',
      String(o.attempt),
    ],
    cwd: o.tree.path,
    // The run's own database, resolved as the run resolved it (as the implementer gets it).
    env: { ...rc.ops.env, TUGCODE_STATE_DB: stateDbPath(rc.flow.repo.mainRoot, rc.ops.env) },
    timeoutMs: o.timeoutMs,
    logPath: o.logPath,
    stdoutPath,
    signal: o.signal,
    pidRecord: groupRecord(rc.flow.repo.mainRoot, rc.prep.slug, o.tree),
    thread: gitThreadOf(rc.ops.env),
  });
  const answer = await readAnswer(stdoutPath);
  const error = answer?.error ?? null;
  if (error && CLAIM_LOST_CODES.has(error.code as ErrorCode))
    throw new TugError(error.code as ErrorCode, error.details ?? {}, { message: error.message });
  if (out.ok) return { out, exit_code: 0, error: null };
  const ended = out.timed_out ? 'timed out' : out.spawn_error ? `could not start (${out.spawn_error})` : endedHow(out);
  return {
    out,
    exit_code: out.exit_code ?? 10,
    error: error
      ? { code: error.code, message: error.message }
      : { code: 'InternalError', message: `tugcode refactor run-step ${ended}: ${out.last_line}` },
  };
}

interface Answer {
  error?: { code: string; message: string; details?: Record<string, unknown> } | null;
}

/** run-step's one JSON document, or null when it printed none (killed, crashed). */
async function readAnswer(path: string): Promise<Answer | null> {
  try {
    const v = JSON.parse(await readFile(path, 'utf8')) as unknown;
    return v && typeof v === 'object' ? (v as Answer) : null;
  } catch {
    return null;
  }
}
