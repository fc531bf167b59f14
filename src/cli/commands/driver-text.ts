/** The line `status` and `state show` print for a plan whose run died (docs/git.md §6, docs/state.md §5). */

/**
 * `r`: the plan's `run_driver` (src/gitflow/run-driver.ts); its claims stay until they expire or a new run
 * takes them over. `now` (the CLI's clock): claims whose last lease is past are said to have expired, at when.
 */
export function deadDriverLine(
  planPath: string,
  r: { pid: number; claims_expire_at: string | null; command: string },
  now: string,
): string {
  const gone = `${planPath}: driver pid ${r.pid} is gone`;
  if (!r.claims_expire_at) return `${gone}; it holds no claims — ${r.command} takes its lock over`;
  // Timestamps are fixed-width ISO UTC: string order is time order (src/clock.ts).
  return r.claims_expire_at <= now
    ? `${gone}; its claims expired at ${r.claims_expire_at} — rerun ${r.command} to take the plan up again`
    : `${gone}; its claims expire at ${r.claims_expire_at} — rerun ${r.command} to take them over`;
}

/** The dead-driver lines of the plans in `plans`, in order. */
export function deadDriverLines(
  plans: {
    plan_path: string;
    run_driver?: { pid: number; alive: boolean | null; claims_expire_at: string | null; command: string } | null;
  }[],
  now: string,
): string[] {
  return plans.filter((p) => p.run_driver?.alive === false).map((p) => deadDriverLine(p.plan_path, p.run_driver!, now));
}
