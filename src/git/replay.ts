/**
 * The driver's integration of a one-commit step without a rebase (06-run.md §1 item 4.7). The step's commit C
 * sits on P, the integration tip its worktree was reset to; meanwhile other workers moved the tip on to T.
 * `git merge-tree --write-tree T C` merges with their merge base P, which is exactly the tree that replaying C
 * onto T gives, without touching any work tree; `git commit-tree` then writes C again on T with the same
 * message, author and author date, and the committer of now, as `git rebase` would. That is two short
 * processes where a rebase also checks its result out; the driver resets the worktree to the new tip before
 * its next step anyway.
 *
 * Only the plain case is replayed: one commit, loose, whose headers are tree, one parent, author and
 * committer (a signed commit or one with an encoding header goes to the rebase), with P an ancestor of T.
 */
import type { GitRunner } from './exec.js';
import { isAncestorFromFiles, looseCommit } from './ancestry.js';
import { mergeTree } from './merge-tree.js';
import type { Repo } from './repo.js';

export interface OneCommit {
  sha: string;
  parent: string;
  author: { name: string; email: string; date: string };
  /** The message bytes, exactly as stored. */
  message: Buffer;
}

export type ReplayResult = { clean: true; commit: string } | { clean: false; files: string[] };

const AUTHOR = /^author (.*) <([^<>]*)> (\d+ [+-]\d{4})$/;

/** C read from its loose object when it is a plain one-parent commit; null otherwise (rebase it). */
export function plainCommit(commonDir: string, sha: string): OneCommit | null {
  const body = looseCommit(commonDir, sha);
  if (!body) return null;
  const end = body.indexOf('\n\n');
  if (end < 0) return null;
  const lines = body.subarray(0, end).toString('utf8').split('\n');
  if (lines.length !== 4 || !lines[0]!.startsWith('tree ') || !lines[3]!.startsWith('committer ')) return null;
  const parent = /^parent ([0-9a-f]{40}|[0-9a-f]{64})$/.exec(lines[1]!);
  const author = AUTHOR.exec(lines[2]!);
  if (!parent || !author) return null;
  return {
    sha,
    parent: parent[1]!,
    author: { name: author[1]!, email: author[2]!, date: author[3]! },
    message: body.subarray(end + 2),
  };
}

/**
 * Whether C can be replayed onto `tip` here: plain, its parent provably behind the tip (so the merge base is
 * that parent), and C itself provably not in the tip's history (an integration retried after a crash would
 * otherwise write C twice). Null when it cannot.
 */
export function replayable(repo: Repo, head: string, tip: string): OneCommit | null {
  const c = plainCommit(repo.commonDir, head);
  if (!c || isAncestorFromFiles(repo.commonDir, c.parent, tip) !== true) return null;
  return isAncestorFromFiles(repo.commonDir, head, tip) === false ? c : null;
}

/** C written again on `tip`: the new commit, or the conflicting files (nothing referenced was written). */
export async function replayCommit(g: GitRunner, repo: Repo, c: OneCommit, tip: string): Promise<ReplayResult> {
  const merged = await mergeTree(g, repo, tip, c.sha);
  if (!merged.clean) return merged;
  const commit = await g.run(['commit-tree', merged.tree, '-p', tip], repo.mainRoot, {
    input: c.message,
    env: { GIT_AUTHOR_NAME: c.author.name, GIT_AUTHOR_EMAIL: c.author.email, GIT_AUTHOR_DATE: c.author.date },
  });
  return { clean: true, commit: commit.trim() };
}
