/**
 * Idempotent line-appending for `.gitignore` and `info/exclude` (docs/git.md §2); the runtime lines are
 * contract/layout.ts's.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** Append the lines not already present (exact line match, trimmed) to `file`; returns the lines added. */
export function ensureGitignoreLines(
  file: string,
  lines: readonly string[],
  header = '# tugcode runtime files',
): string[] {
  const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const present = new Set(text.split(/\r?\n/).map((l) => l.trim()));
  const missing = lines.filter((l) => !present.has(l));
  if (missing.length === 0) return [];
  const sep = text === '' || text.endsWith('\n') ? '' : '\n';
  const block = (present.has(header) ? '' : (text === '' ? '' : '\n') + header + '\n') + missing.join('\n') + '\n';
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text + sep + block);
  return missing;
}
