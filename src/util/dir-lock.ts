/**
 * A lock directory and its holder: the one implementation behind the run lock (src/run/lock.ts) and the
 * integration lock (src/util/integration-lock.ts); the protocol is described in docs/run.md §1.8.
 *
 * The lock is a directory holding `holder.json` (host, pid, start time, a random token and the user's own
 * fields). It is taken by mkdir, which fails on any directory there, and the holder is written into it
 * after: renaming a made lock into place instead would silently replace an empty directory, which is what an
 * older tugcode's integration lock (proper-lockfile's) is. A lock seen without a holder yet is judged by its
 * age, so it counts as held while it is new. The holder refreshes the directory's mtime; a lock not
 * refreshed within its stale time, or whose holder is a dead process on this host, is taken over, safely
 * against several contenders racing for it: a contender first creates `takeover/` inside it (mkdir: one
 * winner per directory, bound to that directory and not to the path), re-reads the holder to make sure the
 * directory is still the one it judged, and only then makes it its own where it stands (its holder replaced,
 * its time set); the others see `takeover/` (or the new holder) and step back. The path is never empty
 * during a takeover, so no one else can take the lock in between.
 *
 * The file calls are synchronous: each is one small system call, and through the thread pool it waited
 * behind the other workers' file reads and for a turn of a busy event loop — 8–13 ms per hand-over between
 * two integrations of one driver (docs/run.md §1 item 4.7).
 */
import { randomUUID } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
  type Stats,
} from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';

/** What `holder.json` records; a user may add its own fields (the run lock its `run_flags`). */
export interface LockHolder {
  host: string;
  pid: number;
  started_at: string;
  token: string;
}

/** The holder a lock was taken over from: `dead` when its process was gone, else it stopped refreshing. */
export interface TookOver {
  host: string;
  pid: number;
  started_at: string;
  dead: boolean;
}

export interface DirLockSpec {
  /** The lock directory; its name ends in `.lock` and its parent exists. */
  lockDir: string;
  /** A lock not refreshed for this long is taken over. */
  staleMs: number;
  /** How often the holder refreshes it. */
  refreshMs: number;
  started_at: string;
  /** More fields for `holder.json`. */
  extra?: Record<string, unknown>;
}

export interface HeldDirLock {
  readonly holder: LockHolder;
  readonly tookOver: TookOver | null;
  /** True once the lock was found moved or replaced by another process (it is no longer ours alone). */
  readonly compromised: boolean;
  /** Aborted when the lock is compromised. */
  readonly signal: AbortSignal;
  /** Frees the lock when still ours (else leaves it be); throws the file system's error. */
  release(): void;
}

/**
 * Not taken: `held` by a live holder (or one not yet stale), `taking-over` when another contender is taking
 * over a lock whose holder ended, `churn` when the lock kept changing hands while this one tried.
 */
export interface DirLockBusy {
  holder: LockHolder | null;
  why: 'held' | 'taking-over' | 'churn';
}

/** A `takeover/` left this long by a contender that died mid-takeover no longer blocks one. */
const TAKEOVER_STALE_MS = 10_000;

const code = (e: unknown) => (e as NodeJS.ErrnoException | null)?.code;

/**
 * Whether process `pid` of this host runs (EPERM: it does, under another user). A zombie has ended: a
 * killed holder stays one until its parent reaps it, which a PID 1 that never reaps (a container without an
 * init) never does, so Linux's `/proc/<pid>/stat` state `Z` counts as gone.
 */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    return code(e) === 'EPERM';
  }
  try {
    // The state follows the command name in parentheses, which may itself hold spaces and parentheses.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch (e) {
    // No /proc (not Linux): kill's answer stands; the stat gone meanwhile: the process ended.
    return code(e) !== 'ENOENT' || !existsSync('/proc/self');
  }
}

function parseHolder<H extends LockHolder>(text: string): H | null {
  try {
    const h = JSON.parse(text) as H;
    return typeof h?.token === 'string' ? h : null;
  } catch {
    return null;
  }
}

/**
 * The holder recorded in lock directory `dir`: null when unreadable or none is recorded (a lock of an older
 * tugcode, one made by hand), undefined when the directory is gone.
 */
export function readHolder<H extends LockHolder = LockHolder>(dir: string): H | null | undefined {
  try {
    return parseHolder<H>(readFileSync(join(dir, 'holder.json'), 'utf8'));
  } catch (e) {
    if (code(e) !== 'ENOENT' && code(e) !== 'ENOTDIR') return null;
    return statSync(dir, { throwIfNoEntry: false }) ? null : undefined;
  }
}

/** Whether `holder` is a process of this host (not this one) that has ended. */
export function holderDead(holder: LockHolder | null): boolean {
  return holder !== null && holder.host === hostname() && holder.pid !== process.pid && !pidAlive(holder.pid);
}

/** A private sibling of the lock: `<name>.<token>.<stage>.lock`. */
function sibling(lockDir: string, token: string, stage: 'done'): string {
  return `${lockDir.replace(/\.lock$/, '')}.${token}.${stage}.lock`;
}

/** Take the lock once: held, or why not. */
export function tryDirLock(spec: DirLockSpec): { held: HeldDirLock } | { busy: DirLockBusy } {
  const { lockDir } = spec;
  const me: LockHolder = {
    ...spec.extra,
    host: hostname(),
    pid: process.pid,
    started_at: spec.started_at,
    token: randomUUID(),
  };
  let tookOver: TookOver | null = null;
  let last: LockHolder | null = null;
  for (let round = 0; round < 5; round++) {
    // A lock in place is judged without making a private copy first: a waiter polls cheaply.
    if (!existsSync(lockDir) && make(lockDir, me)) return { held: held(spec, me, tookOver) };
    const holder = readHolder(lockDir);
    if (holder === undefined) continue; // released meanwhile: try again
    last = holder;
    const st = statSync(lockDir, { throwIfNoEntry: false });
    if (!st) continue;
    const stale = st.mtimeMs < Date.now() - spec.staleMs;
    const dead = holderDead(holder);
    if (!dead && !stale) return { busy: { holder, why: 'held' } };
    // Only the contender that creates `takeover/` in this very directory may move it aside.
    const mine = claimTakeover(lockDir);
    if (mine === 'gone') continue;
    if (mine === 'taken') return { busy: { holder, why: 'taking-over' } };
    const again = readHolder(lockDir);
    if (again?.token !== holder?.token || (holder === null && again !== null)) {
      // The directory is another, newer lock: our `takeover/` in it is a stray. Remove it (we made it, so
      // no one else owns it), or every contender within TAKEOVER_STALE_MS would see it and step aside.
      rmQuiet(join(lockDir, 'takeover'));
      return { busy: { holder: again ?? holder, why: 'held' } };
    }
    // The directory becomes ours where it stands: its holder replaced in one rename, its time set, the claim
    // removed. The path is never empty meanwhile, so no other contender's mkdir (nor an older tugcode's) can
    // slip in and the lock goes, with its report, to the one that took it over.
    try {
      writeHolder(lockDir, me);
      const t = new Date();
      utimesSync(lockDir, t, t);
    } catch (e) {
      if (code(e) === 'ENOENT') continue; // its holder released it meanwhile: try again
      throw e;
    }
    rmQuiet(join(lockDir, 'takeover'));
    if (holder) tookOver = { host: holder.host, pid: holder.pid, started_at: holder.started_at, dead };
    return { held: held(spec, me, tookOver) };
  }
  return { busy: { holder: last, why: 'churn' } };
}

/** Takes the lock by mkdir (false when any directory is there), then records its holder in it. */
function make(lockDir: string, me: LockHolder): boolean {
  try {
    mkdirSync(lockDir);
  } catch (e) {
    if (code(e) === 'EEXIST') return false;
    throw e;
  }
  try {
    writeHolder(lockDir, me);
  } catch (e) {
    rmSync(lockDir, { recursive: true, force: true });
    throw e;
  }
  return true;
}

/** Records `me` as the holder: written aside and renamed, so a reader never sees half a holder. */
function writeHolder(lockDir: string, me: LockHolder): void {
  const tmp = join(lockDir, `holder.${me.token}.json`);
  writeFileSync(tmp, JSON.stringify(me) + '\n');
  renameSync(tmp, join(lockDir, 'holder.json'));
}

/** Removes our lock `lockDir`: renamed away first, so a lock made in its place meanwhile is never removed. */
function drop(lockDir: string, token: string): void {
  const tomb = sibling(lockDir, token, 'done');
  renameSync(lockDir, tomb);
  rmSync(tomb, { recursive: true, force: true });
}

/** mkdir `takeover/` in the lock directory; a stale one (its maker died) is moved aside first. */
function claimTakeover(lockDir: string): 'mine' | 'taken' | 'gone' {
  const t = join(lockDir, 'takeover');
  for (let i = 0; i < 2; i++) {
    try {
      mkdirSync(t);
      // Who is taking over: a contender killed mid-takeover must not block the next ones for long.
      try {
        writeFileSync(join(t, 'pid'), `${hostname()} ${process.pid}\n`);
      } catch {
        /* without it the claim goes stale by its age */
      }
      return 'mine';
    } catch (e) {
      if (code(e) === 'ENOENT') return 'gone';
      if (code(e) !== 'EEXIST') throw e;
    }
    const st: Stats | undefined = statSync(t, { throwIfNoEntry: false });
    let maker: string[] = [];
    try {
      maker = readFileSync(join(t, 'pid'), 'utf8').trim().split(' ');
    } catch {
      /* no maker named */
    }
    const makerDead = maker.length === 2 && maker[0] === hostname() && !pidAlive(Number(maker[1]));
    if (st && !makerDead && st.mtimeMs >= Date.now() - TAKEOVER_STALE_MS) return 'taken';
    try {
      renameSync(t, `${t}.${randomUUID()}`);
    } catch {
      /* moved aside by another contender */
    }
  }
  return 'taken';
}

function rmQuiet(path: string): void {
  try {
    rmSync(path, { recursive: true, force: true });
  } catch {
    /* best effort */
  }
}

function held(spec: DirLockSpec, me: LockHolder, tookOver: TookOver | null): HeldDirLock {
  const { lockDir } = spec;
  const ac = new AbortController();
  let released = false;
  const refresh = () => {
    if (released || ac.signal.aborted) return;
    if (readHolder(lockDir)?.token !== me.token) {
      ac.abort();
      return;
    }
    const t = new Date();
    try {
      utimesSync(lockDir, t, t);
    } catch {
      /* checked again at the next refresh */
    }
    // A `takeover/` in a live lock is a stray of a contender that judged an older lock (it backs off).
    rmQuiet(join(lockDir, 'takeover'));
  };
  const timer = setInterval(refresh, spec.refreshMs);
  timer.unref();
  return {
    holder: me,
    tookOver,
    get compromised() {
      return ac.signal.aborted;
    },
    signal: ac.signal,
    release() {
      released = true;
      clearInterval(timer);
      if (readHolder(lockDir)?.token !== me.token) return; // not ours any more: leave it be
      drop(lockDir, me.token);
    },
  };
}
