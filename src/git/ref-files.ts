/**
 * Answers the driver needs around every step, read from git's own files instead of a git process (each
 * spawn costs ~3–5 ms of CPU on the 2-core target, and parallel workers compete for those cores): a branch
 * tip (loose ref, then packed-refs), a work tree's HEAD commit, whether any work tree has a branch checked
 * out. Every reader answers only what it can read for certain and hands anything unusual (reftable, a
 * symbolic ref, an unreadable file, a `.git` that does not check out: dot-git.ts) to git. The variables that would point git elsewhere (GIT_DIR & co.)
 * never reach a git child (kernel/git-env.ts), so git's answer and the files' always agree. The reads are synchronous:
 * a few small files each, where a read through the thread pool waited behind the other workers' I/O.
 */

/** The file's text, null when it does not exist (or is not a file), undefined when unreadable otherwise. */
function readText(file: string): string | null | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR' ? null : undefined;
  }
}
import { readdirSync, readFileSync } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { canonicalPath } from '../kernel/light.js';
import { gitDirsOf } from './dot-git.js';
import type { GitRunner } from './exec.js';
import { headCommit } from './refs.js';

const SHA = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

/** A branch tip from its ref files; undefined when git must be asked, null when the branch is missing. */
function tipFromFiles(commonDir: string, branch: string): string | null | undefined {
  const loose = readText(join(commonDir, 'refs', 'heads', ...branch.split('/')));
  if (loose === undefined) return undefined;
  if (loose !== null) return SHA.test(loose.trim()) ? loose.trim() : undefined;
  const packed = readText(join(commonDir, 'packed-refs'));
  if (packed === undefined) return undefined;
  if (packed === null) return readText(join(commonDir, 'reftable', 'tables.list')) === null ? null : undefined;
  const want = ` refs/heads/${branch}`;
  for (const line of packed.split('\n'))
    if (line.endsWith(want)) {
      const sha = line.slice(0, -want.length);
      return SHA.test(sha) ? sha : undefined;
    }
  return null;
}

/** A branch tip read from the ref files (`git rev-parse refs/heads/<branch>^{commit}` otherwise). */
export async function refTip(g: GitRunner, commonDir: string, cwd: string, branch: string): Promise<string | null> {
  const fast = tipFromFiles(commonDir, branch);
  if (fast !== undefined) return fast;
  const r = await g.tryRun(['rev-parse', '--verify', '--quiet', `refs/heads/${branch}^{commit}`], cwd);
  return r.status === 0 ? r.stdout.trim() : null;
}

/** The commit HEAD of the work tree at `W` names (`git rev-parse HEAD` when the files cannot say). */
export async function headTip(g: GitRunner, W: string): Promise<string | null> {
  const dirs = gitDirsOf(W);
  const head = dirs ? readText(join(dirs.gitDir, 'HEAD')) : null;
  if (dirs && typeof head === 'string') {
    const h = head.trim();
    if (SHA.test(h)) return h;
    const m = /^ref: refs\/heads\/(\S+)$/.exec(h);
    const tip = m ? tipFromFiles(dirs.commonDir, m[1]!) : undefined;
    if (tip) return tip;
  }
  return headCommit(g, W);
}

/** The admin directories of the linked work trees (`worktrees/<id>`): none yet is []; unreadable is null. */
function linkedIds(commonDir: string): string[] | null {
  try {
    return readdirSync(join(commonDir, 'worktrees'));
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ENOENT' ? [] : null;
  }
}

/**
 * Whether any work tree of the repository has `branch` checked out, from the HEAD files (the main one in
 * the common directory, each linked one in `worktrees/<id>/`), which is where `git worktree list` reads
 * it. True means "some work tree does" (the caller asks git which one); null means git must be asked.
 */
export function branchCheckedOut(commonDir: string, branch: string): boolean | null {
  const ids = linkedIds(commonDir);
  if (ids === null) return null;
  const heads = [join(commonDir, 'HEAD'), ...ids.map((id) => join(commonDir, 'worktrees', id, 'HEAD'))];
  const want = `ref: refs/heads/${branch}`;
  for (const file of heads) {
    const h = readText(file);
    if (typeof h !== 'string') return null; // a work tree being added or removed: let git decide
    const line = h.trim();
    if (line === want) return true;
    if (!SHA.test(line) && !line.startsWith('ref: ')) return null;
  }
  return false;
}

/**
 * An admin directory's `gitdir` file (`<path>/.git`, absolute) as git reads it: '' when it is missing or
 * empty — a work tree `git worktree add` is still making (it writes `locked`, then `gitdir`), which
 * `git worktree list` skips too — and undefined when it cannot be read (git must be asked).
 */
function adminGitdir(admin: string): string | undefined {
  const text = readText(join(admin, 'gitdir'));
  if (text === undefined) return undefined;
  const t = (text ?? '').trim();
  return t === '' ? '' : resolve(admin, t);
}

/**
 * Whether `git worktree list` has a work tree at `path`, from the admin directories' `gitdir` files
 * (`<path>/.git`); null when one cannot be read (git must be asked).
 */
export function worktreeRegistered(commonDir: string, path: string): boolean | null {
  const ids = linkedIds(commonDir);
  if (ids === null) return null;
  const want = join(path, '.git');
  for (const id of ids) {
    const gitdir = adminGitdir(join(commonDir, 'worktrees', id));
    if (gitdir === undefined) return null;
    if (gitdir === want) return true;
  }
  return false;
}

/**
 * The work trees with the branch each has checked out (null: detached), as `git worktree list` reports
 * them (canonical paths; the main one first), read from HEAD and the admin directories' `gitdir` files;
 * null when one cannot be read (git must be asked).
 */
export function worktreeBranches(
  commonDir: string,
  mainRoot: string,
): { path: string; branch: string | null }[] | null {
  const ids = linkedIds(commonDir);
  if (ids === null) return null;
  const branchOf = (head: string | null | undefined): string | null | undefined => {
    if (head === undefined) return undefined;
    // No HEAD yet (a work tree being added): git lists it detached.
    if (head === null) return null;
    const h = head.trim();
    if (SHA.test(h)) return null;
    const m = /^ref: refs\/heads\/(\S+)$/.exec(h);
    return m ? m[1]! : undefined;
  };
  const mainHead = readText(join(commonDir, 'HEAD'));
  const main = mainHead === null ? undefined : branchOf(mainHead);
  if (main === undefined) return null;
  const out = [{ path: mainRoot, branch: main }];
  for (const id of ids) {
    const admin = join(commonDir, 'worktrees', id);
    const gitdir = adminGitdir(admin);
    const branch = branchOf(readText(join(admin, 'HEAD')));
    if (gitdir === undefined || branch === undefined) return null;
    if (gitdir === '') continue; // still being added: not listed yet
    out.push({ path: canonicalPath(dirname(gitdir)), branch });
  }
  return out;
}

/**
 * A ref name git surely accepts as it is (a strict subset of `git check-ref-format`): components of plain
 * characters, none starting with `.` or ending with `.` or `.lock`, no `..`. Anything else is left to git.
 */
const PLAIN_PART = /^[A-Za-z0-9_+,=%-][A-Za-z0-9_+,=%.-]*$/;
function plainRefName(name: string): boolean {
  return name
    .split('/')
    .every((p) => PLAIN_PART.test(p) && !p.endsWith('.') && !p.endsWith('.lock') && !p.includes('..'));
}

/** The refs of packed-refs (name → object; peeled `^` lines skipped); null when a line is not a plain one. */
function packedRefs(text: string): Map<string, string> | null {
  const out = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    if (line.startsWith('^')) {
      if (!SHA.test(line.slice(1))) return null;
      continue;
    }
    const sp = line.indexOf(' ');
    const sha = line.slice(0, sp);
    const name = line.slice(sp + 1);
    if (sp < 0 || !SHA.test(sha) || !name.startsWith('refs/') || !plainRefName(name)) return null;
    out.set(name, sha);
  }
  return out;
}

/** The loose refs under `<commonDir>/<rel>` (name → file content, trimmed); null when one is not plain. */
async function looseRefs(commonDir: string, rel: string, out: Map<string, string>): Promise<boolean> {
  let entries: import('node:fs').Dirent[];
  try {
    entries = await readdir(join(commonDir, rel), { withFileTypes: true });
  } catch (e) {
    return rel === 'refs' && (e as NodeJS.ErrnoException).code === 'ENOENT';
  }
  const done = await Promise.all(
    entries.map(async (d) => {
      const name = `${rel}/${d.name}`;
      // A lock file (a ref write under way: the ref itself still holds its old value) git skips silently.
      if (d.name.endsWith('.lock')) return true;
      if (d.isDirectory()) return looseRefs(commonDir, name, out);
      if (!d.isFile() || !plainRefName(name)) return false; // a link, a name git may refuse, …
      const text = await readFile(join(commonDir, name), 'utf8').catch(() => null);
      if (text === null) return false;
      out.set(name, text.trim());
      return true;
    }),
  );
  return done.every(Boolean);
}

/**
 * Every ref under `refs/` with the object it names, as `git for-each-ref --format='%(refname) %(objectname)'`
 * lists them in the main checkout: a loose ref over its packed entry, a symbolic ref (`refs/remotes/origin/HEAD`)
 * as the object of the ref it names, lock files skipped as git skips them. Null when the files hold anything
 * git might read otherwise (reftable, a name or a content out of the plain forms, a symbolic ref to a symbolic
 * or missing ref): then git must be asked. Asynchronous, unlike the readers above: a repository may hold thousands of loose refs.
 */
export async function allRefs(commonDir: string): Promise<Map<string, string> | null> {
  // The loose refs before packed-refs, as git reads them: a `git pack-refs` between the two moves a ref from
  // the first to the second, where it is still found; read the other way round, it would be in neither.
  const loose = new Map<string, string>();
  const [walked, reftable] = await Promise.all([
    looseRefs(commonDir, 'refs', loose),
    stat(join(commonDir, 'reftable')).then(
      () => true,
      (e: NodeJS.ErrnoException) => e.code !== 'ENOENT',
    ),
  ]);
  if (!walked || reftable) return null;
  const packedText = await readFile(join(commonDir, 'packed-refs'), 'utf8').catch((e: NodeJS.ErrnoException) =>
    e.code === 'ENOENT' ? '' : null,
  );
  const packed = packedText === null ? null : packedRefs(packedText);
  if (!packed) return null;
  const out = new Map(packed);
  for (const [name, text] of loose) {
    if (SHA.test(text)) {
      out.set(name, text);
      continue;
    }
    const target = /^ref: (refs\/\S+)$/.exec(text)?.[1];
    const direct = target === undefined ? undefined : loose.has(target) ? loose.get(target) : packed.get(target);
    if (direct === undefined || !SHA.test(direct)) return null;
    out.set(name, direct);
  }
  return out;
}
