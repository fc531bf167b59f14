/**
 * Locks a git killed by a signal leaves in the repository's common directory (docs/run.md §1.6): `config.lock`
 * (a `git config` of a branch's plan), `packed-refs.lock` (a `branch -D`) and the lock of a worker or the
 * integration branch's ref, when no worker tree exists yet (a `worktree add -B`), and with `--remote` the
 * remote-tracking refs the run fetches (a `git fetch`). Each makes every later git that writes there fail,
 * so every later run died with GitError until someone removed it by hand. The run removes one at its start,
 * under its run lock, by the rule worktrees.ts uses for a tree's own locks (removeDeadLocks): older than this
 * run (its driver process) and held open by no process.
 */
import { readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { integrationBranch, workerOfBranch } from '../contract/layout.js';
import { heldOpen } from '../util/file-openers.js';

/**
 * Removes the stale locks of `commonDir` a run of plan `slug` may meet (see above); returns the paths removed.
 * Its branches: the integration branch `tugplan/<slug>` and the workers' `tugplan/<slug>--w<k>`.
 */
export function clearStaleRepoLocks(
  commonDir: string,
  slug: string,
  /** `--remote NAME`: its remote-tracking integration and base branches, which the run fetches. */
  remote?: { name: string; base: string },
  runStartMs = performance.timeOrigin,
): string[] {
  const integration = integrationBranch(slug);
  // The plan's branches all sit in the integration branch's directory of refs/heads.
  const parent = integration.split('/').slice(0, -1);
  const refDir = join(commonDir, 'refs', 'heads', ...parent);
  const ours = (lock: string) => {
    const branch = [...parent, lock.slice(0, -'.lock'.length)].join('/');
    return lock.endsWith('.lock') && (branch === integration || workerOfBranch(branch, slug) !== null);
  };
  let refLocks: string[] = [];
  try {
    refLocks = readdirSync(refDir)
      .filter(ours)
      .map((n) => join(refDir, n));
  } catch {
    // no such directory: no branch of the plan yet
  }
  if (remote)
    for (const b of [integration, remote.base])
      refLocks.push(join(commonDir, 'refs', 'remotes', remote.name, ...b.split('/')) + '.lock');
  return removeDeadLocks(
    [join(commonDir, 'config.lock'), join(commonDir, 'packed-refs.lock'), ...refLocks],
    runStartMs,
  );
}

/**
 * Removes each of `locks` that a git killed by a signal left: a file older than this run (its driver process)
 * that no process holds open. Returns the paths removed.
 */
export function removeDeadLocks(locks: readonly string[], runStartMs = performance.timeOrigin): string[] {
  const removed: string[] = [];
  for (const lock of locks) {
    let st;
    try {
      st = statSync(lock);
    } catch {
      continue;
    }
    if (!st.isFile() || st.mtimeMs >= runStartMs || heldOpen(lock)) continue;
    rmSync(lock, { force: true });
    removed.push(lock);
  }
  return removed;
}
