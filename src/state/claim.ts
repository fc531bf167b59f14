/**
 * `state claim` (docs/state.md §3–§4): atomically resume the caller's own claim, or claim the next ready
 * top-level step (pending, or an expired claim of another worktree: a takeover), in step_index order.
 * One IMMEDIATE transaction; readiness is an indexed lookup on `unmet_deps`, so the cost stays flat with
 * plan size (docs/quality.md §2).
 */
import { addSeconds } from '../clock.js';
import { TugError } from '../contract/errors.js';
import { mayDeclareTouches } from '../plan/syntax.js';
import type { TouchesHeld } from '../contract/touches.js';
import { shellArg } from '../util/shell-arg.js';
import { discardAttempt } from './attempt.js';
import { leaseSeconds as leaseOf } from './lease.js';
import { recordEvent } from './record.js';
import { ownerPath, type StateContext } from './context.js';
import { checkDrift, withSnapshot, type PlanSnapshot } from './drift.js';
import { stepArg } from './owner.js';
import { planMissing, resolvePlanRef, storeFor, type PlanRef } from './plan-ref.js';
import { getPlan } from './queries/plans.js';
import {
  claimPending,
  countReady,
  expiredReady,
  heldTouches,
  failExpired,
  lockTouches,
  getStep,
  heldBy,
  lockStep,
  nextPending,
  renewLease,
  takeover,
} from './queries/steps.js';
import { unmetLiftedDeps } from './queries/deps.js';
import type { Conn } from './sql/conn.js';
import { categorizePlan } from './ready.js';
import { isExpired, isHeld } from './status.js';
import type { PlanRow, StepRow } from './types.js';

export interface ClaimInput {
  plan: string;
  /** Canonical worktree path of the claimer. */
  worktree: string;
  lease_seconds?: number | undefined;
  /** Claim only this top-level step. */
  step?: string | undefined;
  /** The integration branch and its tip, read by the caller before the transaction. */
  integration?: { branch: string; tip: string } | null | undefined;
  /** Skip the drift check (benchmarks; callers that checked the plan themselves). Default false. */
  skip_drift?: boolean | undefined;
}

export interface ClaimedResult {
  claimed: true;
  step_anchor: string;
  step_title: string;
  step_index: number;
  attempt: number;
  failures: number;
  remaining_ready: number;
  total_remaining: number;
  lease_expires_at: string;
  reclaimed_from_expired: boolean;
  previous_owner: string | null;
  resumed: boolean;
  integration_branch: string | null;
  integration_tip: string | null;
  /** `decide --approve`: integrate `review_commit` as it is, without implementer or reviewer (docs/state.md §3.11). */
  human_decision: 'approved' | null;
  review_commit: string | null;
  /** `decide --revise`: the person's notes for this attempt's brief. */
  human_notes: string | null;
}

export interface NotClaimedResult {
  claimed: false;
  reason: 'no_ready_steps' | 'all_completed' | 'not_ready';
  all_completed: boolean;
  blocked_steps: string[];
  failed_steps: string[];
  needs_human_steps: string[];
  claimed_steps: string[];
  /** Only with `--step`: the lifted dependencies of the step that are not completed. */
  blocked_by?: string[];
  /** Only with `--step`: the owner of a live claim on it, else null. */
  claimed_by?: string | null;
  /** Only with `--step`: the running step whose Touches overlap its own (docs/state.md §3.12). */
  touches_overlap?: string;
  /**
   * Without `--step`, when some: the ready steps this claim passed over because their Touches overlap a
   * running step's, each with that step (docs/state.md §3.12), so a waiting caller can say why.
   */
  touches_held?: TouchesHeld[];
}

export type ClaimResult = ClaimedResult | NotClaimedResult;

export async function claim(ctx: StateContext, input: ClaimInput): Promise<ClaimResult> {
  if (input.step !== undefined) input = { ...input, step: stepArg(input.step) };
  const ref = await resolvePlanRef(ctx, input.plan, ownerPath(ctx, input.worktree));
  const store = storeFor(ctx, ref);
  const leaseSeconds = leaseOf(ctx.config, input.lease_seconds);
  const run = (snap: PlanSnapshot | null) =>
    store.write((c) => claimTx(ctx, c, ref, input, leaseSeconds, snap), {
      shared: true,
      owner: input.worktree,
    });
  if (input.skip_drift) return run(null);
  return await withSnapshot(ref.plan_path, ref.abs_path, run);
}

/** What every part of one claim transaction reads, and the steps a takeover failed on the way. */
interface ClaimTx {
  ctx: StateContext;
  c: Conn;
  plan: PlanRow;
  plan_path: string;
  now: string;
  lease: string;
  /** The claimer. */
  worktree: string;
  integration: ClaimInput['integration'];
  /** The drift check refreshed the plan's prose (said in the claim's event). */
  prose: boolean;
  /** Steps whose takeover reached the attempt cap and failed instead (said in the claim's event). */
  failed: Record<string, unknown>[];
  /** The Touches of the steps running now, read once the first candidate declares some (docs/state.md §3.12). */
  running?: { anchor: string; touches: string[] }[];
  /** PostgreSQL: the plan's Touches lock was taken before any row lock (lockTouches). */
  touchesLocked: boolean;
  /** Ready steps passed over for their Touches, by anchor: the running step they overlap. */
  heldBack: Map<string, string>;
}

async function claimTx(
  ctx: StateContext,
  c: Conn,
  ref: PlanRef,
  input: ClaimInput,
  leaseSeconds: number,
  snap: PlanSnapshot | null,
): Promise<ClaimResult> {
  const { t, held } = await openClaim(ctx, c, ref, input, leaseSeconds, snap);
  // Selection validity of --step comes before resume (a substep is never claimable).
  const wanted =
    input.step === undefined ? undefined : await lockWanted(c, t.plan_path, input.step, ownerPath(ctx, input.worktree));
  if (held) return resume(t, held, wanted);
  if (wanted) return claimWanted(t, wanted);
  return claimNext(t);
}

/** The plan row, the drift check and the caller's own claim, in the lock order every writer keeps. */
async function openClaim(
  ctx: StateContext,
  c: Conn,
  ref: PlanRef,
  input: ClaimInput,
  leaseSeconds: number,
  snap: PlanSnapshot | null,
): Promise<{ t: ClaimTx; held: StepRow | undefined }> {
  const plan_path = ref.plan_path;
  const now = ctx.clock.now();
  // The caller's own claim is read (and locked) before any row is locked for a new one: on PostgreSQL it
  // waits for a takeover of that row in flight, before this claim holds a row of its own (no lock cycle with
  // that takeover). It goes out with the plan row (pipelined on PostgreSQL), unless the drift check may
  // rewrite prose: that writes the plan row, then step rows, and must come before this lock as in every
  // writer (two resuming claims would otherwise wait for each other's rows). On PostgreSQL the plan's
  // Touches lock, when it declares Touches, comes before both (docs/state.md §3.12).
  const refresh = snap?.parsed !== undefined;
  const heldRow = () => heldBy(c, plan_path, input.worktree, 'wait');
  const [plan, touchesLocked, early] = await Promise.all([
    getPlan(c, plan_path),
    c.dialect === 'postgres' ? lockTouches(c, plan_path, declaresTouches(snap)) : false,
    refresh ? undefined : heldRow(),
  ]);
  if (!plan) throw planMissing(ref);
  const prose = snap ? (await checkDrift(ctx, c, plan, snap, now)) === 'prose' : false;
  const held = refresh ? await heldRow() : early;
  const t: ClaimTx = {
    ctx,
    c,
    plan,
    plan_path,
    now,
    lease: addSeconds(now, leaseSeconds),
    worktree: input.worktree,
    integration: input.integration,
    prose,
    failed: [],
    touchesLocked,
    heldBack: new Map(),
  };
  return { t, held };
}

/**
 * Whether the plan declares Touches, from the claim's snapshot of its file (the drift check makes the stored
 * plan that file); undefined without a snapshot (skip_drift): the database is asked.
 */
function declaresTouches(snap: PlanSnapshot | null): boolean | undefined {
  if (snap === null) return undefined;
  if (snap.parsed) return snap.parsed.steps.some((s) => s.touches.length > 0);
  return snap.bytes !== null && mayDeclareTouches(snap.bytes);
}

/** The `--step` row, locked; StepNotFound, or InvalidArgument for a substep. */
async function lockWanted(c: Conn, plan_path: string, anchor: string, worktree: string): Promise<StepRow> {
  const wanted = await lockStep(c, plan_path, anchor);
  if (!wanted) throw new TugError('StepNotFound', { plan_path, step_anchor: anchor });
  if (wanted.parent_anchor !== null) {
    throw new TugError(
      'InvalidArgument',
      {
        reason: `${wanted.anchor} is a substep; claims are made on its top-level step ${wanted.top_anchor}`,
        plan_path,
        step_anchor: wanted.anchor,
      },
      // As the caller: the hint copied anywhere claims for the same worktree (as requireTopLevel's does).
      {
        hint: `tugcode state claim ${shellArg(plan_path)} --step ${shellArg(wanted.top_anchor)} --worktree ${shellArg(worktree)}`,
      },
    );
  }
  return wanted;
}

/** Idempotent resume: the caller's own claim (live or expired) comes back, lease renewed. */
async function resume(t: ClaimTx, held: StepRow, wanted: StepRow | undefined): Promise<ClaimedResult> {
  const { c, plan_path, worktree: w } = t;
  if (wanted && wanted.anchor !== held.anchor) {
    throw new TugError('InvalidTransition', {
      plan_path,
      step_anchor: wanted.anchor,
      status: wanted.status,
      held_step: held.anchor,
      reason: `${w} already holds ${held.anchor} of ${plan_path}; complete, release or fail it before claiming ${wanted.anchor}`,
    });
  }
  await renewLease(c, { plan_path, anchor: held.anchor, worktree: w, now: t.now, lease: t.lease, heartbeat: false });
  return claimed(t, getStep(c, plan_path, held.anchor) as Promise<StepRow>, { resumed: true, reclaimed: false });
}

/** `--step`: that step when it is ready now (pending, or an expired claim to take over), else why not. */
async function claimWanted(t: ClaimTx, s: StepRow): Promise<ClaimResult> {
  const { c, plan_path, now } = t;
  const readyNow =
    s.unmet_deps === 0 && (s.status === 'pending' || (isHeld(s.status) && isExpired(s.lease_expires_at, now)));
  const overlapping = readyNow ? await touchesBlocked(t, s) : null;
  const taken = readyNow && !overlapping ? await take(t, s) : null;
  if (taken) return claimed(t, taken, { resumed: false, reclaimed: s.status !== 'pending' });
  const after = (await getStep(c, plan_path, s.anchor))!;
  return await notClaimed(t, {
    reason: 'not_ready',
    blocked_by: await unmetLiftedDeps(c, plan_path, s.anchor),
    claimed_by: isHeld(after.status) && !isExpired(after.lease_expires_at, now) ? after.claimed_by : null,
    ...(overlapping ? { touches_overlap: overlapping } : {}),
  });
}

/**
 * The running step whose Touches overlap `s`'s, or null (docs/state.md §3.12). A step without Touches is
 * never held back, and costs no query; picomatch loads only for a plan that declares Touches.
 */
/** touchesBlocked for a candidate of a plan-wide claim: a step held back is noted for the answer. */
async function heldBack(t: ClaimTx, s: StepRow): Promise<boolean> {
  const overlaps = await touchesBlocked(t, s);
  if (overlaps !== null) t.heldBack.set(s.anchor, overlaps);
  return overlaps !== null;
}

async function touchesBlocked(t: ClaimTx, s: StepRow): Promise<string | null> {
  if (s.touches === null) return null;
  t.running ??= (await heldTouches(t.c, t.plan_path, t.now, t.touchesLocked)).map((r) => ({
    anchor: r.anchor,
    touches: JSON.parse(r.touches) as string[],
  }));
  if (t.running.length === 0) return null;
  const { touchesOverlap } = await import('../plan/touches.js');
  const mine = JSON.parse(s.touches) as string[];
  return t.running.find((r) => r.anchor !== s.anchor && touchesOverlap(mine, r.touches))?.anchor ?? null;
}

/**
 * The first ready step in step_index order. The first pending candidate is one indexed lookup; expired
 * claims are few. Merge them by step_index; a takeover that reaches the cap fails that step and moves on.
 * On PostgreSQL a pass that skipped rows other claims hold and found nothing runs once more waiting for
 * them (they may leave rows ready).
 */
async function claimNext(t: ClaimTx): Promise<ClaimResult> {
  const { c, plan_path, now } = t;
  for (const lock of c.dialect === 'postgres' ? (['skip', 'wait'] as const) : (['skip'] as const)) {
    const [expired, first] = await Promise.all([
      expiredReady(c, plan_path, now, lock),
      nextPending(c, plan_path, -1, lock),
    ]);
    let pending = first;
    for (let ei = 0; ;) {
      const e = expired[ei];
      if (pending && (!e || pending.step_index < e.step_index)) {
        // A step whose Touches overlap a running step's waits (docs/state.md §3.12): the next pending one.
        if (await heldBack(t, pending)) {
          pending = await nextPending(c, plan_path, pending.step_index, lock);
          continue;
        }
        // A pending row is always taken (take answers null only for a takeover that failed the step).
        return claimed(t, take(t, pending) as Promise<StepRow>, { resumed: false, reclaimed: false });
      }
      if (!e) break;
      ei++;
      if (await heldBack(t, e)) continue;
      const taken = await take(t, e);
      if (taken) return claimed(t, taken, { resumed: false, reclaimed: true });
    }
  }
  return await notClaimed(t, {});
}

/** Try to take `s`: the claimed row, or null when the takeover reached the cap (the step failed instead). */
async function take(t: ClaimTx, s: StepRow): Promise<StepRow | null> {
  const { c, plan_path, now, lease, worktree } = t;
  if (s.status === 'pending')
    return (await claimPending(c, { plan_path, anchor: s.anchor, worktree, now, lease })) ?? raceBug(s);
  if (s.failures + 1 >= t.ctx.config.state.max_attempts) {
    await failAtCap(t, s);
    return null;
  }
  return takeOver(t, s);
}

/** An expired claim whose takeover would reach the attempt cap: the step fails instead (listed in `t.failed`). */
async function failAtCap(t: ClaimTx, s: StepRow): Promise<void> {
  const { c, plan_path, now } = t;
  const old = s.claimed_by!;
  if ((await failExpired(c, { plan_path, anchor: s.anchor, old_owner: old, now, reason: 'lease expired' })) !== 1)
    raceBug(s);
  const discarded = await discardAttempt(c, plan_path, s.anchor, now);
  const detail = {
    step_anchor: s.anchor,
    previous_owner: old,
    previous_attempt: s.attempt,
    failures: s.failures + 1,
    fail_reason: 'lease expired',
  };
  recordEvent(t.ctx, c, {
    command: 'step_failed',
    at: now,
    plan_path,
    step_anchor: s.anchor,
    actor: t.worktree,
    attempt: s.attempt,
    details: { ...detail, ...discarded },
  });
  t.failed.push(detail);
}

/** An expired claim of another worktree taken over: a new attempt, the old one's work discarded. */
async function takeOver(t: ClaimTx, s: StepRow): Promise<StepRow> {
  const { c, plan_path, now, worktree: w } = t;
  const old = s.claimed_by!;
  const taken =
    (await takeover(c, { plan_path, anchor: s.anchor, worktree: w, now, lease: t.lease, old_owner: old })) ??
    raceBug(s);
  const discarded = await discardAttempt(c, plan_path, s.anchor, now);
  recordEvent(t.ctx, c, {
    command: 'takeover',
    at: now,
    plan_path,
    step_anchor: s.anchor,
    actor: w,
    attempt: s.attempt + 1,
    details: { previous_owner: old, previous_attempt: s.attempt, ...discarded },
  });
  return taken;
}

/** `row`: the claimed row as the transaction left it, or the statement that answers with it. */
async function claimed(
  t: ClaimTx,
  row: StepRow | Promise<StepRow>,
  extra: { resumed: boolean; reclaimed: boolean },
): Promise<ClaimedResult> {
  const { plan, plan_path, now, lease } = t;
  // A claim changes no plan counter: the row read at the start still counts right. The count goes out
  // right behind the claim's statement (pipelined on PostgreSQL) and before the event, whose append
  // serializes writers until the commit (PostgreSQL) and so comes last.
  const [fresh, remaining_ready] = await Promise.all([row, countReady(t.c, plan_path, now)]);
  recordEvent(t.ctx, t.c, {
    at: now,
    plan_path,
    step_anchor: fresh.anchor,
    actor: t.worktree,
    attempt: fresh.attempt,
    details: {
      claimed: true,
      resumed: extra.resumed,
      reclaimed_from_expired: extra.reclaimed,
      lease_expires_at: lease,
      ...(t.prose ? { prose_refreshed: true } : {}),
      ...(t.failed.length ? { failed_steps: t.failed } : {}),
    },
  });
  return {
    claimed: true,
    step_anchor: fresh.anchor,
    step_title: fresh.title,
    step_index: fresh.step_index,
    attempt: fresh.attempt,
    failures: fresh.failures,
    remaining_ready,
    total_remaining: plan.steps_total - plan.steps_completed,
    lease_expires_at: lease,
    reclaimed_from_expired: extra.reclaimed,
    previous_owner: extra.reclaimed || extra.resumed ? fresh.previous_owner : null,
    resumed: extra.resumed,
    integration_branch: t.integration?.branch ?? null,
    integration_tip: t.integration?.tip ?? null,
    human_decision: fresh.human_decision,
    review_commit: fresh.human_decision === 'approved' ? fresh.review_commit : null,
    human_notes: fresh.human_notes,
  };
}

async function notClaimed(
  t: ClaimTx,
  extra: { reason?: 'not_ready'; blocked_by?: string[]; claimed_by?: string | null; touches_overlap?: string },
): Promise<NotClaimedResult> {
  const { c, plan_path, now, failed, prose } = t;
  const cats = await categorizePlan(c, plan_path, now);
  const allCompleted = cats.completed_steps.length === cats.all_steps.length;
  if (failed.length > 0 || prose) {
    recordEvent(t.ctx, c, {
      at: now,
      plan_path,
      step_anchor: null,
      actor: t.worktree,
      attempt: null,
      details: {
        claimed: false,
        ...(failed.length ? { failed_steps: failed } : {}),
        ...(prose ? { prose_refreshed: true } : {}),
      },
    });
  }
  const r: NotClaimedResult = {
    claimed: false,
    reason: extra.reason ?? (allCompleted ? 'all_completed' : 'no_ready_steps'),
    all_completed: allCompleted,
    blocked_steps: cats.blocked_steps,
    failed_steps: cats.failed_steps,
    needs_human_steps: cats.needs_human_steps,
    claimed_steps: cats.claimed_steps,
  };
  if (extra.reason === 'not_ready') {
    r.blocked_by = extra.blocked_by ?? [];
    r.claimed_by = extra.claimed_by ?? null;
    if (extra.touches_overlap) r.touches_overlap = extra.touches_overlap;
  } else if (t.heldBack.size > 0) {
    r.touches_held = [...t.heldBack].map(([step_anchor, overlaps]) => ({ step_anchor, overlaps }));
  }
  return r;
}

function raceBug(s: StepRow): never {
  throw new TugError('InternalError', {
    reason: `guarded claim of ${s.anchor} changed no row inside the transaction`,
  });
}
