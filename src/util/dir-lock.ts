/**
 * A lock directory and its holder: the one implementation behind the run lock (src/run/lock.ts) and the
 * integration lock (src/util/integration-lock.ts); the protocol is described in docs/run.md §1.8.
 *
 * In short (the whole protocol and its reasons: docs/run.md §1.8): a lock is taken by mkdir, its holder
 * written into it by rename; a stale or dead holder's lock is taken over where it stands, under a
 * `takeover/` claim that carries the new holder record, so the path is never empty and a holder is only
 * replaced under a claim still ours.
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
  /**
   * Adds `fields` to our `holder.json` (the run lock's `workers`, known only once it is held), when the lock is
   * still ours: false when it is not. Its own fields (host, pid, started_at, token) stay. Throws the file
   * system's error.
   */
  record(fields: Record<string, unknown>): boolean;
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
    // Only the contender that creates `takeover/` in this very directory may take it over.
    const mine = claimTakeover(lockDir, me);
    if (mine === 'gone') continue;
    if (mine === 'taken') return { busy: { holder, why: 'taking-over' } };
    const again = readHolder(lockDir);
    const same = sameDirectory(statSync(lockDir, { throwIfNoEntry: false }), st);
    if (!same || again?.token !== holder?.token || (holder === null && again !== null)) {
      // The directory is another, newer lock (holder-less ones told apart by their inode and birth): our `takeover/` in
      // it is a stray. Remove it (we made it, so no one else owns it), or every contender within
      // TAKEOVER_STALE_MS would see it and step aside.
      dropClaim(lockDir, me);
      if (!same) continue;
      return { busy: { holder: again ?? holder, why: 'held' } };
    }
    // The directory becomes ours where it stands: its time set, then our holder (written into our claim
    // when we made it) renamed over the old one. The rename fails when our claim is gone (the directory was
    // released, or our claim judged stale and moved aside by another contender), so the holder is only ever
    // replaced under a claim still ours; and the path is never empty meanwhile, so no other contender's
    // mkdir (nor an older tugcode's) slips in and the lock goes, with its report, to the one that took it.
    try {
      const t = new Date();
      utimesSync(lockDir, t, t);
      renameSync(join(lockDir, 'takeover', holderFile(me)), join(lockDir, 'holder.json'));
    } catch (e) {
      if (code(e) === 'ENOENT') continue; // our claim or the lock went meanwhile: judge again
      throw e;
    }
    rmQuiet(join(lockDir, 'takeover')); // ours: the rename just went through it
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
  const tmp = join(lockDir, holderFile(me));
  writeFileSync(tmp, JSON.stringify(me) + '\n');
  renameSync(tmp, join(lockDir, 'holder.json'));
}

/** The name `me`'s holder record is written under before it is renamed to `holder.json`. */
const holderFile = (me: LockHolder): string => `holder.${me.token}.json`;

/** Removes our lock `lockDir`: renamed away first, so a lock made in its place meanwhile is never removed. */
function drop(lockDir: string, token: string): void {
  const tomb = sibling(lockDir, token, 'done');
  renameSync(lockDir, tomb);
  rmSync(tomb, { recursive: true, force: true });
}

/**
 * Puts our `takeover/` claim in the lock directory, made whole first in a private directory (who is taking
 * over, and the holder record it will rename into place) and renamed in: the rename fails on another's
 * claim, never empty, so what is at `takeover/` is one contender's own, and no write of ours can land in
 * another's claim. A stale one (its maker died, or it is TAKEOVER_STALE_MS old) is moved aside first.
 */
function claimTakeover(lockDir: string, me: LockHolder): 'mine' | 'taken' | 'gone' {
  const t = join(lockDir, 'takeover');
  const made = join(lockDir, `takeover.${me.token}.new`);
  for (let i = 0; i < 2; i++) {
    try {
      mkdirSync(made);
      // A contender killed mid-takeover must not block the next ones for long: its pid says it died.
      writeFileSync(join(made, 'pid'), `${hostname()} ${process.pid}\n`);
      writeFileSync(join(made, holderFile(me)), JSON.stringify(me) + '\n');
      renameSync(made, t);
      return 'mine';
    } catch (e) {
      rmQuiet(made);
      if (code(e) === 'ENOENT') return 'gone';
      if (!['EEXIST', 'ENOTEMPTY', 'ENOTDIR', 'EISDIR'].includes(code(e) ?? '')) throw e;
    }
    if (!claimStale(t)) return 'taken';
    try {
      renameSync(t, `${t}.${randomUUID()}`);
    } catch {
      /* moved aside by another contender */
    }
  }
  return 'taken';
}

/**
 * Whether two stats are of one directory: the inode, and its birth time where the file system keeps one (a
 * directory removed and made again may get the same inode at once; its birth time is new).
 */
function sameDirectory(a: Stats | undefined, b: Stats): boolean {
  return a !== undefined && a.ino === b.ino && a.birthtimeMs === b.birthtimeMs;
}

/** Removes our `takeover/` claim, found by the holder record we put in it (never another's claim). */
function dropClaim(lockDir: string, me: LockHolder): void {
  if (existsSync(join(lockDir, 'takeover', holderFile(me)))) rmQuiet(join(lockDir, 'takeover'));
}

/** Whether a `takeover/` claim no longer counts: its maker died on this host, or it is TAKEOVER_STALE_MS old. */
function claimStale(t: string): boolean {
  const st: Stats | undefined = statSync(t, { throwIfNoEntry: false });
  if (!st) return true;
  let maker: string[] = [];
  try {
    maker = readFileSync(join(t, 'pid'), 'utf8').trim().split(' ');
  } catch {
    /* no maker named */
  }
  const makerDead = maker.length === 2 && maker[0] === hostname() && !pidAlive(Number(maker[1]));
  return makerDead || st.mtimeMs < Date.now() - TAKEOVER_STALE_MS;
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
    // A stale `takeover/` in a live lock is a stray of a contender that died; a fresh one may be a takeover
    // under way (this lock had gone stale), which must keep its claim.
    const claim = join(lockDir, 'takeover');
    if (existsSync(claim) && claimStale(claim)) rmQuiet(claim);
  };
  const timer = setInterval(refresh, spec.refreshMs);
  timer.unref();
  let holder = me;
  return {
    get holder() {
      return holder;
    },
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
    record(fields) {
      // Only over our own holder: a lock released, or taken over by another, is left be (as release() does).
      if (released || readHolder(lockDir)?.token !== me.token) return false;
      const next: LockHolder = {
        ...holder,
        ...fields,
        host: me.host,
        pid: me.pid,
        started_at: me.started_at,
        token: me.token,
      };
      // Under a `takeover/` claim of its own, as every replacement of a holder is (docs/run.md §1.8): a
      // contender taking the lock over meanwhile (it went stale) keeps it, and this one learns it.
      if (claimTakeover(lockDir, next) !== 'mine') return false;
      let done = false;
      try {
        if (readHolder(lockDir)?.token !== me.token) return false;
        renameSync(join(lockDir, 'takeover', holderFile(next)), join(lockDir, 'holder.json'));
        done = true;
      } catch (e) {
        if (code(e) === 'ENOENT') return false; // the lock, or our claim, went meanwhile
        throw e;
      } finally {
        // Our claim: the rename just went through it, or it still holds our record.
        if (done) rmQuiet(join(lockDir, 'takeover'));
        else dropClaim(lockDir, next);
      }
      holder = next;
      return true;
    },
  };
}
