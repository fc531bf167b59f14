/**
 * The opt-in timing trace of the git flows the driver calls (commit, integrate): a caller that wants
 * timings passes a TraceFn; without one nothing is measured. Core code never prints a span itself.
 */

/** Records the span `name` from `start` (epoch ms) to now. */
export type TraceFn = (name: string, start: number) => void;

/** `fn()`, its duration traced as `name` when `tr` is set. */
export async function timed<T>(tr: TraceFn | undefined, name: string, fn: () => Promise<T>): Promise<T> {
  if (!tr) return fn();
  const start = Date.now();
  try {
    return await fn();
  } finally {
    tr(name, start);
  }
}
