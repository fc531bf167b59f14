/**
 * Git facts the state commands gather before their transactions: commits carrying Tug trailers (for
 * `state reconcile`), local branches, and branch tips. Branch tips are read from git's ref files when the
 * layout allows it (a `state claim` then spawns no git); anything unusual falls back to `git rev-parse`.
 */
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { git, gitTry } from './exec.js';
import { parseTrailerLog, TRAILER_LOG_FORMAT, type TrailerCommit } from './trailers.js';

/** Commits reachable from `refs` (deduplicated by git) with Tug-Step trailers, newest first. */
export function listTrailerCommits(cwd: string, refs: string[]): { scanned: number; commits: TrailerCommit[] } {
  if (refs.length === 0) return { scanned: 0, commits: [] };
  return parseTrailerLog(git(['log', `--format=${TRAILER_LOG_FORMAT}`, ...refs, '--'], cwd));
}

/** Local branch names (`refs/heads/…` without the prefix). */
export function localBranches(cwd: string): string[] {
  const out = git(['for-each-ref', '--format=%(refname:strip=2)', 'refs/heads/'], cwd);
  return out.split('\n').filter((l) => l !== '');
}

const SHA = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

/**
 * The commit `refs/heads/<branch>` points at, or null when the branch does not exist. Reads the loose ref,
 * then packed-refs, under the common git directory; a reftable repository, a symbolic ref or an
 * unreadable file falls back to `git rev-parse` (in `cwd`).
 */
export function branchTipFast(commonDir: string, branch: string, cwd: string): string | null {
  const slow = (): string | null => {
    const r = gitTry(['rev-parse', '--verify', '--quiet', `refs/heads/${branch}^{commit}`], cwd);
    return r.status === 0 ? r.stdout.trim() : null;
  };
  if (existsSync(join(commonDir, 'reftable'))) return slow();
  try {
    const loose = readFileSync(join(commonDir, 'refs', 'heads', ...branch.split('/')), 'utf8').trim();
    return SHA.test(loose) ? loose : slow();
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR') return slow();
  }
  let packed: string;
  try {
    packed = readFileSync(join(commonDir, 'packed-refs'), 'utf8');
  } catch {
    return null;
  }
  const want = ` refs/heads/${branch}`;
  for (const line of packed.split('\n')) {
    if (line.endsWith(want)) {
      const sha = line.slice(0, line.length - want.length);
      return SHA.test(sha) ? sha : slow();
    }
  }
  return null;
}

/** Full object name of a commit-ish, or null when it does not name a commit. */
export function resolveCommitish(cwd: string, rev: string): string | null {
  const r = gitTry(['rev-parse', '--verify', '--quiet', `${rev}^{commit}`], cwd);
  return r.status === 0 ? r.stdout.trim() : null;
}
