/**
 * `state complete` (docs/state.md §3–§4): strict by default (every item terminal, every descendant completed,
 * every refactor applied or skipped), `force` completes the rest and records the reason. Completing a top-
 * level step releases its dependents (`unmet_deps`) and may complete the plan.
 */
import { TugError } from '../contract/errors.js';
import { recordEvent } from './record.js';
import { ownerPath, type StateContext } from './context.js';
import { checkDrift, withSnapshot, type PlanSnapshot } from './drift.js';
import {
  capReason,
  checkOwner,
  checkText,
  findStep,
  invalidTransition,
  ownerPlan,
  stepArg,
  OWNER_TX,
} from './owner.js';
import { completeNonTerminal, openItemsOfStep } from './queries/items.js';
import { countCompleted, getPlan, setPlanStatus } from './queries/plans.js';
import { openRefactorsOfStep, skipRemaining } from './queries/refactors.js';
import { completeRow, setCommitHash, subtree } from './queries/steps.js';
import { releaseDependents } from './queries/deps.js';
import type { Conn } from './sql/conn.js';
import { isHeld } from './status.js';
import { Subtree } from './tree.js';
import type { StepRow } from './types.js';
import type { OwnerInput } from './start.js';

export interface CompleteInput extends OwnerInput {
  /** Full commit object name, resolved by the caller (`git rev-parse --verify H^{commit}`). */
  commit?: string | undefined;
  /** `--force REASON`. */
  force?: string | undefined;
  /**
   * What a `TextTruncated` warning calls the force reason: `force reason` on the command line (docs/state.md
   * §4), the JSON field `force` for a tool caller, who never typed a flag.
   */
  force_field?: string | undefined;
  skip_drift?: boolean | undefined;
  /** Run every check and write, then roll back (see completionBlocker). */
  dry_run?: boolean | undefined;
}

/** Thrown at the end of a dry-run completion so its transaction rolls back. */
export class CompletionDryRun extends Error {}

export interface CompleteResult {
  completed: boolean;
  step_anchor: string;
  commit_hash: string | null;
  forced: boolean;
  force_reason: string | null;
  completed_via: 'complete' | 'force' | 'reconcile';
  incomplete_items_auto_completed: number;
  already_completed: boolean;
  plan_completed: boolean;
  remaining_steps: number;
}

export async function complete(ctx: StateContext, input: CompleteInput): Promise<CompleteResult> {
  const anchor = stepArg(input.step);
  if (input.force !== undefined) {
    checkText('--force reason', input.force, { nonEmpty: true, argument: '--force' });
    input = { ...input, force: capReason(ctx, input.force_field ?? 'force reason', input.force) };
  }
  if (input.commit !== undefined && !/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(input.commit)) {
    throw new TugError('InvalidArgument', {
      reason: `--commit must be a full commit object name, got ${JSON.stringify(input.commit)}`,
    });
  }
  const { ref, store } = await ownerPlan(ctx, input);
  const run = (snap: PlanSnapshot | null) =>
    store.write((c) => completeTx(ctx, c, ref.plan_path, anchor, input, snap), OWNER_TX);
  if (input.skip_drift) return run(null);
  return await withSnapshot(ref.plan_path, ref.abs_path, run);
}

async function completeTx(
  ctx: StateContext,
  c: Conn,
  plan_path: string,
  anchor: string,
  input: CompleteInput,
  snap: PlanSnapshot | null,
): Promise<CompleteResult> {
  const now = ctx.clock.now();
  // The step (locked first), the plan row and the rows under the step go out together (pipelined on
  // PostgreSQL). A top-level step roots its own subtree; a substep's top-level step is read below.
  const [s, planRow, rows] = await Promise.all([
    findStep(c, plan_path, anchor, { lock: true }),
    getPlan(c, plan_path),
    subtree(c, plan_path, anchor),
  ]);
  const { step, top } = s;
  // A substep's top-level row was locked after the plan row was read: read it again behind the lock.
  const plan = top.anchor === anchor ? planRow! : (await getPlan(c, plan_path))!;
  if (step.status === 'completed')
    return alreadyCompleted(ctx, c, plan_path, step, input, now, {
      remaining_steps: plan.steps_total - plan.steps_completed,
      plan_done: plan.status === 'done',
    });
  await checkOwner(c, plan_path, s, input.worktree, input.attempt);
  if (!isHeld(top.status)) throw invalidTransition(plan_path, top, `the top-level step ${top.anchor} is ${top.status}`);
  const prose = snap ? (await checkDrift(ctx, c, plan, snap, now)) === 'prose' : false;

  const tree = new Subtree(top.anchor === anchor ? rows : await subtree(c, plan_path, top.anchor));
  const openDescendants = tree.descendants(anchor).filter((d) => d.status !== 'completed');
  const force = input.force;
  let autoCompleted: Promise<number> = Promise.resolve(0);
  const forced: Promise<number>[] = [];
  if (force === undefined) {
    const [items, refactors] = await Promise.all([
      openItemsOfStep(c, plan_path, anchor),
      openRefactorsOfStep(c, plan_path, anchor),
    ]);
    const open_items = items.map((i) => ({ kind: i.kind, ordinal: i.ordinal, text: i.text, status: i.status }));
    const incomplete_substeps = openDescendants.map((d) => d.anchor);
    const open_refactors = refactors.map((r) => ({ ordinal: r.ordinal, op_text: r.op_text, status: r.status }));
    // The worktree names the caller in the hint's command (its host prefix on PostgreSQL left out).
    const worktree = ownerPath(ctx, input.worktree);
    const details = { plan_path, step_anchor: anchor, worktree, open_items, incomplete_substeps, open_refactors };
    if (open_items.length > 0) throw new TugError('ChecklistIncomplete', details);
    if (incomplete_substeps.length > 0) throw new TugError('SubstepsIncomplete', details);
    if (open_refactors.length > 0) throw new TugError('RefactorsIncomplete', details);
  } else {
    const anchors = [anchor, ...openDescendants.map((d) => d.anchor)];
    // First the statement that can throw at once (SQLite runs `later` now), before any promise is pending.
    skipRemaining(c, plan_path, anchors, `forced: ${force}`, now);
    autoCompleted = completeNonTerminal(c, plan_path, anchors, now);
    for (const d of [...openDescendants].sort((a, b) => b.depth - a.depth || a.step_index - b.step_index)) {
      forced.push(
        completeRow(c, {
          plan_path,
          anchor: d.anchor,
          now,
          commit_hash: null,
          reason: force,
          via: 'force',
          owner: null,
        }),
      );
    }
  }
  const via = force === undefined ? 'complete' : 'force';
  const changed = completeRow(c, {
    plan_path,
    anchor,
    now,
    commit_hash: input.commit ?? null,
    reason: force ?? null,
    via,
    owner: input.worktree,
  });
  // Every write above and the plan's bookkeeping go out together (one round trip on PostgreSQL) and run in
  // that order; a failed guard below still rolls all of it back. A substep's completion moves no plan
  // counter: the row read above still counts right.
  const counters =
    step.parent_anchor === null
      ? completeTopLevel(c, plan_path, anchor, now)
      : Promise.resolve({
          plan_completed: false,
          remaining_steps: plan.steps_total - plan.steps_completed,
          steps_completed: 0,
        });
  const [auto, n, r] = await Promise.all([autoCompleted, changed, counters, Promise.all(forced)]);
  if (n !== 1) throw new TugError('InternalError', { reason: 'guarded completion changed no row' });
  if (input.dry_run) throw new CompletionDryRun();
  recordEvent(ctx, c, {
    at: now,
    plan_path,
    step_anchor: anchor,
    actor: input.worktree,
    attempt: top.attempt,
    details: {
      completed: true,
      completed_via: via,
      commit_hash: input.commit ?? null,
      ...(force !== undefined
        ? {
            force_reason: force,
            incomplete_items_auto_completed: auto,
            substeps_forced: openDescendants.map((d) => d.anchor),
          }
        : {}),
      ...(prose ? { prose_refreshed: true } : {}),
    },
  });
  // The step's own event first, then the plan's: `state log` reads in the order things happened.
  if (r.plan_completed)
    recordPlanDone(ctx, c, {
      plan_path,
      anchor,
      actor: input.worktree,
      attempt: step.attempt,
      now,
      steps_completed: r.steps_completed,
    });
  return {
    completed: true,
    step_anchor: anchor,
    commit_hash: input.commit ?? null,
    forced: force !== undefined,
    force_reason: force ?? null,
    completed_via: via,
    incomplete_items_auto_completed: auto,
    already_completed: false,
    plan_completed: r.plan_completed,
    remaining_steps: r.remaining_steps,
  };
}

/**
 * Bookkeeping after a top-level step became completed (also used by reconcile): dependents lose one unmet
 * dependency, the plan counter moves, and the plan becomes `done` with its last step. Returns the plan's
 * counters as they are now and whether this completion finished the plan; the caller records its own event,
 * then `recordPlanDone` when the plan finished, so the log reads the step's completion before the plan's.
 */
export async function completeTopLevel(
  c: Conn,
  plan_path: string,
  anchor: string,
  now: string,
): Promise<{ plan_completed: boolean; remaining_steps: number; steps_completed: number }> {
  // Sent with the counter's update, which answers for both.
  releaseDependents(c, plan_path, anchor);
  const p = await countCompleted(c, plan_path, now);
  const remaining_steps = p.steps_total - p.steps_completed;
  const plan_completed = p.steps_completed === p.steps_total && p.status === 'active';
  if (plan_completed) await setPlanStatus(c, plan_path, 'done', now);
  return { plan_completed, remaining_steps, steps_completed: p.steps_completed };
}

/** A plan that `completeTopLevel` just finished: its last step, who completed it, and when. */
export interface PlanDone {
  plan_path: string;
  anchor: string;
  actor: string;
  attempt: number | null;
  now: string;
  steps_completed: number;
}

/** The `plan_done` event of a plan that `completeTopLevel` just finished, recorded after the step's own event. */
export function recordPlanDone(ctx: StateContext, c: Conn, done: PlanDone): void {
  recordEvent(ctx, c, {
    command: 'plan_done',
    at: done.now,
    plan_path: done.plan_path,
    step_anchor: done.anchor,
    actor: done.actor,
    attempt: done.attempt,
    details: { steps_completed: done.steps_completed },
  });
}

async function alreadyCompleted(
  ctx: StateContext,
  c: Conn,
  plan_path: string,
  step: StepRow,
  input: CompleteInput,
  now: string,
  r: { remaining_steps: number; plan_done: boolean },
): Promise<CompleteResult> {
  let hash = step.commit_hash;
  if (input.commit !== undefined) {
    if (hash === null) {
      await setCommitHash(c, plan_path, step.anchor, input.commit);
      hash = input.commit;
      recordEvent(ctx, c, {
        at: now,
        plan_path,
        step_anchor: step.anchor,
        actor: input.worktree,
        attempt: null,
        details: { commit_hash: input.commit, already_completed: true },
      });
    } else if (hash !== input.commit) {
      ctx.warnings.add(
        'CommitMismatch',
        `${step.anchor} is already completed with commit ${hash}; ${input.commit} was not recorded`,
        {
          step_anchor: step.anchor,
          commit_hash: hash,
          given: input.commit,
        },
      );
    }
  }
  const via = step.completed_via ?? 'complete';
  return {
    completed: true,
    step_anchor: step.anchor,
    commit_hash: hash,
    forced: via === 'force',
    force_reason: via === 'force' ? step.complete_reason : null,
    completed_via: via,
    incomplete_items_auto_completed: 0,
    already_completed: true,
    plan_completed: false,
    remaining_steps: r.remaining_steps,
  };
}
