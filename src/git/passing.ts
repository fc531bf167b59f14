/**
 * Which failed git calls failed only for a moment, and how long to wait before trying them again: the one
 * rule for both runners (exec.ts, asynchronously; fast.ts, with a bounded synchronous pause). Kept apart
 * from both so the hot state path (fast.ts) loads neither simple-git nor the git thread for it.
 */

/**
 * The waits between tries, ~2.5 s in all (docs/git.md §1.2): a call still failing so after them is a
 * GitError.
 */
export const PASSING_WAITS_MS: readonly number[] = [5, 10, 20, 40, 80, 160, 250, 250, 250, 250, 250, 250, 250, 250];

/**
 * git takes the config file's lock without waiting: a config write beside another process's (two
 * `tugcode worktree create` at once) fails at once, having written nothing.
 */
const CONFIG_LOCKED = /could not lock config file/;

/**
 * `git worktree list` reads every work tree's admin directory, and dies when one is half made or half removed
 * by another git at that moment (`fatal: failed to read .git/worktrees/<id>/commondir`: git creates that
 * file, then writes it). A run's workers list the trees while the run adds the next worker's tree, and the
 * state commands' `--worktree` lookup lists them beside a run's `git worktree add`.
 */
const ADMIN_DIR_CHANGING = /failed to read .*\/worktrees\/[^/\n]+\/commondir/;

/** Whether a failed git call failed only for a moment (another git's lock or admin directory): try it again. */
export function passing(args: readonly string[], stderr: string): boolean {
  if (args[0] === 'config') return CONFIG_LOCKED.test(stderr);
  return args[0] === 'worktree' && args[1] === 'list' && ADMIN_DIR_CHANGING.test(stderr);
}
