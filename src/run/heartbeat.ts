/**
 * The heartbeat of a claim (docs/run.md §1 item 4.3): every `--heartbeat` seconds the lease is renewed with
 * `--attempt`. A refused heartbeat (NotOwner, LeaseExpired, AttemptMismatch) aborts the step: the worker
 * kills its child processes and claims again without committing. A timer in the event loop, so a slow
 * child of another worker never delays it.
 */
import { isClaimLost, type TugError } from '../contract/errors.js';
import type { RunCtx } from './context.js';
import { stateCallIn } from './context.js';

export interface Beat {
  /** Aborted when the claim is lost (or the run stops). */
  signal: AbortSignal;
  /** The refusal that lost the claim, if any. */
  lost(): TugError | null;
  /** Renew now (before integrating); throws the refusal. */
  now(): Promise<void>;
  stop(): void;
}

export function startHeartbeat(rc: RunCtx, worktree: string, step: string, attempt: number): Beat {
  const ac = new AbortController();
  let lostErr: TugError | null = null;
  const onStop = () => ac.abort();
  rc.stop.signal.addEventListener('abort', onStop, { once: true });
  const renew = async (): Promise<void> => {
    try {
      await rc.store.heartbeat(stateCallIn(rc, worktree), {
        plan: rc.prep.planPath,
        step,
        worktree,
        attempt,
        lease_seconds: rc.opts.leaseSeconds,
      });
    } catch (e) {
      if (isClaimLost(e)) {
        lostErr ??= e;
        ac.abort();
      }
      throw e;
    }
  };
  const timer = setInterval(() => {
    renew().catch(() => undefined); // a Busy beat is retried at the next tick; a refusal aborted above
  }, rc.opts.heartbeatMs);
  timer.unref();
  return {
    signal: ac.signal,
    lost: () => lostErr,
    now: renew,
    stop() {
      clearInterval(timer);
      rc.stop.signal.removeEventListener('abort', onStop);
    },
  };
}
