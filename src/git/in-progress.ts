/**
 * The git operation a work tree is in the middle of (a rebase, `git am`, merge, cherry-pick or revert stopped on a
 * conflict, an `edit`, or a killed process), read from its git directory without a git process: git keeps
 * it there until `--continue` or `--abort`.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { gitDirsOf } from './dot-git.js';

export type GitOperation = 'rebase' | 'am' | 'merge' | 'cherry-pick' | 'revert';

const MARKERS: [string, GitOperation][] = [
  ['rebase-merge', 'rebase'],
  ['rebase-apply', 'rebase'],
  ['MERGE_HEAD', 'merge'],
  ['CHERRY_PICK_HEAD', 'cherry-pick'],
  ['REVERT_HEAD', 'revert'],
];

/** The operation in progress in the work tree `W`, or null (also when its `.git` cannot be read). */
export function operationInProgress(W: string): GitOperation | null {
  const dirs = gitDirsOf(W);
  if (!dirs) return null;
  const op = MARKERS.find(([f]) => existsSync(join(dirs.gitDir, f)))?.[1] ?? null;
  // `git am` keeps its state in rebase-apply too, marked by `applying`: its way out is `git am --continue`.
  return op === 'rebase' && existsSync(join(dirs.gitDir, 'rebase-apply', 'applying')) ? 'am' : op;
}
