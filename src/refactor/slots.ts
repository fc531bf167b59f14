/**
 * Kernel concurrency slots across worktrees (docs/kernel.md §7.6): `max_concurrent_sessions` proper-lockfile
 * locks on `os.tmpdir()/tugcode-kernel-slots-<sha12(repo-root realpath)>/slot-<i>`. Taking a slot waits
 * as long as it takes (the caller's `onWait` keeps the lease alive); a crashed holder's lock goes stale.
 * The last release removes the directory (one per repository would otherwise stay in the temp directory for
 * good); a taker that finds it gone between its mkdir and its lock makes it again.
 */
import { mkdirSync, realpathSync, rmdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sha256Hex } from '../kernel/ids.js';

export interface Slot {
  index: number;
  path: string;
  release(): Promise<void>;
}

function slotDir(repoRoot: string): string {
  let real = repoRoot;
  try {
    real = realpathSync.native(repoRoot);
  } catch {
    // keep the given path
  }
  return join(tmpdir(), `tugcode-kernel-slots-${sha256Hex(real).slice(0, 12)}`);
}

export interface SlotOptions {
  repoRoot: string;
  slots: number;
  /** Called between polls while every slot is busy; it may throw to abort the wait (a lost lease). */
  onWait?: () => void | Promise<void>;
  pollMs?: number;
  /** Lock staleness (a holder that stopped refreshing its lock this long ago is dead). */
  staleMs?: number;
}

export async function acquireSlot(o: SlotOptions): Promise<Slot> {
  const lockfile = await import('proper-lockfile');
  const dir = slotDir(o.repoRoot);
  mkdirSync(dir, { recursive: true });
  const n = Math.max(1, Math.floor(o.slots));
  const stale = o.staleMs ?? 20_000;
  for (;;) {
    for (let i = 0; i < n; i++) {
      const path = join(dir, `slot-${i}`);
      try {
        const lock = () =>
          lockfile.lock(path, {
            realpath: false,
            stale,
            update: Math.floor(stale / 4),
            retries: 0,
            onCompromised: () => {},
          });
        // The directory is removed by the last release (below): a release between our mkdir and this lock.
        const release = await lock().catch((e: NodeJS.ErrnoException) => {
          if (e.code !== 'ENOENT') throw e;
          mkdirSync(dir, { recursive: true });
          return lock();
        });
        return {
          index: i,
          path,
          release: async () => {
            try {
              await release();
            } catch {
              // already released or compromised: nothing left to free
            }
            try {
              rmdirSync(dir);
            } catch {
              // another slot is held (ENOTEMPTY), or the directory is gone already
            }
          },
        };
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ELOCKED') throw e;
      }
    }
    await o.onWait?.();
    await new Promise((r) => setTimeout(r, o.pollMs ?? 200));
  }
}
