/**
 * The run lock (docs/run.md §1 item 3): the directory `.tugtool/run-<slug>.lock`, held by one `tugcode run` of
 * the plan for its whole lifetime (refreshed every 5 s; stale after 30 s without a refresh). It is a lock
 * directory of src/util/dir-lock.ts (its protocol: docs/run.md §1.8): `holder.json` names the
 * run (and its flags), a lock whose holder is a dead process on this host is taken over at once, so a killed
 * run never blocks the next one. The run tries once: a held lock is RunInProgress naming its holder.
 */
import { access, mkdir, stat } from 'node:fs/promises';
import { constants, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { TugError } from '../contract/errors.js';
import { runLockName, TUGTOOL_DIR, TUGTREE_DIR } from '../contract/layout.js';
import { tryDirLock, type HeldDirLock, type TookOver } from '../util/dir-lock.js';

export interface RunLock {
  /** Frees the lock (when still ours). Throws NotWritable when `.tugtool/` refuses the removal. */
  release(): Promise<void>;
  /** True once the lock was found moved or replaced by another process (it is no longer ours alone). */
  readonly compromised: boolean;
  /** Aborted when the lock is compromised. */
  readonly signal: AbortSignal;
  /**
   * The holder of the lock this run took over (a run that died, or on another host stopped refreshing the
   * lock): its claims are this run's to take over too, which the driver reports (docs/run.md §1 item 3).
   */
  readonly tookOver: TookOver | null;
  /**
   * Adds the workers the run started to its holder record once it knows them (docs/run.md §1.8), for what
   * reports the run (`status`); best effort: a lock no longer ours, or a write refused, leaves it as it was.
   */
  recordWorkers(workers: number): void;
}

export const RUN_LOCK_STALE_MS = 30_000;
export const RUN_LOCK_REFRESH_MS = 5_000;

const code = (e: unknown) => (e as NodeJS.ErrnoException | null)?.code;
const WRITE_REFUSED = new Set(['EACCES', 'EPERM', 'EROFS']);

/**
 * The error of `dir` refusing this process's writes. A recursive mkdir on a read-only filesystem fails
 * with ENOENT (Node's mkdirp hides the EROFS), so an ENOENT is checked against the nearest existing
 * directory: only a refusal there counts, a really missing path stays what it is. Null when not refused.
 */
async function writeRefusal(e: unknown, dir: string): Promise<unknown> {
  if (WRITE_REFUSED.has(code(e) ?? '')) return e;
  if (code(e) !== 'ENOENT') return null;
  for (let d = dir; ; d = dirname(d)) {
    const st = await stat(d).catch(() => null);
    if (st?.isDirectory()) {
      const denied = await access(d, constants.W_OK).then(
        () => null,
        (err: unknown) => err,
      );
      return WRITE_REFUSED.has(code(denied) ?? '') ? denied : null;
    }
    if (dirname(d) === d) return null;
  }
}

/** `.tugtool/` (or a file in it) refuses this process's writes: say which path, not the errno. */
function notWritable(path: string, e: unknown, what: string): TugError {
  return new TugError('NotWritable', { path, errno: code(e), reason: what });
}

/** Take the run lock of `slug`, or throw RunInProgress naming the holder. */
export async function acquireRunLock(
  mainRoot: string,
  slug: string,
  planPath: string,
  now: string,
  o: { run_flags?: string[] } = {},
): Promise<RunLock> {
  const dir = join(mainRoot, TUGTOOL_DIR);
  const lockDir = join(dir, runLockName(slug));
  try {
    await mkdir(dir, { recursive: true });
    const got = tryDirLock({
      lockDir,
      staleMs: RUN_LOCK_STALE_MS,
      refreshMs: RUN_LOCK_REFRESH_MS,
      started_at: now,
      // The run's flags ride along, so what reports a dead run can say how to run it again (gitflow/run-driver.ts).
      ...(o.run_flags ? { extra: { run_flags: o.run_flags } } : {}),
    });
    if ('held' in got) return runLock(lockDir, got.held);
    const h = got.busy.holder;
    throw new TugError('RunInProgress', {
      plan_path: planPath,
      lock_path: lockDir,
      ...(h ? { holder_host: h.host, holder_pid: h.pid, started_at: h.started_at } : {}),
      ...(got.busy.why === 'held' ? {} : { reason: BUSY_REASON[got.busy.why] }),
    });
  } catch (e) {
    const refused = await writeRefusal(e, dir);
    if (refused) throw notWritable(dir, refused, 'the run lock cannot be written');
    if (code(e) === 'ENOSPC') throw diskFull(mainRoot, lockDir);
    throw e;
  }
}

/**
 * The disk is full as the run starts: ENOSPC from writing the lock's holder (a write(2) error, which names
 * no path) says the lock's directory, so the hint's `df -h` looks at the right filesystem whatever `-C`
 * named; and the previous run's worker trees, which an attempt that filled the disk may have left and which
 * this run would reset only once it holds the lock, are named when there are any.
 */
function diskFull(mainRoot: string, lockDir: string): TugError {
  const trees = join(mainRoot, TUGTREE_DIR);
  return new TugError('DiskFull', {
    path: lockDir,
    dir: dirname(lockDir),
    reason: 'the run lock cannot be written (ENOSPC)',
    ...(existsSync(trees) ? { worker_trees: trees } : {}),
  });
}

const BUSY_REASON = {
  'taking-over': 'another run is taking over the lock of a run that ended',
  churn: 'the lock kept changing hands',
} as const;

function runLock(lockDir: string, lock: HeldDirLock): RunLock {
  return {
    get compromised() {
      return lock.compromised;
    },
    signal: lock.signal,
    tookOver: lock.tookOver,
    recordWorkers(workers) {
      try {
        lock.record({ workers });
      } catch {
        /* status then says the requested workers, from the recorded flags */
      }
    },
    async release() {
      try {
        lock.release();
      } catch (e) {
        if (WRITE_REFUSED.has(code(e) ?? ''))
          throw notWritable(lockDir, e, 'the run lock cannot be removed; delete it once the directory is writable');
        throw e;
      }
    },
  };
}
