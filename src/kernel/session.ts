/**
 * Sessions and locking (docs/kernel.md §12): the `.tug/` directory, the proper-lockfile lock with a bounded
 * wait, `session.json`, journal recovery on open, and snapshot storage (§10.2).
 */
import { existsSync, mkdirSync, readdirSync, realpathSync, rmdirSync, rmSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import lockfile from 'proper-lockfile';
import { readJsonFile, writeAtomic } from './atomic.js';
import { KernelError } from './errors.js';
import type { KernelWarning } from './envelope.js';
import { sha256Hex } from './ids.js';
import { onAbort } from './lifecycle.js';
import { cleanPidFiles, pidFileOwner, readPidFiles, removePidFile } from './session-files.js';
import type { Logger } from './log.js';
import { recoverJournal } from './patch/apply.js';
import type { Snapshot } from './snapshot.js';
import type { KernelClock } from './types.js';

export const KERNEL_VERSION = '0.1.0';

/** The system clock, for callers that inject none. Fixed clocks (TUG_NOW) are the front door's business. */
export const SYSTEM_CLOCK: KernelClock = { now: () => new Date().toISOString() };

const readJson = readJsonFile;

export interface SessionOptions {
  workspace: string;
  sessionDir: string;
  fresh?: boolean;
  lockTimeoutS?: number;
  noWait?: boolean;
  command?: string;
  log?: Logger;
  clock?: KernelClock;
  /**
   * Hold the lock from open to close (a one-shot CLI call, run-step §12.2). Otherwise the lock is taken by
   * each operation (`acquire` / `release`), so a long-lived process with a warm kernel locks nobody out
   * between operations.
   */
  hold?: boolean;
}

export interface LockInfo {
  held: boolean;
  holder_pid: number | null;
  holder_command: string | null;
  since: string | null;
}

export function readLockInfo(sessionDir: string): LockInfo {
  const held = existsSync(join(sessionDir, 'lock.lock'));
  const info = held ? readJson(join(sessionDir, 'lock.json')) : null;
  return {
    held,
    holder_pid: typeof info?.pid === 'number' ? info.pid : null,
    holder_command: typeof info?.command === 'string' ? info.command : null,
    since: typeof info?.acquired_at === 'string' ? info.acquired_at : null,
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class Session {
  private release: (() => Promise<void>) | null = null;
  private unregisterAbort: (() => void) | null = null;
  /** Operations in progress that hold the lock (re-entrant: `run` is prepare → verify → apply). */
  private depth = 0;
  compromised = false;
  waitedSeconds = 0;
  /** Pid files removed on open (session-relative), for `session clean`. */
  removedPidFiles: string[] = [];
  /** Whether this session's open created the directory (a refused command then leaves nothing behind). */
  created = false;
  private readonly clock: KernelClock;

  private constructor(
    readonly dir: string,
    readonly workspace: string,
    private readonly o: SessionOptions,
  ) {
    this.clock = o.clock ?? SYSTEM_CLOCK;
  }

  /** Open (create, lock, validate, recover) per §12.2. Warnings are appended to `warnings`. */
  static async open(o: SessionOptions, warnings: KernelWarning[]): Promise<Session> {
    const s = new Session(o.sessionDir, o.workspace, o);
    s.created = !existsSync(o.sessionDir);
    await s.lock(o, warnings, true);
    if (!o.hold) await s.unlock();
    return s;
  }

  /** Take the lock for one operation (a no-op when it is already held); every call pairs with `done()`. */
  async acquire(warnings: KernelWarning[]): Promise<void> {
    if (this.depth++ > 0 || this.release) return;
    try {
      await this.lock(this.o, warnings, false);
    } catch (e) {
      this.depth = 0;
      throw e;
    }
  }

  /** The end of an operation: the lock goes with the last one, unless the session holds it until close. */
  async done(): Promise<void> {
    if (this.depth > 0) this.depth--;
    if (this.depth === 0 && !this.o.hold) await this.unlock();
  }

  /** Create the directory, lock, then §12.2 steps 3–6 (`first`: the open, with --fresh). */
  private async lock(o: SessionOptions, warnings: KernelWarning[], first: boolean): Promise<void> {
    try {
      mkdirSync(o.sessionDir, { recursive: true });
      if (!existsSync(join(o.sessionDir, '.gitignore'))) writeAtomic(join(o.sessionDir, '.gitignore'), '*\n');
    } catch (e) {
      throw new KernelError('SessionCorrupt', `cannot create session dir ${o.sessionDir}`, {
        path: o.sessionDir,
        reason: String(e),
      });
    }
    await this.takeLock(o);
    try {
      // §12.2 step 5 runs first so that --fresh or a reset never forgets a live orphan's pid file.
      const pids = cleanPidFiles(o.sessionDir);
      if (first) this.removedPidFiles = pids.removed.map((n) => `backends/${n}.pid`);
      if (pids.stopped.length > 0) o.log?.warn('stopped orphaned backends', { backends: pids.stopped });
      if (first && o.fresh) this.wipe(false);
      this.validate(warnings);
      if (recoverJournal(o.workspace, o.sessionDir)) {
        warnings.push({ code: 'RecoveredInterruptedApply', message: 'an interrupted apply was rolled back' });
        o.log?.warn('recovered an interrupted apply');
      }
      this.touch();
      o.log?.info('session open', { session: o.sessionDir, waited_seconds: this.waitedSeconds });
    } catch (e) {
      await this.close();
      throw e;
    }
  }

  private async takeLock(o: SessionOptions): Promise<void> {
    const target = join(o.sessionDir, 'lock');
    const timeoutMs = o.noWait ? 0 : Math.max(0, (o.lockTimeoutS ?? 30) * 1000);
    const started = Date.now();
    this.compromised = false;
    for (;;) {
      try {
        this.release = await lockfile.lock(target, {
          realpath: false,
          stale: 30000,
          update: 5000,
          retries: 0,
          // §12.2: a lost lock aborts the command (assertLockHeld before every write and operation).
          onCompromised: (err) => {
            this.compromised = true;
            o.log?.warn('session lock compromised', { reason: err?.message ?? null });
          },
        });
        break;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ELOCKED') {
          throw new KernelError('SessionCorrupt', `cannot lock ${target}: ${(e as Error).message}`, {
            path: target,
            reason: String(e),
          });
        }
        if (Date.now() - started >= timeoutMs) {
          const info = readLockInfo(o.sessionDir);
          const waited = Math.round((Date.now() - started) / 100) / 10;
          throw new KernelError('SessionLocked', `session ${o.sessionDir} is locked by another process`, {
            lock_holder_pid: info.holder_pid,
            waited_seconds: waited,
            session_dir: o.sessionDir,
          });
        }
        await sleep(200);
      }
    }
    this.waitedSeconds = Math.round((Date.now() - started) / 100) / 10;
    // On SIGINT/SIGTERM the CLI releases the lock synchronously before exiting (lifecycle.ts).
    this.unregisterAbort = onAbort('session lock', () => {
      this.release = null;
      // This process's backends (pid files it owns) stop with it; then the lock goes.
      for (const b of readPidFiles(o.sessionDir)) {
        if (b.pid !== process.pid && b.alive && ownedHere(o.sessionDir, b.name)) {
          try {
            process.kill(b.pid, 'SIGTERM');
          } catch {
            // already gone
          }
        }
        if (ownedHere(o.sessionDir, b.name)) removePidFile(o.sessionDir, b.name);
      }
      rmSync(join(o.sessionDir, 'lock.json'), { force: true });
      lockfile.unlockSync(target, { realpath: false });
    });
    writeAtomic(
      join(o.sessionDir, 'lock.json'),
      JSON.stringify({
        pid: process.pid,
        command: o.command ?? 'kernel',
        hostname: hostname(),
        acquired_at: this.clock.now(),
      }),
    );
  }

  private validate(warnings: KernelWarning[]): void {
    const real = realpathSync(this.workspace);
    const cur = readJson(join(this.dir, 'session.json'));
    if (cur && cur.workspace_root === real && cur.version === '1') return;
    if (existsSync(join(this.dir, 'session.json'))) {
      this.wipe(false);
      warnings.push({
        code: 'SessionReset',
        message: 'the session was recreated (moved workspace or unreadable session.json)',
      });
    }
    const now = this.clock.now();
    writeAtomic(
      join(this.dir, 'session.json'),
      JSON.stringify({
        version: '1',
        created_at: now,
        last_accessed: now,
        workspace_root: real,
        workspace_root_hash: sha256Hex(real).slice(0, 12),
        kernel_version: KERNEL_VERSION,
      }),
    );
  }

  private touch(): void {
    const cur = readJson(join(this.dir, 'session.json'));
    if (cur) writeAtomic(join(this.dir, 'session.json'), JSON.stringify({ ...cur, last_accessed: this.clock.now() }));
  }

  /** InternalError once proper-lockfile reports the lock compromised (another process may own it now). */
  assertLockHeld(): void {
    if (this.compromised) {
      throw new KernelError('InternalError', `the session lock on ${this.dir} was compromised; nothing was written`, {
        message: 'session lock compromised',
      });
    }
  }

  /** Remove caches (or everything but the lock artefacts when `all`). Returns removed names and bytes. */
  wipe(cachesOnly: boolean): { removed: string[]; bytes: number } {
    const keep = new Set(['lock', 'lock.lock', 'lock.json', '.gitignore', 'apply.journal.json', 'apply-backup']);
    // `analyses/` is written by no current version (§10.2) but may remain in older sessions.
    const caches = new Set(['snapshots', 'analyses', 'baselines', 'logs', 'cargo-target']);
    const removed: string[] = [];
    let bytes = 0;
    if (cachesOnly) {
      // Stale pid files (dead processes); live ones belong to this session's open backends.
      for (const b of readPidFiles(this.dir)) {
        if (b.alive) continue;
        bytes += dirBytes(join(this.dir, 'backends', `${b.name}.pid`));
        removePidFile(this.dir, b.name);
        removed.push(`backends/${b.name}.pid`);
      }
    }
    for (const name of readdirSync(this.dir)) {
      if (keep.has(name)) continue;
      if (cachesOnly && !caches.has(name)) continue;
      bytes += dirBytes(join(this.dir, name));
      rmSync(join(this.dir, name), { recursive: true, force: true });
      removed.push(name);
    }
    return { removed: removed.sort(), bytes };
  }

  /** The id this session last stored: a warm kernel re-snapshots before every operation, mostly unchanged. */
  private storedId: string | null = null;

  storeSnapshot(s: Snapshot): void {
    const dir = join(this.dir, 'snapshots');
    if (s.id === this.storedId && existsSync(join(dir, `${s.id}.json`))) return;
    mkdirSync(dir, { recursive: true });
    const files: Record<string, { sha256: string; size: number }> = {};
    for (const [p, v] of s.files) files[p] = v;
    writeAtomic(
      join(dir, `${s.id}.json`),
      JSON.stringify({
        snapshot_id: s.id,
        created_at: this.clock.now(),
        file_count: s.files.size,
        total_bytes: s.total_bytes,
        files,
      }),
    );
    writeAtomic(join(dir, 'current'), s.id);
    const stored = listSnapshots(this.dir);
    for (const old of stored.slice(5)) rmSync(join(dir, `${old}.json`), { force: true });
    this.storedId = s.id;
  }

  loadInventory(id: string): Map<string, { sha256: string; size: number }> | null {
    const j = readJson(join(this.dir, 'snapshots', `${id}.json`));
    if (!j?.files) return null;
    return new Map(Object.entries(j.files as Record<string, { sha256: string; size: number }>));
  }

  private async unlock(): Promise<void> {
    const rel = this.release;
    this.release = null;
    this.unregisterAbort?.();
    this.unregisterAbort = null;
    if (rel) {
      rmSync(join(this.dir, 'lock.json'), { force: true });
      await rel().catch(() => undefined);
    }
  }

  /**
   * Release the lock. `discard` (a refused command): a session directory this session created is removed
   * again, so a refused command leaves nothing behind; its contents go while the lock is still held, the
   * lock artefacts and the directory after (the directory only if nobody else has put anything in it).
   */
  async close(o: { discard?: boolean } = {}): Promise<void> {
    this.depth = 0;
    const discard = o.discard && this.created && this.release !== null;
    if (discard) {
      for (const name of readdirSync(this.dir)) {
        if (name === 'lock' || name === 'lock.lock' || name === 'lock.json') continue;
        rmSync(join(this.dir, name), { recursive: true, force: true });
      }
    }
    await this.unlock();
    if (discard) {
      rmSync(join(this.dir, 'lock'), { force: true });
      try {
        rmdirSync(this.dir);
      } catch {
        // another process started using the directory: it is theirs now
      }
    }
  }
}

/** Whether a pid file was written by this process (its owner line), or has no owner line (legacy). */
function ownedHere(sessionDir: string, name: string): boolean {
  const owner = pidFileOwner(sessionDir, name);
  return owner === null || owner === process.pid;
}

/** Stored snapshot ids, most recent first. */
export function listSnapshots(sessionDir: string): string[] {
  const dir = join(sessionDir, 'snapshots');
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((n) => n.startsWith('snap_') && n.endsWith('.json'))
    .map((n) => ({ id: n.slice(0, -5), t: statSync(join(dir, n)).mtimeMs }))
    .sort((a, b) => b.t - a.t || (a.id < b.id ? -1 : 1))
    .map((x) => x.id);
}

export function dirBytes(p: string): number {
  try {
    const st = statSync(p);
    if (!st.isDirectory()) return st.size;
    return readdirSync(p).reduce((n, c) => n + dirBytes(join(p, c)), 0);
  } catch {
    return 0;
  }
}

export function readSessionJson(sessionDir: string): any {
  return readJson(join(sessionDir, 'session.json'));
}

export {
  pidFileOwner,
  readToolchains,
  recordToolchain,
  writePidFile,
  removePidFile,
  readPidFiles,
  cleanPidFiles,
  type ToolchainName,
  type BackendPid,
} from './session-files.js';
