/**
 * A work tree's `.git` entry read without a git process: the one reader, so every caller applies the same
 * checks. In a main checkout `.git` is the git directory. In a linked worktree it is a file holding one
 * line `gitdir: <path>` (relative to the work tree), naming the tree's admin directory
 * `<common>/worktrees/<id>`, whose `commondir` names the common directory and whose `gitdir` names this
 * `.git` file back. A tree whose admin directory does not point back (a copied or moved worktree, a pruned
 * one) is not taken for the tree it claims to be: readers hand it to git, and the driver refuses to act in
 * it (run/worktrees.ts). The `.git` file is parsed as git parses it: `gitdir: ` must open the file and the
 * path runs to its end, less the trailing line break.
 */
import { readFileSync, realpathSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

export interface GitDirs {
  /** The work tree's own git directory: `.git`, or a linked worktree's admin directory. */
  gitDir: string;
  /** The directory shared by all work trees (refs, objects, config). */
  commonDir: string;
  /** True for a linked worktree. */
  linked: boolean;
}

/** Why a directory is not a linked worktree git would run in as itself. */
export type DotGitFault =
  /** `.git` is missing, unreadable, or not a file. */
  | { kind: 'no-git-file' }
  /** The `.git` file names no directory that exists. */
  | { kind: 'no-admin-dir' }
  /** The directory it names has no `gitdir` and `commondir` files. */
  | { kind: 'not-admin-dir'; admin: string }
  /** The admin directory belongs to another worktree (its `gitdir` does not name this `.git`). */
  | { kind: 'foreign-admin-dir'; admin: string };

type Read = { dirs: GitDirs; fault?: undefined } | { dirs?: undefined; fault: DotGitFault };

const GITFILE = /^gitdir: ([^\r\n]+)[\r\n]*$/;
const DIR = Symbol('directory');

/** The file's text; DIR when it is a directory; null when it cannot be read otherwise. */
function readEntry(file: string): string | typeof DIR | null {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EISDIR' ? DIR : null;
  }
}

function isDir(path: string): boolean {
  return statSync(path, { throwIfNoEntry: false })?.isDirectory() ?? false;
}

/** Whether two existing paths are the same file (the same string, or the same after realpath). */
function samePath(a: string, b: string): boolean {
  if (a === b) return true;
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return false;
  }
}

/** The directory a `.git` file's text names (relative to the work tree `W`), or null when it names none. */
function gitFileTarget(W: string, text: string | typeof DIR | null): string | null {
  const m = typeof text === 'string' ? GITFILE.exec(text) : null;
  return m ? resolve(W, m[1]!) : null;
}

/** `<W>/.git` read and checked: the git directories, or why W is not a work tree git runs in as itself. */
function readDotGit(W: string): Read {
  const dotGit = join(W, '.git');
  const text = readEntry(dotGit);
  if (text === DIR) return { dirs: { gitDir: dotGit, commonDir: dotGit, linked: false } };
  if (text === null) return { fault: { kind: 'no-git-file' } };
  const admin = gitFileTarget(W, text);
  if (!admin) return { fault: { kind: 'no-admin-dir' } };
  const back = readEntry(join(admin, 'gitdir'));
  const common = readEntry(join(admin, 'commondir'));
  if (typeof back !== 'string' || typeof common !== 'string')
    return { fault: isDir(admin) ? { kind: 'not-admin-dir', admin } : { kind: 'no-admin-dir' } };
  const commonDir = resolve(admin, common.trim());
  if (!samePath(resolve(admin, back.trim()), dotGit) || !samePath(dirname(admin), join(commonDir, 'worktrees')))
    return { fault: { kind: 'foreign-admin-dir', admin } };
  return { dirs: { gitDir: admin, commonDir, linked: true } };
}

/**
 * The git directories of the work tree at `W` (main checkout or linked worktree), or null when the files
 * cannot say for certain (then git must be asked).
 */
export function gitDirsOf(W: string): GitDirs | null {
  return readDotGit(W).dirs ?? null;
}

/** Why `W` is not a linked worktree git would run in as itself, or null when it is one. */
export function linkedWorktreeFault(W: string): DotGitFault | null {
  const r = readDotGit(W);
  if (r.fault) return r.fault;
  return r.dirs.linked ? null : { kind: 'no-git-file' };
}

/**
 * The directory a linked worktree's `.git` file names, when that directory exists; else null. Unchecked
 * beyond that: it says whether a worktree is there at all, not whether git may act in it (linkedWorktreeFault).
 */
export function adminDirOf(W: string): string | null {
  const admin = gitFileTarget(W, readEntry(join(W, '.git')));
  return admin && isDir(admin) ? admin : null;
}
