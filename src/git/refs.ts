/**
 * Small read-only git queries shared by worktree, commit, merge, status and doctor. Every call goes through
 * a GitRunner (exec.ts): asynchronous, with the caller's environment.
 */
import { TugError } from '../contract/errors.js';
import { gitVersion, type GitRunner } from './exec.js';

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
export async function requireGitVersion(g: GitRunner): Promise<void> {
  const v = await gitVersion(g);
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

export async function branchExists(g: GitRunner, cwd: string, branch: string): Promise<boolean> {
  return (await g.tryRun(['show-ref', '--verify', '--quiet', `refs/heads/${branch}`], cwd)).status === 0;
}

/** Full object name of a commit-ish, or null. */
export async function resolveCommit(g: GitRunner, cwd: string, rev: string): Promise<string | null> {
  const r = await g.tryRun(['rev-parse', '--verify', '--quiet', `${rev}^{commit}`], cwd);
  return r.status === 0 ? r.stdout.trim() : null;
}

export function branchTip(g: GitRunner, cwd: string, branch: string): Promise<string | null> {
  return resolveCommit(g, cwd, `refs/heads/${branch}`);
}

/** The branch checked out in the work tree at `cwd`, or null for a detached HEAD. */
export async function currentBranch(g: GitRunner, cwd: string): Promise<string | null> {
  const r = await g.tryRun(['symbolic-ref', '--quiet', '--short', 'HEAD'], cwd);
  return r.status === 0 ? r.stdout.trim() : null;
}

export function headCommit(g: GitRunner, cwd: string): Promise<string | null> {
  return resolveCommit(g, cwd, 'HEAD');
}

export async function isAncestor(g: GitRunner, cwd: string, ancestor: string, descendant: string): Promise<boolean> {
  const r = await g.tryRun(['merge-base', '--is-ancestor', ancestor, descendant], cwd);
  if (r.status === 0) return true;
  if (r.status === 1) return false;
  throw new TugError('GitError', {
    args: ['merge-base', '--is-ancestor', ancestor, descendant],
    stderr: r.stderr,
    cwd,
  });
}

/** One `git status --porcelain=v1 -z` entry: `XY path`, and for a rename or copy the source path. */
export interface StatusEntry {
  xy: string;
  path: string;
  from: string | null;
}

/** `git status --porcelain` entries (untracked included unless `untracked: false`, ignored excluded). */
export async function statusEntries(
  g: GitRunner,
  cwd: string,
  opts: { untracked?: boolean; pathspec?: string[] } = {},
): Promise<string[]> {
  return (await statusDetails(g, cwd, opts)).map((e) => `${e.xy} ${e.path}`);
}

export async function statusDetails(
  g: GitRunner,
  cwd: string,
  opts: { untracked?: boolean; pathspec?: string[] } = {},
): Promise<StatusEntry[]> {
  const args = ['status', '--porcelain=v1', '-z', `--untracked-files=${opts.untracked === false ? 'no' : 'all'}`];
  if (opts.pathspec) args.push('--', ...opts.pathspec);
  const parts = (await g.run(args, cwd)).split('\0');
  const entries: StatusEntry[] = [];
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i]!;
    if (p === '') continue;
    // Renames and copies carry the source path as the next NUL-separated field.
    const renamed = p[0] === 'R' || p[0] === 'C';
    entries.push({ xy: p.slice(0, 2), path: p.slice(3), from: renamed ? (parts[++i] ?? null) : null });
  }
  return entries;
}

/** Commits reachable from `tip` and from none of `exclude` (oldest first). */
export async function commitsNotIn(g: GitRunner, cwd: string, tip: string, exclude: string[]): Promise<string[]> {
  const out = (await g.run(['rev-list', '--reverse', tip, '--not', ...exclude, '--'], cwd)).trim();
  return out ? out.split('\n') : [];
}

/** Commits of `tip` that have no patch-equivalent in `upstream` (`git cherry`, '+' lines). */
export async function commitsWithoutEquivalent(
  g: GitRunner,
  cwd: string,
  upstream: string,
  tip: string,
): Promise<string[]> {
  const out = (await g.run(['cherry', upstream, tip], cwd)).trim();
  if (!out) return [];
  return out
    .split('\n')
    .filter((l) => l.startsWith('+ '))
    .map((l) => l.slice(2).trim());
}

/** The bytes of `<rev>:<path>`, or null when the path does not exist there. */
export async function showBlob(g: GitRunner, cwd: string, rev: string, path: string): Promise<Buffer | null> {
  try {
    return await g.bytes(['cat-file', 'blob', `${rev}:${path}`], cwd);
  } catch (e) {
    // Missing (null), or there but not readable as a blob (the error): only a failure asks which.
    if ((await g.tryRun(['cat-file', '-e', `${rev}:${path}`], cwd)).status !== 0) return null;
    throw e;
  }
}
