/**
 * The repo-wide integration lock `<main root>/.tugtool/integration.lock` (docs/run.md §1 item 4.7): the one
 * lock every integration of a clone takes. A lock directory of src/util/dir-lock.ts (its protocol:
 * docs/run.md §1.8): `holder.json` names the holder, so a lock left by a process killed on this
 * host is taken over at once; a holder on another host, or a lock naming none (an older tugcode's, made
 * through proper-lockfile), goes stale 15 s after its last refresh (every 5 s). Shared by the git flows
 * (src/gitflow/integrate.ts) and the SQLite state store's `integrationLock` (on PostgreSQL the store takes an
 * advisory lock instead, docs/state.md §8).
 */
import { accessSync, constants, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { TugError } from '../contract/errors.js';
import { INTEGRATION_LOCK, TUGTOOL_DIR } from '../contract/layout.js';
import { tryDirLock, type TookOver } from './dir-lock.js';

export const INTEGRATION_LOCK_STALE_MS = 15_000;
export const INTEGRATION_LOCK_REFRESH_MS = 5_000;

/** The lock's release; `tookOver` names the holder it was taken over from (null when it was free). */
export interface IntegrationRelease {
  (): Promise<void>;
  readonly tookOver: TookOver | null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Take the lock (waiting up to `timeoutMs`, else `Busy`); resolves with its release. */
export async function lockIntegrationFile(mainRoot: string, timeoutMs = 60_000): Promise<IntegrationRelease> {
  const dir = join(mainRoot, TUGTOOL_DIR);
  mkdirSync(dir, { recursive: true });
  const lockDir = join(mainRoot, INTEGRATION_LOCK);
  // A directory that refuses writes is said at once, not waited on for the whole timeout.
  try {
    accessSync(dir, constants.W_OK);
  } catch (e) {
    throw new TugError('NotWritable', {
      path: dir,
      errno: (e as NodeJS.ErrnoException).code,
      reason: 'the integration lock cannot be taken',
    });
  }
  const deadline = Date.now() + timeoutMs;
  // Integrations are short (~15–50 ms): a waiter polls from 5 ms up, or it would idle behind every one.
  for (let wait = 5; ; wait = Math.min(100, Math.ceil(wait * 1.5))) {
    const got = tryDirLock({
      lockDir,
      staleMs: INTEGRATION_LOCK_STALE_MS,
      refreshMs: INTEGRATION_LOCK_REFRESH_MS,
      started_at: new Date().toISOString(),
    });
    if ('held' in got) {
      const lock = got.held;
      const release = async () => {
        try {
          lock.release();
        } catch {
          /* a lock that cannot be removed goes stale; the next integration takes it over */
        }
      };
      return Object.assign(release, { tookOver: lock.tookOver });
    }
    const left = deadline - Date.now();
    if (left <= 0) {
      const h = got.busy.holder;
      throw new TugError(
        'Busy',
        {
          db_path: lockDir,
          timeout_ms: timeoutMs,
          reason: h ? `the integration lock is held by pid ${h.pid} on ${h.host}` : 'the integration lock is held',
        },
        { hint: 'another tugcode commit or run is integrating; retry in a moment' },
      );
    }
    await sleep(Math.min(wait, left));
  }
}
