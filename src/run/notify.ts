/**
 * `[run] notify = "<argv>"` (docs/run.md §7.4): a command run for each event a person should hear about —
 * `needs_human`, `step_failed` (a step failed at its attempt cap), `stalled`, `budget_exhausted` and
 * `run_finished` — with the event's JSON on stdin. Split like the implementer command (no implicit shell),
 * run in its own process group with a 10 s timeout (the group is killed), its output appended to
 * `.tugtool/logs/<slug>/notify.log`. It never fails the run and never holds up a worker: `event` only
 * starts it; a failure or a timeout is a warning. The run waits for the ones still running (at most the
 * timeout) before its own `run_finished`, which it also waits for.
 */
import { join } from 'node:path';
import { runChild, endedHow } from './child.js';
import { implementerArgv } from './implementer.js';
import type { WarningSinkCode } from '../contract/warnings.js';

/** The events that run the notify command. */
export const NOTIFY_EVENTS = ['needs_human', 'step_failed', 'stalled', 'budget_exhausted', 'run_finished'] as const;

export const NOTIFY_TIMEOUT_MS = 10_000;
/** SIGTERM to SIGKILL of a notify command that outlived its timeout. */
const NOTIFY_GRACE_MS = 1000;

export interface Notifier {
  /** Starts the command for `e` when its type is one of NOTIFY_EVENTS; returns at once. */
  event(e: { type: string }): void;
  /** Waits for the commands still running, then runs `last` (run_finished) and waits for it. */
  finish(last: { type: string; [k: string]: unknown }): Promise<void>;
}

export interface NotifyOptions {
  /** The `[run] notify` string. */
  command: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** The run's plan: named in every event the command gets (a person may have several runs going). */
  planPath: string;
  /** `.tugtool/logs/<slug>/`: notify.log goes there. */
  logDir: string;
  warn(code: WarningSinkCode, message: string): void;
}

/** A notifier for `o.command`; null when it is empty. An unparsable command is InvalidArgument at once. */
export function startNotifier(o: NotifyOptions): Notifier | null {
  if (o.command.trim() === '') return null;
  const argv = implementerArgv(o.command);
  const logPath = join(o.logDir, 'notify.log');
  const env: Record<string, string | undefined> = { ...o.env };
  const pending = new Set<Promise<void>>();
  const wanted = new Set<string>(NOTIFY_EVENTS);
  const run = (e: { type: string }): Promise<void> => {
    const p = runChild({
      argv,
      cwd: o.cwd,
      env: { ...env, TUG_EVENT: e.type },
      input: JSON.stringify({ ...e, plan_path: o.planPath }) + '\n',
      timeoutMs: NOTIFY_TIMEOUT_MS,
      graceMs: NOTIFY_GRACE_MS,
      logPath,
    })
      .then((out) => {
        if (out.ok) return;
        const how = out.timed_out ? `ran past ${NOTIFY_TIMEOUT_MS / 1000} s and was killed` : endedHow(out);
        o.warn('NotifyFailed', `notify for ${e.type}: ${argv[0]} ${how}${out.last_line ? `: ${out.last_line}` : ''}`);
      })
      .catch((err: unknown) => o.warn('NotifyFailed', `notify for ${e.type}: ${(err as Error).message}`))
      .finally(() => pending.delete(p));
    pending.add(p);
    return p;
  };
  return {
    event(e) {
      if (e.type !== 'run_finished' && wanted.has(e.type)) void run(e);
    },
    async finish(last) {
      await Promise.all([...pending]);
      await run(last);
    },
  };
}
