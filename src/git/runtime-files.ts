/**
 * Runtime files (state.db, logs, locks, kernel sessions, worktrees) never enter a step commit
 * (docs/git.md §2). Two layers: the shared `info/exclude` carries the ignore lines (so they hold before
 * `.gitignore` is committed), and every status/add of tugcode also passes exclude pathspecs, so even
 * a repository without either file never stages them.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RUNTIME_EXCLUDE_PATHSPECS, RUNTIME_IGNORE_LINES } from '../contract/layout.js';
import { ensureGitignoreLines } from '../util/gitignore.js';

/** Pathspec for "everything but the runtime files". */
export const ALL_BUT_RUNTIME = ['.', ...RUNTIME_EXCLUDE_PATHSPECS];

export interface ExcludeUndo {
  added: string[];
  undo(): void;
}

/** Make sure `<common dir>/info/exclude` holds the runtime ignore lines; returns how to undo it. */
export function ensureRuntimeExclude(commonDir: string): ExcludeUndo {
  const file = join(commonDir, 'info', 'exclude');
  const existed = existsSync(file);
  const before = existed ? readFileSync(file) : null;
  const added = ensureGitignoreLines(file, RUNTIME_IGNORE_LINES);
  return {
    added,
    undo: () => {
      if (added.length === 0) return;
      if (before) writeFileSync(file, before);
      else rmSync(file, { force: true });
    },
  };
}
