/**
 * Who holds a plan's run lock (docs/run.md §1 item 3), read without taking it through the lock's own reader
 * (src/util/dir-lock.ts), for what reports a run that died (`status`, `state show`, `doctor`'s dead-runs, the
 * board). A holder on this host whose pid is gone is a dead driver: its claims stay until their leases expire
 * or the next run of the plan takes them over.
 */
import { statSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { runPlanCommand } from '../contract/errors.js';
import { runLockName, TUGTOOL_DIR } from '../contract/layout.js';
import { slugOfPlanPath } from '../plan/resolve.js';
import { pidAlive, readHolder, type LockHolder } from '../util/dir-lock.js';

export interface RunHolder extends LockHolder {
  /** The flags of the holding run that shape it (src/run/run-flags.ts), for a command that runs it again. */
  run_flags?: string[];
  /** The workers the run started (docs/run.md §1.8), recorded once it knows them; absent before, or from an older tugcode. */
  workers?: number;
}

/** The driver a plan's run lock names; `alive` is null when it is on another host (this one cannot tell). */
export interface RunDriver {
  pid: number;
  host: string;
  started_at: string;
  alive: boolean | null;
  /** The recorded flags of that run (absent in a lock of an older tugcode). */
  run_flags?: string[];
  /** The workers that run started (absent until it knows them, and in a lock of an older tugcode). */
  workers?: number;
}

export function runLockDir(mainRoot: string, slug: string): string {
  return join(mainRoot, TUGTOOL_DIR, runLockName(slug));
}

/** The driver holding the run lock of `slug`, or null when no lock (or an unreadable one) is there. */
export function runDriverOf(mainRoot: string, slug: string): RunDriver | null {
  const dir = runLockDir(mainRoot, slug);
  const h = readHolder<RunHolder>(dir);
  if (!h || typeof h.pid !== 'number' || typeof h.host !== 'string') return null;
  return {
    pid: h.pid,
    host: h.host,
    started_at: String(h.started_at),
    alive: h.host === hostname() ? pidAlive(h.pid) : null,
    ...(Array.isArray(h.run_flags) && h.run_flags.every((w) => typeof w === 'string')
      ? { run_flags: h.run_flags }
      : {}),
    ...(typeof h.workers === 'number' && Number.isInteger(h.workers) && h.workers > 0 ? { workers: h.workers } : {}),
  };
}

/**
 * Whether the run lock of `slug` was refreshed within its stale time (src/run/lock.ts: every 5 s, stale after
 * 30 s): what tells a live holder on another host, whose pid this host cannot check.
 */
export function runLockFresh(mainRoot: string, slug: string, staleMs = 30_000): boolean {
  try {
    return statSync(runLockDir(mainRoot, slug)).mtimeMs >= Date.now() - staleMs;
  } catch {
    return false;
  }
}

/**
 * The `tugcode run` that takes a plan up again: with the flags its last run recorded when they are known
 * (the same implementer, reviewer, workers …), else with the configured implementer, else with a placeholder
 * for it; a bare `tugcode run <plan>` would run without one (docs/run.md §2).
 */
export function runCommandFor(
  planPath: string,
  o: { run_flags?: string[] | undefined; run: { implementer?: string; agent?: string } },
): string {
  return runPlanCommand({
    plan_path: planPath,
    run_flags: o.run_flags,
    implementer_configured: Boolean(o.run.implementer || o.run.agent),
  });
}

/**
 * A run lock's holder as `status` and `state show` report it (docs/git.md §6, docs/state.md §4): `alive`
 * false when its pid on this host is gone (its claims stay until `claims_expire_at`, or until `command`, a
 * new run, takes them over), null when it is on another host.
 */
export interface RunDriverLine {
  pid: number;
  host: string;
  started_at: string;
  alive: boolean | null;
  /** When the last of the plan's claimed steps' leases runs out; null when no step is claimed. */
  claims_expire_at: string | null;
  /**
   * The run that takes the plan up again: the dead run's recorded flags, else (a lock without them, an older
   * tugcode's) the plan's last run's, else a placeholder implementer.
   */
  command: string;
  /**
   * The workers the run started (docs/git.md §6), else (a lock of an older tugcode, or a run still starting)
   * its `--workers` when its recorded flags give it; null otherwise.
   */
  workers: number | null;
  /** Its `--workers` when it started fewer (the plan could keep no more busy: docs/run.md §1 item 3). */
  workers_requested?: number;
}

/** The positive number a run's recorded flags give `flag` (`--workers`, `--stall-seconds`); null otherwise. */
export function flagNumber(flags: string[] | undefined, flag: string): number | null {
  const i = flags?.indexOf(flag) ?? -1;
  const n = i >= 0 ? Number(flags![i + 1]) : NaN;
  return Number.isFinite(n) && n > 0 ? n : null;
}

/**
 * The run holding `planPath`'s lock, with when its claims expire (the latest lease of a claimed step), or
 * null when no run holds it. Reads one small file: cheap enough for the hot `state show`. `lastRunFlags`:
 * the plan's last run's (docs/state.md §2), for the command when the lock records none.
 */
export function runDriverLine(
  mainRoot: string,
  planPath: string,
  steps: readonly { status: string; lease_expires_at: string | null }[],
  run: { implementer?: string; agent?: string },
  lastRunFlags?: string[],
): RunDriverLine | null {
  const slug = slugOfPlanPath(planPath);
  const d = slug === null ? null : runDriverOf(mainRoot, slug);
  return d && driverLine(d, planPath, steps, run, lastRunFlags);
}

const wholeOrNull = (n: number | null): number | null => (n !== null && Number.isInteger(n) ? n : null);

/** runDriverLine of a lock already read. */
export function driverLine(
  d: RunDriver,
  planPath: string,
  steps: readonly { status: string; lease_expires_at: string | null }[],
  run: { implementer?: string; agent?: string },
  lastRunFlags?: string[],
): RunDriverLine {
  const leases = steps
    .filter((s) => (s.status === 'claimed' || s.status === 'in_progress') && s.lease_expires_at !== null)
    .map((s) => s.lease_expires_at!)
    .sort();
  const requested = wholeOrNull(flagNumber(d.run_flags, '--workers'));
  return {
    pid: d.pid,
    host: d.host,
    started_at: d.started_at,
    alive: d.alive,
    claims_expire_at: leases.at(-1) ?? null,
    command: runCommandFor(planPath, { run_flags: d.run_flags ?? lastRunFlags, run }),
    // The holding run's own workers only: the last run's may differ.
    workers: d.workers ?? requested,
    ...(d.workers !== undefined && requested !== null && requested > d.workers ? { workers_requested: requested } : {}),
  };
}

/** The plan's last run that ended as `status` and `state show` report it (docs/state.md §2). */
export interface LastRunLine {
  run_flags: string[];
  ended_at: string;
  /** The `tugcode run` that runs the plan as that run did. */
  command: string;
}

/** The state's last run of `planPath` with the command that repeats it; null when the state records none. */
export function lastRunLine(
  planPath: string,
  last: { run_flags: string[]; ended_at: string } | null,
  run: { implementer?: string; agent?: string },
): LastRunLine | null {
  if (!last) return null;
  return {
    run_flags: last.run_flags,
    ended_at: last.ended_at,
    command: runCommandFor(planPath, { run_flags: last.run_flags, run }),
  };
}
