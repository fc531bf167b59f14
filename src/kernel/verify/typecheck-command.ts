/**
 * The configured `typecheck_command` (docs/kernel.md §11.2–11.3): it replaces the built-in type checkers and
 * runs as the `typecheck-command` check. In `run` it has a baseline on the unpatched sandbox: it fails if it
 * exits non-zero where the baseline exited 0, or if new output lines appear once `:\d+(:\d+)?` positions are
 * stripped and the old and new names are replaced by `<renamed>`. In `verify`, any non-zero exit fails.
 */
import type { Diagnostic } from '../types.js';
import { runProcess, type ProcResult } from './checks.js';

export interface CommandBaseline {
  exit_code: number | null;
  lines: string[];
}

/** `{workspace}` becomes the sandbox root; `{python}` the configured interpreter, when there is one. */
export function expandArgv(argv: string[], root: string, python?: string): string[] {
  return argv.map((a) => a.replace(/\{workspace\}/g, root).replace(/\{python\}/g, python ?? 'python3'));
}

/** One output line as compared across runs: positions stripped, names substituted. */
function normalizeLine(raw: string, names: string[], root: string): string {
  let l = raw
    .split(root)
    .join('<WS>')
    .replace(/:\d+(:\d+)?/g, '')
    .trimEnd();
  for (const n of names)
    if (n) l = l.replace(new RegExp(`(?<![\\w$])${n.replace(/[$]/g, '\\$')}(?![\\w$])`, 'g'), '<renamed>');
  return l;
}

const rawLines = (output: string) => output.split(/\r?\n/).filter((l) => l.trim() !== '');

/** Normalized non-blank output lines (the baseline side). */
export function normalizedLines(output: string, names: string[], root: string): string[] {
  return rawLines(output).map((l) => normalizeLine(l, names, root));
}

/** Raw lines of `after` whose normalized form the baseline multiset lacks. */
export function newLines(baseline: string[], after: string, names: string[], root: string): string[] {
  const counts = new Map<string, number>();
  for (const l of baseline) counts.set(l, (counts.get(l) ?? 0) + 1);
  const out: string[] = [];
  for (const raw of rawLines(after)) {
    const l = normalizeLine(raw, names, root);
    const c = counts.get(l) ?? 0;
    if (c > 0) counts.set(l, c - 1);
    else out.push(raw);
  }
  return out;
}

const DIAG_LINE = [
  /^(.+?)\((\d+),(\d+)\): (?:error )?(TS\d+)?:? ?(.*)$/,
  /^(.+?):(\d+)(?::(\d+))?: (?:(?:error|warning)(?:\[(\w+)\])?: )?(.*)$/,
];

/** Best-effort diagnostics from raw output lines (`file(l,c): …` or `file:l:c: …`). */
export function diagnosticsOf(output: string, root: string): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const raw of output.split(/\r?\n/)) {
    const line = raw.split(root + '/').join('');
    for (const re of DIAG_LINE) {
      const m = re.exec(line);
      if (!m) continue;
      out.push({
        file: m[1]!,
        line: Number(m[2]),
        col: m[3] ? Number(m[3]) : null,
        code: m[4] ?? null,
        message: m[5]!,
      });
      break;
    }
  }
  return out;
}

export async function runTypecheckCommand(
  argv: string[],
  root: string,
  timeoutMs: number,
  python: string | undefined,
  env: Record<string, string | undefined>,
): Promise<ProcResult & { duration_ms: number }> {
  const t0 = Date.now();
  const p = await runProcess(expandArgv(argv, root, python), root, timeoutMs, env);
  return { ...p, duration_ms: Date.now() - t0 };
}

/** Decide a patched run against its baseline: failed, with the new lines, or passed. */
export function judge(
  base: CommandBaseline | null,
  after: ProcResult,
  names: string[],
  root: string,
): { failed: boolean; fresh: string[]; reason: string | null } {
  if (after.timed_out) return { failed: true, fresh: rawLines(after.output), reason: 'timed out' };
  if (!base)
    return after.exit_code !== 0
      ? { failed: true, fresh: rawLines(after.output), reason: `exit code ${after.exit_code}` }
      : { failed: false, fresh: [], reason: null };
  const fresh = newLines(base.lines, after.output, names, root);
  if (after.exit_code !== 0 && base.exit_code === 0)
    return { failed: true, fresh, reason: `exit code ${after.exit_code} (baseline 0)` };
  if (fresh.length > 0) return { failed: true, fresh, reason: `${fresh.length} new output line(s)` };
  return { failed: false, fresh: [], reason: null };
}
