/**
 * Git's on-disk layout, read without spawning git: from a directory, the first `.git` entry above it tells
 * the work tree root, the common git directory and the main checkout. Returns null whenever only git can
 * decide (a bare or odd layout, a submodule, `--separate-git-dir`); callers then ask git. tugcode's one repo
 * resolver (src/git/repo.ts, docs/git.md §1) uses this as its fast path; the kernel uses it to find the main
 * checkout's `.tugtool/config.toml` without importing tugcode (docs/kernel.md §2.1).
 */
import { existsSync, lstatSync, readFileSync, realpathSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';

export interface GitLayout {
  /** Root of the work tree (main checkout or linked worktree), canonical. */
  worktreeRoot: string;
  /** Root of the main checkout, canonical. */
  mainRoot: string;
  /** The common git directory, canonical. */
  commonDir: string;
  isLinkedWorktree: boolean;
}

export function canonicalPath(p: string): string {
  try {
    return realpathSync.native(p);
  } catch {
    return resolve(p);
  }
}

export function readGitdirFile(file: string): string | null {
  try {
    const m = /^gitdir:\s*(.+?)\s*$/m.exec(readFileSync(file, 'utf8'));
    if (!m || !m[1]) return null;
    return resolve(dirname(file), m[1]);
  } catch {
    return null;
  }
}

/** Walk up from `start` (canonical) to the first `.git` entry; null when git must decide. */
export function gitLayout(start: string): GitLayout | null {
  let dir = start;
  for (;;) {
    if (basename(dir) === '.git') return null; // inside a git directory: let git decide (and refuse)
    const dotGit = join(dir, '.git');
    let st;
    try {
      st = lstatSync(dotGit);
    } catch {
      st = null;
    }
    if (st) {
      if (st.isDirectory()) {
        if (!existsSync(join(dotGit, 'HEAD'))) return null;
        const root = canonicalPath(dir);
        return { worktreeRoot: root, mainRoot: root, commonDir: canonicalPath(dotGit), isLinkedWorktree: false };
      }
      if (st.isFile()) {
        const gitDir = readGitdirFile(dotGit);
        if (!gitDir) return null;
        const commondirFile = join(gitDir, 'commondir');
        if (!existsSync(commondirFile)) return null; // submodule or --separate-git-dir: ask git for the main root
        const common = canonicalPath(resolve(gitDir, readFileSync(commondirFile, 'utf8').trim()));
        if (basename(common) !== '.git') return null;
        return {
          worktreeRoot: canonicalPath(dir),
          mainRoot: dirname(common),
          commonDir: common,
          isLinkedWorktree: true,
        };
      }
      return null;
    }
    const parent = dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

/** True when some directory at or above `start` has a `.git` entry (the workspace is inside a repository). */
export function insideGit(start: string): boolean {
  let dir = start;
  for (;;) {
    try {
      lstatSync(join(dir, '.git'));
      return true;
    } catch {
      const up = dirname(dir);
      if (up === dir) return false;
      dir = up;
    }
  }
}
