/**
 * The run lock (06-run.md §1 item 3): `.tugtool/run-<slug>.lock`, held by one `tugcode run` of the plan for
 * its whole lifetime through proper-lockfile (refreshed every 5 s; stale after 30 s without a refresh).
 * The lock records its holder's host and PID: a lock whose holder is a dead process on this host is taken
 * over at once, so a killed run never blocks the next one.
 */
import { hostname } from 'node:os';
import { join } from 'node:path';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { TugError } from '../contract/errors.js';

export interface RunLock {
  release(): Promise<void>;
  /** True once proper-lockfile reported the lock compromised (another process took it). */
  readonly compromised: boolean;
}

interface Holder {
  host: string;
  pid: number;
  started_at: string;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Take the run lock of `slug`, or throw RunInProgress naming the holder. */
export async function acquireRunLock(mainRoot: string, slug: string, planPath: string, now: string): Promise<RunLock> {
  const lockfile = await import('proper-lockfile');
  const dir = join(mainRoot, '.tugtool');
  await mkdir(dir, { recursive: true });
  const target = join(dir, `run-${slug}`);
  const lockfilePath = join(dir, `run-${slug}.lock`);
  // Named *.lock so the runtime ignore lines and exclude pathspecs cover it (04-git.md §2).
  const holderPath = join(dir, `run-${slug}.holder.lock`);
  const me: Holder = { host: hostname(), pid: process.pid, started_at: now };
  const state = { compromised: false };
  const options = {
    realpath: false,
    lockfilePath,
    stale: 30_000,
    update: 5_000,
    onCompromised: () => {
      state.compromised = true;
    },
  };
  let release: () => Promise<void>;
  try {
    release = await lockfile.lock(target, options);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ELOCKED') throw e;
    const holder = await readFile(holderPath, 'utf8')
      .then((t) => JSON.parse(t) as Holder)
      .catch(() => null);
    if (!holder || holder.host !== me.host || alive(holder.pid) || holder.pid === process.pid)
      throw new TugError('RunInProgress', {
        plan_path: planPath,
        lock_path: lockfilePath,
        ...(holder ? { holder_host: holder.host, holder_pid: holder.pid, started_at: holder.started_at } : {}),
      });
    // The holder died on this host: its lock is ours at once.
    await rm(lockfilePath, { recursive: true, force: true });
    release = await lockfile.lock(target, options).catch(() => {
      throw new TugError('RunInProgress', { plan_path: planPath, lock_path: lockfilePath });
    });
  }
  await writeFile(holderPath, JSON.stringify(me) + '\n');
  return {
    get compromised() {
      return state.compromised;
    },
    async release() {
      await rm(holderPath, { force: true });
      await release().catch(() => undefined);
    },
  };
}
