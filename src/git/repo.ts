/**
 * The one repository resolver (docs/git.md §1).
 *
 * From a directory it finds the current work tree root (main checkout or linked worktree) and the main
 * repo root (the main checkout), both canonical (realpath). It reads git's documented layout without
 * spawning git where it can, and falls back to `git rev-parse` / `git worktree list` otherwise.
 */
import { existsSync, realpathSync, statSync } from 'node:fs';
import { dirname, resolve, sep } from 'node:path';
import { TugError } from '../contract/errors.js';
import type { GitRunner } from './exec.js';
import { listWorktrees, parseWorktreeList, resolveRepoWithGit, type WorktreeEntry } from './fast.js';
import { canonicalPath, gitLayout } from '../kernel/light.js';
import { gitDirsOf } from './dot-git.js';

export { listWorktrees, type WorktreeEntry } from './fast.js';

export interface Repo {
  /** Canonical directory the command runs from. */
  cwd: string;
  /** Root of the work tree containing cwd (main checkout or linked worktree). */
  worktreeRoot: string;
  /** Root of the main checkout: where `.tugtool/state.db` lives. */
  mainRoot: string;
  /** The common git directory shared by all worktrees. */
  commonDir: string;
  /** True when worktreeRoot is a linked worktree. */
  isLinkedWorktree: boolean;
}

const canonical = canonicalPath;

const cache = new Map<string, Repo>();

/**
 * Resolve the repository containing `dir`. `env` is the caller's environment: it decides whether git's
 * layout may be read from the files (no GIT_CEILING_DIRECTORIES to honour), and is the environment of the
 * git fallback (fast.ts: synchronous, since every command, the hot ones included, starts here). GIT_DIR,
 * GIT_WORK_TREE and the other variables that redirect git are ignored: no git child of tugcode sees them
 * (kernel/git-env.ts), so the repository is always the one that contains `dir`.
 */
export function resolveRepo(dir: string, env: NodeJS.ProcessEnv = {}): Repo {
  let start: string;
  let isDir = false;
  try {
    start = realpathSync.native(dir);
    isDir = statSync(start).isDirectory();
  } catch {
    throw new TugError(
      'InvalidArgument',
      { reason: `directory ${dir} does not exist`, path: dir },
      { hint: 'run tugcode from an existing directory (cd into the repository), or pass -C <dir>' },
    );
  }
  if (!isDir) throw new TugError('InvalidArgument', { reason: `${dir} is not a directory`, path: dir });
  const hit = cache.get(start);
  if (hit) return hit;
  const useGit = Boolean(env.GIT_CEILING_DIRECTORIES);
  const found = (useGit ? null : gitLayout(start)) ?? resolveRepoWithGit(start, env);
  const repo: Repo = { cwd: start, ...found };
  cache.set(start, repo);
  return repo;
}

/** Repo-relative path with `/` separators, or null when `abs` lies outside `root`. */
export function relativeToRoot(root: string, abs: string): string | null {
  const a = resolve(abs);
  if (a === root) return '';
  if (!a.startsWith(root + sep)) return null;
  return a
    .slice(root.length + 1)
    .split(sep)
    .join('/');
}

/** The work trees of the repository (canonical roots), from `git worktree list --porcelain`. */
export async function gitWorktrees(g: GitRunner, repo: Repo): Promise<WorktreeEntry[]> {
  const args = ['worktree', 'list', '--porcelain', '-z'];
  const r = await g.tryRun(args, repo.mainRoot);
  if (r.status !== 0) throw new TugError('GitError', { args, stderr: r.stderr });
  return parseWorktreeList(r.stdout);
}

/**
 * Canonicalize a `--worktree` argument (docs/output.md §5): realpath, then it must be the root of the
 * main checkout or of a linked worktree of this repository, else WorktreeNotFound.
 * The fast path avoids spawning git: the main root itself, or a linked worktree of this repository
 * whose admin directory names it back (dot-git.ts); otherwise `git worktree list` runs (synchronously, fast.ts:
 * the state commands need this) with exactly `env`.
 */
export function resolveWorktreeArg(
  repo: Repo,
  arg: string,
  cwd: string = repo.cwd,
  env: NodeJS.ProcessEnv = {},
): string {
  const abs = resolve(cwd, arg);
  let canon: string;
  try {
    canon = realpathSync.native(abs);
  } catch {
    throw new TugError('WorktreeNotFound', { worktree: abs, repo_root: repo.mainRoot, reason: 'no such directory' });
  }
  if (canon === repo.mainRoot) return canon;
  // A linked worktree whose admin directory names it back (dot-git.ts); a copy of one is left to git.
  const dirs = gitDirsOf(canon);
  if (dirs?.linked && canonical(dirs.commonDir) === repo.commonDir) return canon;
  if (listWorktrees(repo, env).some((w) => w.path === canon && !w.bare)) return canon;
  throw new TugError('WorktreeNotFound', { worktree: canon, repo_root: repo.mainRoot });
}

/**
 * The root of this repository's work tree that holds `abs` (which need not exist): the nearest one on the way
 * up, so a linked worktree under the main checkout (`.tugtree/…`) wins over the main checkout; null when no
 * work tree of this repository holds it. Read from the `.git` entries (dot-git.ts), no git process: a plan
 * named by its absolute path in another worktree resolves to its repo-relative path (docs/output.md §5).
 */
export function workTreeHolding(repo: Pick<Repo, 'mainRoot' | 'commonDir'>, abs: string): string | null {
  // The file's directory, or its nearest existing ancestor, with symlinks resolved (roots are canonical).
  let dir = dirname(resolve(abs));
  while (!existsSync(dir) && dirname(dir) !== dir) dir = dirname(dir);
  try {
    dir = realpathSync.native(dir);
  } catch {
    return null;
  }
  for (;;) {
    if (dir === repo.mainRoot) return dir;
    const dirs = gitDirsOf(dir);
    if (dirs?.linked && canonical(dirs.commonDir) === repo.commonDir) return dir;
    const up = dirname(dir);
    if (up === dir) return null;
    dir = up;
  }
}

/** For tests: forget cached resolutions. */
export function clearRepoCache(): void {
  cache.clear();
}
