/**
 * Small read-only git queries shared by worktree, commit, merge, status and doctor.
 * Every call goes through exec.ts.
 */
import { TugError } from '../contract/errors.js';
import { git, gitBytes, gitTry, gitVersion } from './exec.js';

/** git features used here: `merge-tree --write-tree` and worktree/trailer options need 2.38. */
export const MIN_GIT_VERSION: [number, number, number] = [2, 38, 0];

export function versionString(v: readonly number[]): string {
  return v.join('.');
}

export function versionAtLeast(v: readonly number[], min: readonly number[]): boolean {
  for (let i = 0; i < 3; i++) {
    const a = v[i] ?? 0;
    const b = min[i] ?? 0;
    if (a !== b) return a > b;
  }
  return true;
}

/** Refuse to work with a git older than MIN_GIT_VERSION (an environment failure, GitError exit 10). */
export function requireGitVersion(): void {
  const v = gitVersion();
  if (!v) throw new TugError('GitError', { args: ['--version'], reason: 'git is not installed or cannot run' });
  if (!versionAtLeast(v, MIN_GIT_VERSION)) {
    throw new TugError(
      'GitError',
      {
        args: ['--version'],
        found: versionString(v),
        required: versionString(MIN_GIT_VERSION),
        reason: `git ${versionString(v)} is older than the required ${versionString(MIN_GIT_VERSION)}`,
      },
      { hint: `install git ${versionString(MIN_GIT_VERSION)} or newer` },
    );
  }
}

export function branchExists(cwd: string, branch: string): boolean {
  return gitTry(['show-ref', '--verify', '--quiet', `refs/heads/${branch}`], cwd).status === 0;
}

/** Full object name of a commit-ish, or null. */
export function resolveCommit(cwd: string, rev: string): string | null {
  const r = gitTry(['rev-parse', '--verify', '--quiet', `${rev}^{commit}`], cwd);
  return r.status === 0 ? r.stdout.trim() : null;
}

export function branchTip(cwd: string, branch: string): string | null {
  return resolveCommit(cwd, `refs/heads/${branch}`);
}

/** The branch checked out in the work tree at `cwd`, or null for a detached HEAD. */
export function currentBranch(cwd: string): string | null {
  const r = gitTry(['symbolic-ref', '--quiet', '--short', 'HEAD'], cwd);
  return r.status === 0 ? r.stdout.trim() : null;
}

export function headCommit(cwd: string): string | null {
  return resolveCommit(cwd, 'HEAD');
}

export function isAncestor(cwd: string, ancestor: string, descendant: string): boolean {
  const r = gitTry(['merge-base', '--is-ancestor', ancestor, descendant], cwd);
  if (r.status === 0) return true;
  if (r.status === 1) return false;
  throw new TugError('GitError', {
    args: ['merge-base', '--is-ancestor', ancestor, descendant],
    stderr: r.stderr,
    cwd,
  });
}

/** `git status --porcelain` entries (untracked included, ignored excluded). */
export function statusEntries(cwd: string, opts: { untracked?: boolean; pathspec?: string[] } = {}): string[] {
  const args = ['status', '--porcelain=v1', '-z', `--untracked-files=${opts.untracked === false ? 'no' : 'all'}`];
  if (opts.pathspec) args.push('--', ...opts.pathspec);
  const out = git(args, cwd);
  const entries: string[] = [];
  const parts = out.split('\0');
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i]!;
    if (p === '') continue;
    entries.push(p);
    // Renames and copies carry the source path as the next NUL-separated field.
    if (p[0] === 'R' || p[0] === 'C') i++;
  }
  return entries;
}

export function isDirty(cwd: string, opts: { untracked?: boolean } = {}): boolean {
  return statusEntries(cwd, opts).length > 0;
}

/** Commits reachable from `tip` and from none of `exclude` (oldest first). */
export function commitsNotIn(cwd: string, tip: string, exclude: string[]): string[] {
  const out = git(['rev-list', '--reverse', tip, '--not', ...exclude, '--'], cwd).trim();
  return out ? out.split('\n') : [];
}

/** Commits of `tip` that have no patch-equivalent in `upstream` (`git cherry`, '+' lines). */
export function commitsWithoutEquivalent(cwd: string, upstream: string, tip: string): string[] {
  const out = git(['cherry', upstream, tip], cwd).trim();
  if (!out) return [];
  return out
    .split('\n')
    .filter((l) => l.startsWith('+ '))
    .map((l) => l.slice(2).trim());
}

/** The bytes of `<rev>:<path>`, or null when the path does not exist there. */
export function showBlob(cwd: string, rev: string, path: string): Buffer | null {
  if (gitTry(['cat-file', '-e', `${rev}:${path}`], cwd).status !== 0) return null;
  return gitBytes(['cat-file', 'blob', `${rev}:${path}`], cwd);
}
