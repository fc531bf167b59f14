/**
 * The flags of a run that shape it, for the commands its hints name (docs/run.md §1.2): following
 * `then: tugcode run <plan> …` after a stop must run the plan the same way (same implementer, reviewer,
 * workers …). One-shot flags (`--dry-run`, `--board`, the globals such as `--json`) are left out; a
 * program path is made absolute (docs/run.md §2), and a secret in a command string is never repeated.
 */
import { TugError } from '../contract/errors.js';
import { run as runTable } from '../contract/inputs/run.js';
import { flagOf } from '../contract/inputs/fields.js';
import { tokenizeShell } from '../kernel/light.js';
import { shellArg } from '../util/shell-arg.js';
import { absoluteProgram } from './implementer.js';
import type { RunSummary } from './types.js';

/** Flags that show or check a run without shaping it, or act once (a move of the plan's integration). */
const ONE_SHOT = new Set(['plan', 'dry_run', 'board', 'move_integration']);
/** The flags whose value is a command string. */
const COMMANDS = new Set(['implementer', 'reviewer', 'resolver']);
/** The errors of a run whose hint runs the plan again (errors.ts `runAgain`). */
const RUN_AGAIN_CODES = new Set(['PlanIncomplete', 'BudgetExhausted', 'NeedsHuman', 'Interrupted']);

/** Whether a run's error hints at running the plan again (its codes, and a plan changed during the run). */
export function hintRunsAgain(e: { code: string; details: Record<string, unknown> }): boolean {
  return RUN_AGAIN_CODES.has(e.code) || (e.code === 'PlanDrift' && e.details.during_run === true);
}

export const REDACTED = '<redacted>';
const SECRET_NAME = /(token|secret|passw(or)?d|passwd|api[-_]?key|auth(?!or)|credential|private[-_]?key)/i;

/**
 * A command string with its secrets replaced by `<redacted>`: the value of `NAME=value` and of
 * `--name=value` / `--name value` when the name looks like a secret's, and a URL's password.
 */
export function redactCommand(text: string): string {
  const tok = tokenizeShell(text);
  if (!tok.ok) return text;
  let changed = false;
  const out = tok.tokens.map((t, i, all) => {
    let r = t.replace(/^([A-Za-z_][A-Za-z0-9_]*|--?[A-Za-z][A-Za-z0-9_-]*)=.+$/, (m, name: string) =>
      SECRET_NAME.test(name) ? `${name}=${REDACTED}` : m,
    );
    const prev = all[i - 1];
    if (r === t && prev !== undefined && /^--?[A-Za-z][A-Za-z0-9_-]*$/.test(prev) && SECRET_NAME.test(prev))
      r = REDACTED;
    r = r.replace(/(\w+:\/\/[^\s/:@]*):[^\s/@]+@/g, `$1:${REDACTED}@`);
    if (r !== t) changed = true;
    return r;
  });
  return changed ? out.map(shellArg).join(' ') : text;
}

/**
 * The argv words (unquoted) of the flags `input` sets that shape the run, in the order `tugcode run --help`
 * lists them; `cwd` is where a program path given by a flag is resolved. `dir`: the `-C DIR` the user gave
 * (absolute), first as `-C DIR`, which the hints put before the command (errors.ts `runAgain`).
 */
export function runFlags(input: object, cwd: string, dir?: string): string[] {
  const out: string[] = dir === undefined ? [] : ['-C', dir];
  for (const [name, field] of Object.entries(runTable.fields)) {
    const v = (input as Record<string, unknown>)[name];
    if (ONE_SHOT.has(name) || v === undefined || v === null || v === false) continue;
    const flag = flagOf(name, field);
    if (v === true) out.push(flag);
    else if (COMMANDS.has(name) && typeof v === 'string')
      out.push(flag, v === '' ? v : plainCommand(redactCommand(absoluteOrAsIs(v, cwd))));
    else out.push(flag, String(v));
  }
  return out;
}

/**
 * A command string re-quoted word by word (`"/tmp/a b/x.sh" --v` → `'/tmp/a b/x.sh' --v`): the same argv for
 * the tokenizer, and no quotes nested inside the hint's own quoting when none are needed.
 */
function plainCommand(text: string): string {
  const tok = tokenizeShell(text);
  return tok.ok ? tok.tokens.map(shellArg).join(' ') : text;
}

function absoluteOrAsIs(text: string, cwd: string): string {
  try {
    return absoluteProgram(text, cwd);
  } catch {
    return text; // an unparsable string is refused before the run; the hint then never shows
  }
}

/**
 * The summary with the run's flags in its error (`run_flags`) when that error's hint runs the plan again,
 * so the hint runs it the same way; any other summary as it is.
 */
export function withRunFlags(summary: RunSummary, flags: string[]): RunSummary {
  const e = summary.error;
  if (!e || !hintRunsAgain(e) || e.details.run_flags !== undefined) return summary;
  return { ...summary, error: new TugError(e.code as never, { ...e.details, run_flags: flags }).toJSON() };
}
