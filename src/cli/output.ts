/**
 * Turns results and errors into output (docs/output.md §1): one JSON document on stdout under --json,
 * human text otherwise; diagnostics and warnings on stderr.
 */
import { fail, ok, warningLines, type Warning } from '../contract/envelope.js';
import { TugError } from '../contract/errors.js';

export interface Rendered {
  stdout: string;
  stderr: string;
  exitCode: number;
}

/** `json`: the envelope on stdout; else `text` (nothing under `quiet`), warnings on stderr. */
export function renderOk(
  command: string,
  data: object,
  warnings: Warning[],
  o: { json: boolean; quiet: boolean; text?: string | undefined },
): Rendered {
  const { json, quiet, text } = o;
  if (json) {
    return { stdout: JSON.stringify(ok(command, data, warnings), null, 2) + '\n', stderr: '', exitCode: 0 };
  }
  const stderr = warningLines(warnings)
    .map((l) => l + '\n')
    .join('');
  const body = quiet ? '' : (text ?? '');
  return { stdout: body === '' || body.endsWith('\n') ? body : body + '\n', stderr, exitCode: 0 };
}

/**
 * `lines` (`run`/`demo --json`, which write JSON Lines, docs/output.md §1): the error is the stream's one
 * `summary` line, as when a run fails before its workers start (docs/run.md §1).
 */
export function renderError(
  command: string,
  err: TugError,
  warnings: Warning[],
  o: { json: boolean; lines?: { at: string } | undefined },
): Rendered {
  const { json, lines } = o;
  let stderr = json
    ? ''
    : warningLines(warnings)
        .map((l) => l + '\n')
        .join('');
  stderr += `tugcode: ${err.code}: ${err.message.replace(/\n/g, ' ')}\n`;
  if (err.hint) stderr += `hint: ${err.hint}\n`;
  const stdout = !json
    ? err.text
      ? err.text.replace(/\n?$/, '\n')
      : ''
    : lines
      ? JSON.stringify({ type: 'summary', at: lines.at, ...emptySummary(err, 0) }) + '\n'
      : JSON.stringify(fail(command, err, warnings), null, 2) + '\n';
  return { stdout, stderr, exitCode: err.exitCode };
}

/** The summary of a run that failed before any step: nothing done, the error. */
export function emptySummary(err: TugError, wall_ms: number) {
  return {
    status: 'error' as const,
    steps_completed: [],
    failed_steps: [],
    blocked_steps: [],
    commits: [],
    wall_ms,
    workers: [],
    error: err.toJSON(),
  };
}

/** Whether `command` with these options streams JSON Lines (`run`, `demo`; not `run --dry-run`). */
export function streamsLines(command: string, dryRun: boolean): boolean {
  return command === 'demo' || (command === 'run' && !dryRun);
}

export { toTugError } from '../contract/errors.js';
