/**
 * The repo-wide integration lock file `<main root>/.tugtool/integration.lock` (docs/run.md §1 item 4.7),
 * through proper-lockfile with stale detection: the one lock every integration of a clone takes. Shared by
 * the git flows (src/gitflow/integrate.ts) and the SQLite state store's `integrationLock` (on PostgreSQL the
 * store takes an advisory lock instead, docs/state.md §8).
 */
import { accessSync, constants, mkdirSync, rmdirSync, statSync, utimesSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { TugError } from '../contract/errors.js';
import { INTEGRATION_LOCK, INTEGRATION_LOCK_TARGET, TUGTOOL_DIR } from '../contract/layout.js';

type Callback<T> = (err: NodeJS.ErrnoException | null, value?: T) => void;

/** A synchronous call answered on the next tick, as the callback API proper-lockfile uses. */
function answer<T>(fn: () => T, cb: Callback<T>): void {
  let value: T | undefined;
  let err: NodeJS.ErrnoException | null = null;
  try {
    value = fn();
  } catch (e) {
    err = e as NodeJS.ErrnoException;
  }
  process.nextTick(() => cb(err, value));
}

/**
 * The file calls of the lock (a directory made, its time set and read, removed), synchronous: each is one
 * small system call, and through the thread pool it waited behind the other workers' file reads and for a
 * turn of a busy event loop — 8–13 ms per hand-over between two integrations of one driver.
 */
const lockFs = {
  mkdir: (p: string, cb: Callback<void>) => answer(() => void mkdirSync(p), cb),
  rmdir: (p: string, cb: Callback<void>) => answer(() => rmdirSync(p), cb),
  rmdirSync: (p: string) => rmdirSync(p),
  stat: (p: string, cb: Callback<import('node:fs').Stats>) => answer(() => statSync(p), cb),
  utimes: (p: string, a: Date, m: Date, cb: Callback<void>) => answer(() => utimesSync(p, a, m), cb),
  realpath: (p: string, cb: Callback<string>) => answer(() => realpathSync(p), cb),
};

/** Take the lock (waiting up to `timeoutMs`, else `Busy`); resolves with its release. */
export async function lockIntegrationFile(mainRoot: string, timeoutMs = 60_000): Promise<() => Promise<void>> {
  const lockfile = await import('proper-lockfile');
  const dir = join(mainRoot, TUGTOOL_DIR);
  mkdirSync(dir, { recursive: true });
  const target = join(mainRoot, INTEGRATION_LOCK_TARGET);
  const lockfilePath = join(mainRoot, INTEGRATION_LOCK);
  // proper-lockfile retries every error for the whole timeout: a directory that refuses writes is said at once.
  try {
    accessSync(dir, constants.W_OK);
  } catch (e) {
    throw new TugError('NotWritable', {
      path: dir,
      errno: (e as NodeJS.ErrnoException).code,
      reason: 'the integration lock cannot be taken',
    });
  }
  let release: () => Promise<void>;
  try {
    release = await lockfile.lock(target, {
      realpath: false,
      lockfilePath,
      fs: lockFs,
      stale: 15_000,
      update: 5_000,
      // Integrations are short (~15–50 ms): a waiter polls from 5 ms up, or it would idle behind every one.
      retries: { retries: Math.max(1, Math.ceil(timeoutMs / 100) + 10), factor: 1.5, minTimeout: 5, maxTimeout: 100 },
      onCompromised: () => {
        /* a compromised lock is reported by the release below; never crash the process from a timer */
      },
    });
  } catch (e) {
    throw new TugError(
      'Busy',
      { db_path: lockfilePath, timeout_ms: timeoutMs, reason: (e as Error).message },
      { hint: 'another tugcode commit or run is integrating; retry in a moment' },
    );
  }
  return () => release().catch(() => undefined);
}
