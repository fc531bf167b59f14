/** The line `status` and `state show` print for a plan whose run died (docs/git.md §6, docs/state.md §5). */

/** `r`: the plan's `run_driver` (src/gitflow/run-driver.ts); its claims stay until they expire or a new run takes them over. */
export function deadDriverLine(
  planPath: string,
  r: { pid: number; claims_expire_at: string | null; command: string },
): string {
  const gone = `${planPath}: driver pid ${r.pid} is gone`;
  return r.claims_expire_at
    ? `${gone}; its claims expire at ${r.claims_expire_at} — rerun ${r.command} to take them over`
    : `${gone}; it holds no claims — ${r.command} takes its lock over`;
}

/** The dead-driver lines of the plans in `plans`, in order. */
export function deadDriverLines(
  plans: {
    plan_path: string;
    run_driver?: { pid: number; alive: boolean | null; claims_expire_at: string | null; command: string } | null;
  }[],
): string[] {
  return plans.filter((p) => p.run_driver?.alive === false).map((p) => deadDriverLine(p.plan_path, p.run_driver!));
}
