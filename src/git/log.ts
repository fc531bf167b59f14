/**
 * Git facts the state commands and flows gather before their state transactions: commits carrying Tug
 * trailers (for `state reconcile`), local branches, branch tips. The synchronous forms serve the hot state
 * commands and live in fast.ts (re-exported here); flows use the asynchronous ones below.
 */
import type { GitRunner } from './exec.js';
import { trailerLogArgs } from './fast.js';
import { parseTrailerLog, type TrailerCommit } from './trailers.js';

export { branchTipFast, listTrailerCommits, localBranches, resolveCommitish } from './fast.js';

/** Commits reachable from `refs` (deduplicated by git) with Tug-Step trailers, newest first. */
export async function readTrailerCommits(
  g: GitRunner,
  cwd: string,
  refs: string[],
): Promise<{ scanned: number; commits: TrailerCommit[] }> {
  if (refs.length === 0) return { scanned: 0, commits: [] };
  return parseTrailerLog(await g.run(trailerLogArgs(refs), cwd));
}
