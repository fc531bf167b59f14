/**
 * The refactor rows of a step (05-kernel.md §7.2–§7.4) as state operations: the setup checks of
 * `refactor run-step`, each of its short transactions (retry/recovery, pending write, result), `refactor
 * skip`, and the read-only views used by `tugcode commit` and `state show`. Every write re-checks ownership
 * on the top-level step, fenced by the attempt seen at setup, and appends exactly one event. The state
 * layer never calls the kernel: the caller runs kernel operations between these transactions.
 */
import { addSeconds } from '../clock.js';
import { TugError } from '../contract/errors.js';
import type { StateContext } from './context.js';
import { immediate, read } from './db.js';
import { checkOwner, checkText, findStep, invalidTransition, ownerPlan, stepArg, type StepAndTop } from './owner.js';
import { requirePlanRow, resolvePlanRef, writeStore } from './plan-ref.js';
import { recordEvent } from './record.js';
import { insertArtifact } from './queries/events.js';
import { getRefactor, refactorsOfStep, setRefactor } from './queries/refactors.js';
import { renewLease } from './queries/steps.js';
import type { Db } from './queries/stmt.js';
import { SUMMARY_MAX_CODE_POINTS, CONTENT_MAX_CODE_POINTS, isExpired, isHeld, type RefactorStatus } from './status.js';
import { truncateCodePoints } from './artifact.js';
import type { RefactorRow } from './types.js';

export interface RefactorScopeInput {
  plan: string;
  step: string;
  /** Canonical worktree root. */
  worktree: string;
  attempt?: number | undefined;
}

/** What run-step's setup established: every later transaction is fenced by `attempt`. */
export interface RefactorScope {
  plan_path: string;
  step_anchor: string;
  top_anchor: string;
  worktree: string;
  attempt: number;
}

/** `result_json.pending` (05-kernel.md §7.3 step 6). */
export interface PendingWrite {
  op_hash: string;
  snapshot_before: string;
  snapshot_after: string;
  worktree: string;
  attempt: number;
}

/** A row with its parsed `result_json`. */
export interface RefactorView extends RefactorRow {
  result: Record<string, unknown> | null;
}

function view(r: RefactorRow): RefactorView {
  let result: Record<string, unknown> | null = null;
  if (r.result_json !== null) {
    try {
      const v: unknown = JSON.parse(r.result_json);
      result = v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : { value: v };
    } catch {
      result = { unparsable: r.result_json };
    }
  }
  return { ...r, result };
}

const json = (v: Record<string, unknown> | null): string | null => (v === null ? null : JSON.stringify(v));

function withoutPending(r: Record<string, unknown> | null): Record<string, unknown> {
  const { pending: _p, ...rest } = r ?? {};
  return rest;
}

/** Ownership on the top-level step, the attempt fence, and a step that can still run refactors. */
function owned(
  db: Db,
  scope: { plan_path: string; step_anchor: string; worktree: string },
  attempt: number | undefined,
): StepAndTop {
  const s = findStep(db, scope.plan_path, scope.step_anchor);
  checkOwner(db, scope.plan_path, s, scope.worktree, attempt);
  if (!isHeld(s.top.status))
    throw invalidTransition(
      scope.plan_path,
      s.top,
      `the top-level step ${s.top.anchor} is ${s.top.status}; only a claimed or in-progress step runs refactors`,
    );
  if (s.step.status === 'completed')
    throw invalidTransition(scope.plan_path, s.step, `${s.step.anchor} is already completed`);
  return s;
}

/** Renew the lease inside a write (heartbeat semantics; a revival is noted in the event's details). */
function renew(
  ctx: StateContext,
  db: Db,
  s: StepAndTop,
  worktree: string,
  now: string,
): { lease_expires_at: string; revived: boolean } {
  const lease = addSeconds(now, ctx.config.state.lease_seconds);
  const revived = isExpired(s.top.lease_expires_at, now);
  renewLease(db, { plan_path: s.top.plan_path, anchor: s.top.anchor, worktree, now, lease, heartbeat: true });
  return { lease_expires_at: lease, revived };
}

/**
 * run-step setup (05-kernel.md §7.3 setup 1–2): the plan, the step, ownership exactly as `state update`
 * checks it (NotOwner / LeaseExpired, then AttemptMismatch), then the transition (the top-level step is
 * claimed or in progress and the step is not completed). Changes nothing.
 */
export function refactorScope(
  ctx: StateContext,
  input: RefactorScopeInput,
): { scope: RefactorScope; rows: RefactorView[] } {
  const anchor = stepArg(input.step);
  const { ref, store } = ownerPlan(ctx, input);
  const plan_path = ref.plan_path;
  return read(store, () => {
    const s = owned(store.db, { plan_path, step_anchor: anchor, worktree: input.worktree }, input.attempt);
    const scope: RefactorScope = {
      plan_path,
      step_anchor: anchor,
      top_anchor: s.top.anchor,
      worktree: input.worktree,
      attempt: s.top.attempt,
    };
    return { scope, rows: refactorsOfStep(store.db, plan_path, anchor).map(view) };
  });
}

/** The step's rows, read-only and without ownership (display, commit trailers). Empty without state.db. */
export function refactorRows(
  ctx: StateContext,
  input: { plan: string; step: string; worktree?: string },
): RefactorView[] {
  if (!ctx.store) return [];
  const anchor = stepArg(input.step);
  const ref = resolvePlanRef(ctx, input.plan, input.worktree);
  requirePlanRow(ctx, ref);
  const store = ctx.store;
  return read(store, () => {
    findStep(store.db, ref.plan_path, anchor);
    return refactorsOfStep(store.db, ref.plan_path, anchor).map(view);
  });
}

/**
 * `Tug-Refactor` trailer values (05-kernel.md §7.4) of the step's `applied` rows, in ordinal order:
 * `<op_hash> <snapshot_before>..<snapshot_after>`. Rows without the three values are left out.
 */
export function refactorTrailers(rows: RefactorView[]): string[] {
  const out: string[] = [];
  for (const r of rows) {
    const hash = r.result?.op_hash;
    if (r.status !== 'applied' || typeof hash !== 'string' || !r.snapshot_before || !r.snapshot_after) continue;
    out.push(`${hash} ${r.snapshot_before}..${r.snapshot_after}`);
  }
  return out;
}

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
export function startRefactorRun(
  ctx: StateContext,
  scope: RefactorScope,
  o: { retry_failed: boolean; current_snapshot: string | null },
): RunStart {
  const store = writeStore(ctx);
  return immediate(store, () => {
    const db = store.db;
    const now = ctx.clock.now();
    const s = owned(db, scope, scope.attempt);
    const out: RunStart = { rows: [], retried: [], recovered: [] };
    for (const r of refactorsOfStep(db, scope.plan_path, scope.step_anchor).map(view)) {
      if (o.retry_failed && r.status === 'failed') {
        setRefactor(db, {
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
        setRefactor(db, {
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
        setRefactor(db, {
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
        setRefactor(db, {
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
      recordScopeEvent(ctx, db, scope, s.top.attempt, now, { retried: out.retried, recovered: out.recovered });
    }
    out.rows = refactorsOfStep(db, scope.plan_path, scope.step_anchor).map(view);
    return out;
  });
}

/** An event of a run-step transaction, attributed to the scope's worktree and the step's attempt. */
function recordScopeEvent(
  ctx: StateContext,
  db: Db,
  scope: RefactorScope,
  attempt: number | null,
  at: string,
  details: Record<string, unknown>,
): void {
  recordEvent(ctx, db, {
    at,
    plan_path: scope.plan_path,
    step_anchor: scope.step_anchor,
    actor: scope.worktree,
    attempt,
    details,
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
export function writePending(ctx: StateContext, scope: RefactorScope, ordinal: number, pending: PendingWrite): void {
  const store = writeStore(ctx);
  immediate(store, () => {
    const db = store.db;
    const now = ctx.clock.now();
    const s = owned(db, scope, scope.attempt);
    const r = getRefactor(db, scope.plan_path, scope.step_anchor, ordinal);
    if (!r)
      throw new TugError('InternalError', { reason: `refactor row ${ordinal} of ${scope.step_anchor} is missing` });
    if (r.status !== 'open')
      throw invalidTransition(scope.plan_path, s.step, `refactor ${ordinal} is ${r.status}`, { ordinal });
    const lease = renew(ctx, db, s, scope.worktree, now);
    setRefactor(db, {
      ...r,
      snapshot_before: pending.snapshot_before,
      result_json: json({ ...withoutPending(view(r).result), pending }),
      updated_at: now,
    });
    recordScopeEvent(ctx, db, scope, s.top.attempt, now, {
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
  /** The compact result_json (05-kernel.md §7.2); `pending` is never kept. */
  result: Record<string, unknown>;
  /** The `refactor_report` artifact (summary cut to 500 code points, content to 64 KiB). */
  artifact: { summary: string; content?: string | undefined };
}

/**
 * run-step row step 7 (and failures): record the row, its `refactor_report` artifact and a lease renewal in
 * one transaction, after re-checking ownership. Returns the stored row.
 */
export function recordRefactorResult(ctx: StateContext, scope: RefactorScope, o: RefactorOutcome): RefactorView {
  const store = writeStore(ctx);
  return immediate(store, () => {
    const db = store.db;
    const now = ctx.clock.now();
    const s = owned(db, scope, scope.attempt);
    const r = getRefactor(db, scope.plan_path, scope.step_anchor, o.ordinal);
    if (!r)
      throw new TugError('InternalError', { reason: `refactor row ${o.ordinal} of ${scope.step_anchor} is missing` });
    if (r.status !== 'open')
      throw invalidTransition(scope.plan_path, s.step, `refactor ${o.ordinal} is ${r.status}`, { ordinal: o.ordinal });
    const result = withoutPending(o.result);
    setRefactor(db, {
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
    const artifact_id = insertArtifact(db, {
      plan_path: scope.plan_path,
      step_anchor: scope.step_anchor,
      kind: 'refactor_report',
      summary,
      content,
      recorded_at: now,
    });
    const lease = renew(ctx, db, s, scope.worktree, now);
    recordScopeEvent(ctx, db, scope, s.top.attempt, now, {
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
    return view(getRefactor(db, scope.plan_path, scope.step_anchor, o.ordinal)!);
  });
}

export interface SkipInput extends RefactorScopeInput {
  ordinal: number;
  reason: string;
}

export interface SkipResult {
  plan_path: string;
  step_anchor: string;
  worktree: string;
  ordinal: number;
  op_text: string;
  previous_status: RefactorStatus;
  skipped_reason: string;
  already_skipped: boolean;
}

/**
 * `refactor skip` (05-kernel.md §7.4): the owner marks an open or failed row skipped with a reason. An
 * applied row is InvalidTransition; a row already skipped succeeds and changes nothing.
 */
export function skipRefactor(ctx: StateContext, input: SkipInput): SkipResult {
  const anchor = stepArg(input.step);
  if (!Number.isSafeInteger(input.ordinal) || input.ordinal < 0)
    throw new TugError('InvalidArgument', {
      reason: `--ordinal must be a non-negative integer, got ${input.ordinal}`,
      argument: '--ordinal',
    });
  checkText('--reason', input.reason, { nonEmpty: true });
  const { ref, store } = ownerPlan(ctx, input);
  const plan_path = ref.plan_path;
  return immediate(store, () => {
    const db = store.db;
    const now = ctx.clock.now();
    const s = owned(db, { plan_path, step_anchor: anchor, worktree: input.worktree }, input.attempt);
    const r = getRefactor(db, plan_path, anchor, input.ordinal);
    if (!r) {
      const count = refactorsOfStep(db, plan_path, anchor).length;
      throw new TugError('InvalidArgument', {
        reason: `${anchor} has ${count} refactor row(s); there is no ordinal ${input.ordinal}`,
        argument: '--ordinal',
        plan_path,
        step_anchor: anchor,
      });
    }
    const base = {
      plan_path,
      step_anchor: anchor,
      worktree: input.worktree,
      ordinal: r.ordinal,
      op_text: r.op_text,
      previous_status: r.status,
    };
    if (r.status === 'applied')
      throw invalidTransition(
        plan_path,
        s.step,
        `refactor ${r.ordinal} is already applied; an applied refactor cannot be skipped`,
        { ordinal: r.ordinal },
      );
    if (r.status === 'skipped') {
      const old = view(r).result?.skipped_reason;
      return { ...base, skipped_reason: typeof old === 'string' ? old : '', already_skipped: true };
    }
    setRefactor(db, {
      ...r,
      status: 'skipped',
      snapshot_before: null,
      snapshot_after: null,
      exit_code: null,
      result_json: json({ ...withoutPending(view(r).result), skipped_reason: input.reason }),
      updated_at: now,
    });
    recordEvent(ctx, db, {
      at: now,
      plan_path,
      step_anchor: anchor,
      actor: input.worktree,
      attempt: s.top.attempt,
      details: { ordinal: r.ordinal, previous_status: r.status, skipped_reason: input.reason },
    });
    return { ...base, skipped_reason: input.reason, already_skipped: false };
  });
}
