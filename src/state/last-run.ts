/**
 * The plan's last run (docs/state.md §2, docs/run.md §1.2): the flags of the newest run of the plan that
 * ended, and when. A run's lock records its flags only while it runs; once it ends, what suggests running
 * the plan again (doctor's failed-steps fix, merge's and commit's hints, status) repeats these instead of
 * a placeholder implementer. The words are the ones src/run/run-flags.ts gives the lock (secrets already
 * redacted there); this module stores them as given and never adds any. A store older than the columns
 * remembers no run.
 */
import type { StateContext } from './context.js';
import { LAST_RUN_SCHEMA_VERSION } from './migrate.js';
import { requirePlanRow, resolvePlanRef, writeStore } from './plan-ref.js';
import { getLastRun, setLastRun, type LastRunRow } from './queries/plans.js';
import type { Conn } from './sql/conn.js';

export interface LastRun {
  /** The run's flags as `run_flags` words (src/run/run-flags.ts), `-C DIR` first when it was given one. */
  run_flags: string[];
  /** When the run ended (the store's clock). */
  ended_at: string;
}

/** A stored row as a LastRun; null when none is recorded or the stored words are not a list of strings. */
export function lastRunOf(row: LastRunRow | undefined): LastRun | null {
  if (!row?.last_run_flags || !row.last_run_ended_at) return null;
  let words: unknown;
  try {
    words = JSON.parse(row.last_run_flags);
  } catch {
    return null;
  }
  if (!Array.isArray(words) || !words.every((w) => typeof w === 'string')) return null;
  return { run_flags: words, ended_at: row.last_run_ended_at };
}

/** The plan's last run read on `c`; null on a store older than the columns (`version`) or when none ended. */
export async function lastRunOn(c: Conn, version: number, plan_path: string): Promise<LastRun | null> {
  if (version < LAST_RUN_SCHEMA_VERSION) return null;
  return lastRunOf(await getLastRun(c, plan_path));
}

/** The plan's last run (null: none, or a store older than the columns). Reads only. */
export async function lastRun(ctx: StateContext, input: { plan: string }): Promise<LastRun | null> {
  const store = ctx.store;
  if (!store) return null;
  const ref = await resolvePlanRef(ctx, input.plan);
  return lastRunOn(store, store.version, ref.plan_path);
}

/** Records a run that ended with `run_flags`, replacing the one before; its time is the store's clock. */
export async function recordLastRun(ctx: StateContext, input: { plan: string; run_flags: string[] }): Promise<LastRun> {
  const ref = await resolvePlanRef(ctx, input.plan);
  await requirePlanRow(ctx, ref);
  const store = writeStore(ctx);
  const ended_at = ctx.clock.now();
  await store.write((c) => setLastRun(c, ref.plan_path, JSON.stringify(input.run_flags), ended_at));
  return { run_flags: input.run_flags, ended_at };
}
