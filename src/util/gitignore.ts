/**
 * Idempotent line-appending for `.gitignore` and `info/exclude` (docs/git.md §2).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** The runtime files tugcode keeps out of every commit. */
export const RUNTIME_IGNORE_LINES = [
  '.tugtool/state.db',
  '.tugtool/state.db-wal',
  '.tugtool/state.db-shm',
  '.tugtree/',
  '.tug/',
  '.tugtool/logs/',
  '.tugtool/*.lock',
  '.tugtool/*.lock/',
] as const;

export const STATE_DB_IGNORE_LINES = RUNTIME_IGNORE_LINES.slice(0, 3);

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
