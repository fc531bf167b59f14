/**
 * The short transactions of `refactor run-step` (docs/kernel.md §7.3): the start of a run (--retry-failed and
 * recovery of an interrupted pending write), the pending write before `apply`, and the recorded result with
 * its `refactor_report` artifact. Each re-checks ownership fenced by the scope's attempt and appends one
 * event; the caller runs kernel operations between them.
 */
import { TugError } from '../contract/errors.js';
import type { StateContext } from './context.js';
import { invalidTransition } from './owner.js';
import { writeStore } from './plan-ref.js';
import { insertArtifact } from './queries/events.js';
import { getRefactor, refactorsOfStep, setRefactor } from './queries/refactors.js';
import { SUMMARY_MAX_CODE_POINTS, CONTENT_MAX_CODE_POINTS } from './status.js';
import { truncateCodePoints } from './artifact.js';
import {
  json,
  owned,
  recordScopeEvent,
  renew,
  view,
  withoutPending,
  type PendingWrite,
  type RefactorScope,
  type RefactorView,
} from './refactor-scope.js';

export type RecoveryOutcome = 'applied' | 'cleared' | 'failed';

export interface RunStart {
  rows: RefactorView[];
  /** Ordinals reset from failed to open by --retry-failed. */
  retried: number[];
  recovered: { ordinal: number; outcome: RecoveryOutcome }[];
}

/** Does this open row carry a pending write of this worktree and attempt? */
export function ownPending(r: RefactorView, scope: RefactorScope): PendingWrite | null {
  const p = r.result?.pending as PendingWrite | undefined;
  if (r.status !== 'open' || !p || typeof p !== 'object') return null;
  return p.worktree === scope.worktree && p.attempt === scope.attempt ? p : null;
}

/**
 * run-step setup 4–5 in one transaction: with `retry_failed`, failed rows return to open (the old result
 * kept under `previous`); then open rows with a pending write of this worktree and attempt are recovered
 * against `current_snapshot` (applied with `recovered: true`, pending cleared, or failed with
 * SnapshotMismatch). Appends one event when a row changed.
 */
export async function startRefactorRun(
  ctx: StateContext,
  scope: RefactorScope,
  o: { retry_failed: boolean; current_snapshot: string | null },
): Promise<RunStart> {
  const store = writeStore(ctx);
  return store.write(async (c) => {
    const now = ctx.clock.now();
    const s = await owned(c, scope, scope.attempt);
    const out: RunStart = { rows: [], retried: [], recovered: [] };
    for (const r of (await refactorsOfStep(c, scope.plan_path, scope.step_anchor)).map(view)) {
      if (o.retry_failed && r.status === 'failed') {
        await setRefactor(c, {
          ...r,
          status: 'open',
          snapshot_before: null,
          snapshot_after: null,
          exit_code: null,
          result_json: json({ previous: withoutPrevious(r.result) }),
          updated_at: now,
        });
        out.retried.push(r.ordinal);
        continue;
      }
      const p = o.current_snapshot === null ? null : ownPending(r, scope);
      if (!p) continue;
      const rest = withoutPending(r.result);
      if (o.current_snapshot === p.snapshot_after) {
        await setRefactor(c, {
          ...r,
          status: 'applied',
          snapshot_before: p.snapshot_before,
          snapshot_after: p.snapshot_after,
          exit_code: 0,
          result_json: json({ ...rest, op_hash: p.op_hash, recovered: true }),
          updated_at: now,
        });
        out.recovered.push({ ordinal: r.ordinal, outcome: 'applied' });
      } else if (o.current_snapshot === p.snapshot_before) {
        await setRefactor(c, {
          ...r,
          snapshot_before: null,
          result_json: Object.keys(rest).length ? json(rest) : null,
          updated_at: now,
        });
        out.recovered.push({ ordinal: r.ordinal, outcome: 'cleared' });
      } else {
        const error = {
          code: 'SnapshotMismatch',
          message: `the workspace is neither before nor after the interrupted write of refactor ${r.ordinal}`,
          details: {
            expected_snapshot_id: p.snapshot_after,
            actual_snapshot_id: o.current_snapshot,
            changed_files: [],
            reason: 'pending_write',
          },
        };
        await setRefactor(c, {
          ...r,
          status: 'failed',
          snapshot_before: p.snapshot_before,
          snapshot_after: null,
          exit_code: 4,
          result_json: json({ ...rest, op_hash: p.op_hash, error }),
          updated_at: now,
        });
        out.recovered.push({ ordinal: r.ordinal, outcome: 'failed' });
      }
    }
    if (out.retried.length || out.recovered.length) {
      await recordScopeEvent(ctx, c, scope, s.top.attempt, now, { retried: out.retried, recovered: out.recovered });
    }
    out.rows = (await refactorsOfStep(c, scope.plan_path, scope.step_anchor)).map(view);
    return out;
  });
}

function withoutPrevious(r: Record<string, unknown> | null): Record<string, unknown> | null {
  if (r === null) return null;
  const { previous: _p, ...rest } = r;
  return rest;
}

/**
 * run-step row step 6, before `apply`: in one transaction re-check ownership, write `pending` on the open
 * row, and renew the lease. A lost lease throws the ownership error and writes nothing.
 */
export async function writePending(
  ctx: StateContext,
  scope: RefactorScope,
  ordinal: number,
  pending: PendingWrite,
): Promise<void> {
  const store = writeStore(ctx);
  await store.write(async (c) => {
    const now = ctx.clock.now();
    const s = await owned(c, scope, scope.attempt);
    const r = await getRefactor(c, scope.plan_path, scope.step_anchor, ordinal);
    if (!r)
      throw new TugError('InternalError', { reason: `refactor row ${ordinal} of ${scope.step_anchor} is missing` });
    if (r.status !== 'open')
      throw invalidTransition(scope.plan_path, s.step, `refactor ${ordinal} is ${r.status}`, { ordinal });
    const lease = await renew(ctx, c, s, scope.worktree, now);
    await setRefactor(c, {
      ...r,
      snapshot_before: pending.snapshot_before,
      result_json: json({ ...withoutPending(view(r).result), pending }),
      updated_at: now,
    });
    await recordScopeEvent(ctx, c, scope, s.top.attempt, now, {
      ordinal,
      pending,
      lease_expires_at: lease.lease_expires_at,
      ...(lease.revived ? { revived: true } : {}),
    });
  });
}

export interface RefactorOutcome {
  ordinal: number;
  status: 'applied' | 'failed';
  snapshot_before: string | null;
  snapshot_after: string | null;
  exit_code: number;
  /** The compact result_json (docs/kernel.md §7.2); `pending` is never kept. */
  result: Record<string, unknown>;
  /** The `refactor_report` artifact (summary cut to 500 code points, content to 64 KiB). */
  artifact: { summary: string; content?: string | undefined };
}

/**
 * run-step row step 7 (and failures): record the row, its `refactor_report` artifact and a lease renewal in
 * one transaction, after re-checking ownership. Returns the stored row.
 */
export async function recordRefactorResult(
  ctx: StateContext,
  scope: RefactorScope,
  o: RefactorOutcome,
): Promise<RefactorView> {
  const store = writeStore(ctx);
  return store.write(async (c) => {
    const now = ctx.clock.now();
    const s = await owned(c, scope, scope.attempt);
    const r = await getRefactor(c, scope.plan_path, scope.step_anchor, o.ordinal);
    if (!r)
      throw new TugError('InternalError', { reason: `refactor row ${o.ordinal} of ${scope.step_anchor} is missing` });
    if (r.status !== 'open')
      throw invalidTransition(scope.plan_path, s.step, `refactor ${o.ordinal} is ${r.status}`, { ordinal: o.ordinal });
    const result = withoutPending(o.result);
    await setRefactor(c, {
      ...r,
      status: o.status,
      snapshot_before: o.snapshot_before,
      snapshot_after: o.snapshot_after,
      exit_code: o.exit_code,
      result_json: json(result),
      updated_at: now,
    });
    const summary = truncateCodePoints(o.artifact.summary, SUMMARY_MAX_CODE_POINTS).text;
    const content =
      o.artifact.content === undefined ? null : truncateCodePoints(o.artifact.content, CONTENT_MAX_CODE_POINTS).text;
    const artifact_id = await insertArtifact(c, {
      plan_path: scope.plan_path,
      step_anchor: scope.step_anchor,
      kind: 'refactor_report',
      summary,
      content,
      recorded_at: now,
    });
    const lease = await renew(ctx, c, s, scope.worktree, now);
    await recordScopeEvent(ctx, c, scope, s.top.attempt, now, {
      ordinal: o.ordinal,
      status: o.status,
      exit_code: o.exit_code,
      op_hash: result.op_hash ?? null,
      snapshot_before: o.snapshot_before,
      snapshot_after: o.snapshot_after,
      artifact_id,
      ...(o.status === 'failed' ? { error_code: (result.error as { code?: string } | undefined)?.code ?? null } : {}),
      lease_expires_at: lease.lease_expires_at,
    });
    return view((await getRefactor(c, scope.plan_path, scope.step_anchor, o.ordinal))!);
  });
}
