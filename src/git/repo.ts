/**
 * The one repository resolver (04-git.md §1).
 *
 * From a directory it finds the current work tree root (main checkout or linked worktree) and the main
 * repo root (the main checkout), both canonical (realpath). It reads git's documented layout without
 * spawning git where it can, and falls back to `git rev-parse` / `git worktree list` otherwise.
 */
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { isAbsolute, join, resolve, sep } from 'node:path';
import { TugError } from '../contract/errors.js';
import { gitTry } from './exec.js';
import { canonicalPath, gitLayout, readGitdirFile } from '../kernel/repo-layout.js';

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

function resolveWithGit(start: string): Omit<Repo, 'cwd'> {
  const r = gitTry(
    [
      'rev-parse',
      '--is-bare-repository',
      '--is-inside-git-dir',
      '--show-toplevel',
      '--path-format=absolute',
      '--git-common-dir',
      '--absolute-git-dir',
    ],
    start,
  );
  if (r.status !== 0) {
    throw new TugError('NotAGitRepository', { path: start, reason: r.stderr.trim().split('\n')[0] || undefined });
  }
  const lines = r.stdout.split('\n');
  if (lines[0] === 'true')
    throw new TugError('NotAGitRepository', { path: start, reason: 'bare repositories have no work tree' });
  if (lines[1] === 'true')
    throw new TugError('NotAGitRepository', { path: start, reason: 'running inside the .git directory' });
  const [top, common, gitDir] = [lines[2], lines[3], lines[4]];
  if (!top || !common || !gitDir) throw new TugError('NotAGitRepository', { path: start });
  const worktreeRoot = canonical(top);
  const commonDir = canonical(common);
  // In the main checkout the git dir is the common dir: it is its own main root, whatever the
  // common dir is called (submodule, --separate-git-dir).
  if (canonical(gitDir) === commonDir)
    return { worktreeRoot, mainRoot: worktreeRoot, commonDir, isLinkedWorktree: false };
  // In a linked worktree the main checkout is the first entry of `git worktree list`. git reports the
  // common dir itself there when it cannot know the main work tree (--separate-git-dir); then only
  // core.worktree can tell, and the common dir's parent is never guessed.
  const wl = gitTry(['worktree', 'list', '--porcelain'], start);
  let mainRoot = wl.status === 0 ? /^worktree (.+)$/m.exec(wl.stdout)?.[1] : undefined;
  if (mainRoot && canonical(mainRoot) === commonDir) {
    const cw = gitTry(['config', '--file', join(commonDir, 'config'), '--get', 'core.worktree'], start);
    mainRoot = cw.status === 0 && cw.stdout.trim() ? resolve(commonDir, cw.stdout.trim()) : undefined;
  }
  if (!mainRoot) {
    throw new TugError('NotAGitRepository', {
      path: start,
      reason:
        'cannot locate the main checkout of this linked worktree; run from the main checkout or set TUGCODE_STATE_DB',
    });
  }
  return { worktreeRoot, mainRoot: canonical(mainRoot), commonDir, isLinkedWorktree: true };
}

const cache = new Map<string, Repo>();

/** Resolve the repository containing `dir` (default: the process cwd). */
export function resolveRepo(dir: string = process.cwd(), env: NodeJS.ProcessEnv = process.env): Repo {
  let start: string;
  try {
    start = realpathSync.native(dir);
    if (!statSync(start).isDirectory()) throw new Error('not a directory');
  } catch {
    throw new TugError('InvalidArgument', { reason: `directory ${dir} does not exist`, path: dir });
  }
  const hit = cache.get(start);
  if (hit) return hit;
  const useGit = Boolean(env.GIT_DIR || env.GIT_WORK_TREE || env.GIT_CEILING_DIRECTORIES);
  const found = (useGit ? null : gitLayout(start)) ?? resolveWithGit(start);
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

export function isAbsolutePath(p: string): boolean {
  return isAbsolute(p);
}

/** The work trees of the repository (canonical roots), from `git worktree list --porcelain`. */
export function listWorktrees(
  repo: Repo,
): { path: string; head: string | null; branch: string | null; bare: boolean; prunable: boolean }[] {
  const r = gitTry(['worktree', 'list', '--porcelain'], repo.mainRoot);
  if (r.status !== 0) throw new TugError('GitError', { args: ['worktree', 'list', '--porcelain'], stderr: r.stderr });
  const out: { path: string; head: string | null; branch: string | null; bare: boolean; prunable: boolean }[] = [];
  for (const block of r.stdout.split('\n\n')) {
    const path = /^worktree (.+)$/m.exec(block)?.[1];
    if (!path) continue;
    out.push({
      path: canonical(path),
      head: /^HEAD ([0-9a-f]+)$/m.exec(block)?.[1] ?? null,
      branch: /^branch refs\/heads\/(.+)$/m.exec(block)?.[1] ?? null,
      bare: /^bare$/m.test(block),
      prunable: /^prunable/m.test(block),
    });
  }
  return out;
}

/**
 * Canonicalize a `--worktree` argument (03-contract.md §5): realpath, then it must be the root of the
 * main checkout or of a linked worktree of this repository, else WorktreeNotFound.
 * The fast path avoids spawning git: the main root itself, or a directory whose `.git` file points
 * into this repository's common directory.
 */
export function resolveWorktreeArg(repo: Repo, arg: string, cwd: string = repo.cwd): string {
  const abs = resolve(cwd, arg);
  let canon: string;
  try {
    canon = realpathSync.native(abs);
  } catch {
    throw new TugError('WorktreeNotFound', { worktree: abs, repo_root: repo.mainRoot, reason: 'no such directory' });
  }
  if (canon === repo.mainRoot) return canon;
  const gitDir = readGitdirFile(join(canon, '.git'));
  if (gitDir && existsSync(join(gitDir, 'commondir'))) {
    const common = canonical(resolve(gitDir, readFileSync(join(gitDir, 'commondir'), 'utf8').trim()));
    if (common === repo.commonDir) return canon;
  }
  if (listWorktrees(repo).some((w) => w.path === canon && !w.bare)) return canon;
  throw new TugError('WorktreeNotFound', { worktree: canon, repo_root: repo.mainRoot });
}

/** For tests: forget cached resolutions. */
export function clearRepoCache(): void {
  cache.clear();
}
