/**
 * Runtime files (state.db, logs, locks, kernel sessions, worktrees) never enter a step commit
 * (docs/git.md §2). Two layers: the shared `info/exclude` carries the ignore lines (so they hold before
 * `.gitignore` is committed), and every status/add of tugcode also passes exclude pathspecs, so even
 * a repository without either file never stages them.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureGitignoreLines, RUNTIME_IGNORE_LINES } from '../util/gitignore.js';

/** Exclude pathspecs equivalent to RUNTIME_IGNORE_LINES, for `git status`/`git add -A`. */
export const RUNTIME_EXCLUDE_PATHSPECS = [
  ':(exclude).tugtool/state.db',
  ':(exclude).tugtool/state.db-wal',
  ':(exclude).tugtool/state.db-shm',
  ':(exclude).tugtree',
  ':(exclude).tug',
  ':(exclude).tugtool/logs',
  ':(exclude,glob).tugtool/*.lock',
  ':(exclude,glob).tugtool/*.lock/**',
];

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
