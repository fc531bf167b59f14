/**
 * `git merge-base --is-ancestor` for the driver's common case without a git process: both commits were
 * written moments ago (the worker's commit, the integration tip) and are loose objects, a few parents
 * apart. The walk reads commit objects from `objects/xx/…` (zlib) and answers only when the loose objects
 * prove the answer; anything else (a packed object, a deep history, replace refs, grafts, a shallow clone)
 * is left to git. Synchronous: a handful of small files, well under a millisecond, where each read through
 * the thread pool waited behind the other workers' I/O.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';

/** Commits read before giving up: a first plain walk, T, the walk that stops at T (the driver needs a handful). */
const FIRST_LIMIT = 8;
const T_LIMIT = 16;
const WALK_LIMIT = 64;

/** A commit object read from its loose file: its parents, and its message as stored (after the header). */
export interface LooseCommit {
  parents: string[];
  message: Buffer;
  /** The header names an `encoding` (git re-encodes such a message before showing or grepping it). */
  encoded: boolean;
}

/** The loose commit `sha` under `objects`, or null when it is not a readable loose commit. */
export function looseCommit(objects: string, sha: string): LooseCommit | null {
  let body: Buffer;
  try {
    body = inflateSync(readFileSync(join(objects, sha.slice(0, 2), sha.slice(2))));
  } catch {
    return null; // not loose (packed, or elsewhere), or unreadable
  }
  const nul = body.indexOf(0);
  if (nul < 0 || !body.subarray(0, nul).toString('latin1').startsWith('commit ')) return null;
  // The header ends at the first blank line (a multi-line header value, a signature, continues with a space).
  const end = body.indexOf('\n\n', nul);
  const header = body.subarray(nul + 1, end < 0 ? body.length : end).toString('latin1');
  const parents: string[] = [];
  let encoded = false;
  let top = true; // only `tree` and `parent` lines come before the author
  for (const line of header.split('\n')) {
    if (top && line.startsWith('parent ')) parents.push(line.slice(7).trim());
    else if (!line.startsWith('tree ')) top = false;
    if (line.startsWith('encoding ')) encoded = true;
  }
  return { parents, message: end < 0 ? Buffer.alloc(0) : body.subarray(end + 2), encoded };
}

/** The parents of a loose commit object, or null when it is not a readable loose commit. */
function parentsOf(objects: string, sha: string): string[] | null {
  return looseCommit(objects, sha)?.parents ?? null;
}

/** Whether anything in the repository changes what git considers a commit's parents. */
export function parentsRewritten(commonDir: string): boolean {
  for (const p of ['shallow', 'info/grafts', 'reftable', 'refs/replace'])
    if (existsSync(join(commonDir, p))) return true;
  let packed = '';
  try {
    packed = readFileSync(join(commonDir, 'packed-refs'), 'utf8');
  } catch {
    /* no packed refs */
  }
  return packed.includes(' refs/replace/');
}

/**
 * Whether `ancestor` is an ancestor of (or equal to) `descendant`, proven from loose objects; null when
 * the files cannot prove it either way (ask git).
 *
 * True: `ancestor` is met walking back from `descendant`. False: the ancestors of `ancestor` (set T) are
 * walked first; then the walk back from `descendant` stops at any commit of T and must end there on every
 * path. Every commit where it stopped is a strict ancestor of `ancestor` (it is in T and is not `ancestor`),
 * so `ancestor` cannot be behind it; and it was not met on the walked part either.
 */
export function isAncestorFromFiles(commonDir: string, ancestor: string, descendant: string): boolean | null {
  if (ancestor === descendant) return true;
  if (parentsRewritten(commonDir)) return null;
  const objects = join(commonDir, 'objects');
  // T: `ancestor` and its ancestors, as far as the loose objects and the limit go. Built only when the
  // plain walk (the common "yes, a few commits back") did not meet `ancestor`.
  const behind = new Set<string>([ancestor]);
  const grow = () => {
    const queue = [ancestor];
    while (queue.length > 0 && behind.size < T_LIMIT) {
      const parents = parentsOf(objects, queue.shift()!);
      if (!parents) return; // not loose: T stays partial, so the walk below ends less often
      for (const p of parents)
        if (!behind.has(p)) {
          behind.add(p);
          queue.push(p);
        }
    }
  };
  const walk = (limit: number): boolean | null => {
    const seen = new Set<string>();
    const todo = [descendant];
    while (todo.length > 0) {
      const c = todo.pop()!;
      if (c === ancestor) return true;
      if (seen.has(c)) continue;
      seen.add(c);
      if (behind.has(c)) continue; // a strict ancestor of `ancestor`: nothing behind it can be `ancestor`
      if (seen.size > limit) return null;
      const parents = parentsOf(objects, c);
      if (!parents) return null;
      todo.push(...parents); // none: a root commit, and not `ancestor`
    }
    return false;
  };
  const first = walk(FIRST_LIMIT); // false here: the whole history was walked
  if (first !== null) return first;
  grow();
  return walk(WALK_LIMIT);
}
