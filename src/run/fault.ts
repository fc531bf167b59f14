/**
 * Fault injection for the crash tests of the driver, honoured only when the context's env has
 * `NODE_ENV=test`: `TUGCODE_RUN_FAULT=<point>:<step>` kills this process with SIGKILL when a worker reaches
 * `<point>` for `<step>` (points: `after-integrate`, right after the fast-forward and before `complete`;
 * `after-resolve`, a conflict's resolution checked and staged but the rebase not continued yet), and
 * `TUGCODE_RUN_FAULT=refuse-fail:<step>` makes the state refuse to record `<step>`'s failed attempt, and
 * `refuse-complete:<step>` its completion, as a full disk would (DiskFull).
 * Reads the env it is given, never `process.env`.
 */
import { TugError } from '../contract/errors.js';

export type FaultPoint = 'after-integrate' | 'after-resolve';

export function faultPoint(env: Record<string, string | undefined>, point: FaultPoint, step: string): void {
  if (env.NODE_ENV !== 'test' || env.TUGCODE_RUN_FAULT !== `${point}:${step}`) return;
  process.kill(process.pid, 'SIGKILL');
}

/** The state refusing a failed attempt's record, as a database that went bad mid-run would (refuse-fail). */
export function failRefused(env: Record<string, string | undefined>, step: string): void {
  if (env.NODE_ENV === 'test' && env.TUGCODE_RUN_FAULT === `refuse-fail:${step}`)
    throw new TugError('DatabaseError', { reason: 'the failed attempt could not be recorded (TUGCODE_RUN_FAULT)' });
}

/** The state refusing a step's completion, as a full disk would (refuse-complete). */
export function completeRefused(env: Record<string, string | undefined>, step: string): void {
  if (env.NODE_ENV === 'test' && env.TUGCODE_RUN_FAULT === `refuse-complete:${step}`)
    throw new TugError('DiskFull', { reason: 'the completion could not be recorded (TUGCODE_RUN_FAULT)' });
}
