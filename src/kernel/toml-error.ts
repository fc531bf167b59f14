/**
 * A TOML syntax error of config.toml (or pyproject.toml) in the user's terms: where it is (line, column, the
 * table it is in) and what fixes it. The parser (smol-toml) gives the line and column; a redefinition is
 * explained from the text, since the natural mistake is appending a second `[run]` below the one `tugcode
 * init` writes. The one owner of this wording: the kernel's `[kernel]` reader and tugcode's config loader
 * both report through it (docs/kernel.md §3.1), so it lives in the lowest layer. Pure; loads nothing.
 */

export interface TomlErrorReport {
  /** The reason of the ConfigInvalid, after the file name. */
  reason: string;
  hint: string;
  line?: number;
  column?: number;
  /** The table the error is in (`[run]` → `run`), when known. */
  table?: string;
}

const HEADER = /^\s*\[\s*([^[\]]+?)\s*\]\s*(#.*)?$/;
const KEY = /^\s*([A-Za-z0-9_-]+)\s*=/;

/** The table header on each line (undefined where none), and the table each line is in ('' = top level). */
function tablesOf(lines: string[]): { header: (string | undefined)[]; within: string[] } {
  const header: (string | undefined)[] = [];
  const within: string[] = [];
  let cur = '';
  for (const l of lines) {
    const h = HEADER.exec(l)?.[1]?.replace(/\s*\.\s*/g, '.');
    if (h !== undefined) cur = h;
    header.push(h);
    within.push(cur);
  }
  return { header, within };
}

/** `error`: what the parser threw (its message's first line is the reason; `line`/`column` are 1-based). */
export function tomlErrorReport(error: unknown, text: string, source: string): TomlErrorReport {
  const e = error as { message?: string; line?: number; column?: number };
  const what = (e.message ?? String(error)).split('\n')[0]!.replace(/^Invalid TOML document:\s*/, '');
  const line = typeof e.line === 'number' ? e.line : undefined;
  const column = typeof e.column === 'number' ? e.column : undefined;
  if (line === undefined) return { reason: `malformed TOML: ${what}`, hint: `fix the TOML syntax of ${source}` };
  const lines = text.split(/\r?\n/);
  const { header, within } = tablesOf(lines);
  const i = line - 1;
  const table = within[i] || undefined;
  const where = `line ${line}${column === undefined ? '' : `, column ${column}`}`;
  const base = { line, ...(column === undefined ? {} : { column }), ...(table ? { table } : {}) };
  const syntax = {
    ...base,
    reason: `malformed TOML at ${where}${table ? ` (in [${table}])` : ''}: ${what}`,
    hint: `fix the TOML syntax at ${where} of ${source}`,
  };
  if (!/redefine/.test(what)) return syntax;

  const again = header[i];
  if (again !== undefined) {
    const first = header.findIndex((h, j) => j < i && h === again);
    if (first < 0) return syntax;
    return {
      ...base,
      table: again,
      reason: `malformed TOML at ${where}: [${again}] is defined twice (lines ${first + 1} and ${line})`,
      hint:
        `a table is written once: move the keys under the second [${again}] (line ${line}) into the [${again}] ` +
        `table at line ${first + 1}, then delete the header at line ${line}`,
    };
  }
  const key = KEY.exec(lines[i] ?? '')?.[1];
  if (key === undefined) return syntax;
  const first = lines.findIndex((l, j) => j < i && within[j] === within[i] && KEY.exec(l)?.[1] === key);
  if (first < 0) return syntax;
  const name = table ? `${table}.${key}` : key;
  return {
    ...base,
    reason: `malformed TOML at ${where}: ${name} is set twice (lines ${first + 1} and ${line})`,
    hint: `keep one of the two ${name} lines (${first + 1} and ${line}) of ${source}`,
  };
}
