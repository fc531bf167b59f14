/**
 * The run lock (docs/run.md §1 item 3): the directory `.tugtool/run-<slug>.lock`, held by one `tugcode run` of
 * the plan for its whole lifetime (its mtime refreshed every 5 s; stale after 30 s without a refresh). The
 * directory holds `holder.json` (host, PID, start time and a random token) and is never visible without
 * it: a lock is made whole in a private directory and renamed into place, which fails when a lock exists.
 * A lock whose holder is a dead process on this host is taken over at once, so a killed run never blocks
 * the next one.
 *
 * The takeover is made safe against several restarts racing for the same dead lock (docs/architecture.md,
 * "run lock"): a contender first creates `takeover/` inside the dead lock's directory (mkdir: one winner per
 * directory, bound to that directory and not to the path), re-reads the holder to make sure the directory
 * is still the dead one, and only then moves it aside and makes its own lock; the others see `takeover/`
 * (or the new lock) and get RunInProgress. Renaming the dead lock away, not deleting it by name, means a
 * lock made meanwhile by another contender is never removed by mistake; if it were, the rename is undone.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { constants } from 'node:fs';
import { access, mkdir, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { TugError } from '../contract/errors.js';
import { runLockName, TUGTOOL_DIR } from '../contract/layout.js';
import { pidAlive, readRunHolder, type RunHolder } from '../gitflow/run-driver.js';

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
  readonly tookOver: { host: string; pid: number; started_at: string; dead: boolean } | null;
}

export const RUN_LOCK_STALE_MS = 30_000;
export const RUN_LOCK_REFRESH_MS = 5_000;
/** A `takeover/` left this long by a contender that died mid-takeover no longer blocks one. */
const TAKEOVER_STALE_MS = 10_000;

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
  // The run's flags ride along, so what reports a dead run can say how to run it again (gitflow/run-driver.ts).
  const me: RunHolder = {
    host: hostname(),
    pid: process.pid,
    started_at: now,
    token: randomUUID(),
    ...(o.run_flags ? { run_flags: o.run_flags } : {}),
  };
  let tookOver: RunLock['tookOver'] = null;
  const busy = (h?: RunHolder | null, reason?: string) =>
    new TugError('RunInProgress', {
      plan_path: planPath,
      lock_path: lockDir,
      ...(h ? { holder_host: h.host, holder_pid: h.pid, started_at: h.started_at } : {}),
      ...(reason ? { reason } : {}),
    });
  try {
    await mkdir(dir, { recursive: true });
    for (let round = 0; round < 5; round++) {
      if (await create(dir, lockDir, slug, me)) return held(lockDir, me, tookOver);
      const holder = await readRunHolder(lockDir);
      if (holder === undefined) continue; // released meanwhile: try again
      const st = await stat(lockDir).catch(() => null);
      if (!st) continue;
      const stale = st.mtimeMs < Date.now() - RUN_LOCK_STALE_MS;
      const dead = holder !== null && holder.host === me.host && holder.pid !== process.pid && !pidAlive(holder.pid);
      if (!dead && !stale) throw busy(holder);
      // Only the contender that creates `takeover/` in this very directory may move it aside.
      const mine = await claimTakeover(lockDir);
      if (mine === 'gone') continue;
      if (mine === 'taken') throw busy(holder, 'another run is taking over the lock of a run that ended');
      const again = await readRunHolder(lockDir);
      if (again?.token !== holder?.token || (holder === null && again !== null)) {
        // The directory is another, newer lock: our `takeover/` in it is a stray. Remove it (we made it, so
        // no one else owns it), or every restart within TAKEOVER_STALE_MS would see it and step aside.
        await rm(join(lockDir, 'takeover'), { recursive: true, force: true }).catch(() => undefined);
        throw busy(again ?? holder);
      }
      const tomb = join(dir, runLockName(slug, { token: me.token, stage: 'stale' }));
      try {
        await rename(lockDir, tomb);
      } catch (e) {
        if (code(e) === 'ENOENT') continue;
        throw e;
      }
      const moved = await readRunHolder(tomb);
      if (moved?.token !== holder?.token) {
        // Not the lock we judged dead (it was replaced in between): put it back and step aside.
        await rename(tomb, lockDir).catch(() => undefined);
        throw busy(moved);
      }
      await rm(tomb, { recursive: true, force: true });
      if (holder) tookOver = { host: holder.host, pid: holder.pid, started_at: holder.started_at, dead };
    }
    throw busy(null, 'the lock kept changing hands');
  } catch (e) {
    const refused = await writeRefusal(e, dir);
    if (refused) throw notWritable(dir, refused, 'the run lock cannot be written');
    throw e;
  }
}

/** Makes the lock whole in a private directory, then renames it into place; false when a lock exists. */
async function create(dir: string, lockDir: string, slug: string, me: RunHolder): Promise<boolean> {
  const tmp = join(dir, runLockName(slug, { token: me.token, stage: 'new' }));
  // Not recursive: `dir` exists, and a plain mkdir reports a read-only filesystem as EROFS, not ENOENT.
  await mkdir(tmp);
  await writeFile(join(tmp, 'holder.json'), JSON.stringify(me) + '\n');
  try {
    // rename(2) replaces an existing directory only when it is empty; a lock never is.
    await rename(tmp, lockDir);
    return true;
  } catch (e) {
    await rm(tmp, { recursive: true, force: true });
    if (['EEXIST', 'ENOTEMPTY', 'ENOTDIR', 'EISDIR'].includes(code(e) ?? '')) return false;
    throw e;
  }
}

/** mkdir `takeover/` in the lock directory; a stale one (its maker died) is moved aside first. */
async function claimTakeover(lockDir: string): Promise<'mine' | 'taken' | 'gone'> {
  const t = join(lockDir, 'takeover');
  for (let i = 0; i < 2; i++) {
    try {
      await mkdir(t);
      // Who is taking over: a contender killed mid-takeover must not block the next restarts for long.
      await writeFile(join(t, 'pid'), `${hostname()} ${process.pid}\n`).catch(() => undefined);
      return 'mine';
    } catch (e) {
      if (code(e) === 'ENOENT') return 'gone';
      if (code(e) !== 'EEXIST') throw e;
    }
    const st = await stat(t).catch(() => null);
    const maker = (await readFile(join(t, 'pid'), 'utf8').catch(() => '')).trim().split(' ');
    const makerDead = maker.length === 2 && maker[0] === hostname() && !pidAlive(Number(maker[1]));
    if (st && !makerDead && st.mtimeMs >= Date.now() - TAKEOVER_STALE_MS) return 'taken';
    await rename(t, `${t}.${randomUUID()}`).catch(() => undefined);
  }
  return 'taken';
}

function held(lockDir: string, me: RunHolder, tookOver: RunLock['tookOver']): RunLock {
  const ac = new AbortController();
  let released = false;
  const check = async () => {
    const h = await readRunHolder(lockDir);
    if (h?.token !== me.token) {
      ac.abort();
      return;
    }
    const t = new Date();
    await utimes(lockDir, t, t).catch(() => undefined);
    // A `takeover/` in a live lock is a stray of a contender that judged an older lock (it backs off).
    await rm(join(lockDir, 'takeover'), { recursive: true, force: true }).catch(() => undefined);
  };
  const timer = setInterval(() => {
    if (!released && !ac.signal.aborted) check().catch(() => undefined);
  }, RUN_LOCK_REFRESH_MS);
  timer.unref();
  return {
    get compromised() {
      return ac.signal.aborted;
    },
    signal: ac.signal,
    tookOver,
    async release() {
      released = true;
      clearInterval(timer);
      if ((await readRunHolder(lockDir))?.token !== me.token) return; // not ours any more: leave it be
      const tomb = `${lockDir.replace(/\.lock$/, '')}.${me.token}.done.lock`;
      try {
        await rename(lockDir, tomb);
        await rm(tomb, { recursive: true, force: true });
      } catch (e) {
        if (WRITE_REFUSED.has(code(e) ?? ''))
          throw notWritable(lockDir, e, 'the run lock cannot be removed; delete it once the directory is writable');
        throw e;
      }
    },
  };
}
