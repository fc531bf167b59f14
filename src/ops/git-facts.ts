/**
 * The git facts the state operations gather before their store call (the integration tip, a commit's full
 * name, branches, worktrees, trailer commits), in one of two ways. A CLI call uses the synchronous calls of
 * src/git/fast.ts: loading simple-git would cost the hot commands their budget (docs/quality.md §2). A
 * long-lived process (the driver, the MCP server) uses simple-git, which never blocks the event loop, so
 * one call's git never delays another's heartbeat.
 */
import type { Repo, WorktreeEntry } from '../git/repo.js';
import type { TrailerCommit } from '../git/trailers.js';
import type { OpsContext } from './context.js';

export interface GitFacts {
  branchTip(repo: Repo, branch: string): Promise<string | null>;
  resolveCommit(cwd: string, rev: string): Promise<string | null>;
  /** Whether `commit` is in the history of `tip` (read from the loose objects when it can, else git). */
  contains(repo: Repo, tip: string, commit: string): Promise<boolean>;
  localBranches(cwd: string): Promise<string[]>;
  worktrees(repo: Repo): Promise<WorktreeEntry[]>;
  trailerCommits(cwd: string, refs: string[]): Promise<{ scanned: number; commits: TrailerCommit[] }>;
  /** Remove a ref tugcode wrote (absent is fine). */
  deleteRef(cwd: string, ref: string): Promise<void>;
  /** The full names of the refs under `prefix` (ending in `/`). */
  refsUnder(cwd: string, prefix: string): Promise<string[]>;
}

export async function gitFacts(ctx: OpsContext): Promise<GitFacts> {
  const env = ctx.env;
  if (!ctx.longLived) {
    const f = await import('../git/fast.js');
    return {
      branchTip: async (repo, branch) => f.branchTipFast(repo.commonDir, branch, repo.worktreeRoot, env),
      resolveCommit: async (cwd, rev) => f.resolveCommitish(cwd, rev, env),
      contains: async (repo, tip, commit) =>
        (await import('../git/ancestry.js')).isAncestorFromFiles(repo.commonDir, commit, tip) ??
        f.isAncestorSync(repo.worktreeRoot, commit, tip, env),
      localBranches: async (cwd) => f.localBranches(cwd, env),
      worktrees: async (repo) => f.listWorktrees(repo, env),
      trailerCommits: async (cwd, refs) => f.listTrailerCommits(cwd, refs, env),
      deleteRef: async (cwd, ref) => {
        const r = f.gitSync(['update-ref', '-d', ref], cwd, env);
        if (r.status !== 0) throw new Error(`git update-ref -d ${ref}: ${r.stderr.trim()}`);
      },
      refsUnder: async (cwd, prefix) => {
        const r = f.gitSync(['for-each-ref', '--format=%(refname)', prefix], cwd, env);
        if (r.status !== 0) throw new Error(`git for-each-ref ${prefix}: ${r.stderr.trim()}`);
        return r.stdout.split('\n').filter(Boolean);
      },
    };
  }
  const { gitRunner } = await import('../git/exec.js');
  const refs = await import('../git/refs.js');
  const { gitWorktrees } = await import('../git/repo.js');
  const { readTrailerCommits } = await import('../git/log.js');
  const g = gitRunner(env);
  return {
    branchTip: (repo, branch) => refs.branchTip(g, repo.worktreeRoot, branch),
    resolveCommit: (cwd, rev) => refs.resolveCommit(g, cwd, rev),
    contains: async (repo, tip, commit) =>
      (await import('../git/ancestry.js')).isAncestorFromFiles(repo.commonDir, commit, tip) ??
      refs.isAncestor(g, repo.worktreeRoot, commit, tip),
    localBranches: async (cwd) =>
      (await g.run(['for-each-ref', '--format=%(refname:strip=2)', 'refs/heads/'], cwd)).split('\n').filter(Boolean),
    worktrees: (repo) => gitWorktrees(g, repo),
    trailerCommits: (cwd, r) => readTrailerCommits(g, cwd, r),
    deleteRef: async (cwd, ref) => void (await g.run(['update-ref', '-d', ref], cwd)),
    refsUnder: async (cwd, prefix) =>
      (await g.run(['for-each-ref', '--format=%(refname)', prefix], cwd)).split('\n').filter(Boolean),
  };
}
