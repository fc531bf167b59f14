/**
 * `state update` (docs/state.md §3–§4): change checklist items of one step or substep, optionally finish the
 * rest (`--complete-remaining`, which also covers non-completed descendants), then auto-complete every
 * substep of the subtree and every substep ancestor whose items, refactors and descendants are done.
 * Everything is validated before anything changes.
 */
import { TugError } from '../contract/errors.js';
import { ITEM_STATUSES } from '../contract/status.js';
import { recordEvent } from './record.js';
import type { StateContext } from './context.js';
import { checkDrift, withSnapshot, type PlanSnapshot } from './drift.js';
import {
  capReason,
  checkOwner,
  findStep,
  invalidTransition,
  ownerPlan,
  stepArg,
  OWNER_TX,
  type StepAndTop,
} from './owner.js';
import { completeNonTerminal, itemsOfStep, itemsOfSubtree, setItemStatus } from './queries/items.js';
import { refactorsOfPlan } from './queries/refactors.js';
import { completeRow, startSub, subtree } from './queries/steps.js';
import type { Conn } from './sql/conn.js';
import { getPlan } from './queries/plans.js';
import { isHeld, isTerminal, KIND_PLURAL, REFACTOR_DONE, type ItemStatus } from './status.js';
import { Subtree } from './tree.js';
import { emptyCounts, type Counts, type ItemRow } from './types.js';
import { validateChanges, type BulkChange, type ItemChange } from './update-input.js';
import type { OwnerInput } from './start.js';

export interface UpdateInput extends OwnerInput {
  /** Per-item changes (flags or `--batch`). */
  items?: ItemChange[] | undefined;
  /** `--all-tasks` … `--all`. */
  bulk?: BulkChange[] | undefined;
  /** Reason for `deferred` set through per-item or bulk flags. */
  reason?: string | undefined;
  complete_remaining?: boolean | undefined;
  /** The items came from `--batch` (their errors are InvalidBatch). */
  batch?: boolean | undefined;
  skip_drift?: boolean | undefined;
}

export interface UpdateResult {
  updated: number;
  step_anchor: string;
  tasks: Counts;
  tests: Counts;
  checkpoints: Counts;
  step_auto_completed: boolean;
  auto_completed_steps: string[];
}

export async function update(ctx: StateContext, input: UpdateInput): Promise<UpdateResult> {
  const anchor = stepArg(input.step);
  const items = input.items ?? [];
  const bulk = input.bulk ?? [];
  const batch = Boolean(input.batch);
  if (batch && bulk.length > 0)
    throw new TugError('InvalidArgument', { reason: '--batch cannot be combined with per-item or --all* flags' });
  if (items.length === 0 && bulk.length === 0 && !input.complete_remaining && !batch) {
    throw new TugError(
      'InvalidArgument',
      { reason: 'nothing to update: give --task/--test/--checkpoint, --all*, --batch or --complete-remaining' },
      {
        hint: `e.g. --task 0 completed (the 0-based ordinal tugcode state show lists), --all-tasks completed, or --complete-remaining; statuses: ${ITEM_STATUSES.join(', ')}`,
      },
    );
  }
  validateChanges(items, bulk, input.reason, batch);
  const capped = capReasons(ctx, input, items);
  const { ref, store } = await ownerPlan(ctx, input);
  const run = (snap: PlanSnapshot | null) =>
    store.write((c) => updateTx(ctx, c, ref.plan_path, anchor, capped.input, capped.items, bulk, snap), OWNER_TX);
  if (input.skip_drift) return run(null);
  return await withSnapshot(ref.plan_path, ref.abs_path, run);
}

/** Every reason of the update, cut to the stored cap (docs/state.md §2). */
function capReasons(ctx: StateContext, input: UpdateInput, items: ItemChange[]) {
  const reason = input.reason === undefined ? undefined : capReason(ctx, 'reason', input.reason);
  return {
    input: reason === input.reason ? input : { ...input, reason },
    items: items.map((c) =>
      c.reason === undefined ? c : { ...c, reason: capReason(ctx, `reason of ${c.kind} ${c.ordinal}`, c.reason) },
    ),
  };
}

/** What every part of one update transaction reads. */
interface UpdateTx {
  ctx: StateContext;
  c: Conn;
  plan_path: string;
  anchor: string;
  now: string;
  input: UpdateInput;
}

/** One item change as the event lists it; `step_anchor` only for an item of a descendant. */
interface ChangeRecord {
  kind: string;
  ordinal: number;
  from: string;
  to: string;
  step_anchor?: string;
}

/** The status (and reason) an item is to have. */
interface Target {
  item: ItemRow;
  status: ItemStatus;
  reason: string | null;
}

/** What the changes did: items whose status changed, and whether anything was written at all. */
interface Applied {
  updated: number;
  changes: ChangeRecord[];
  /** A reason changed, a substep started: written without counting as `updated`. */
  wrote: boolean;
}

async function updateTx(
  ctx: StateContext,
  c: Conn,
  plan_path: string,
  anchor: string,
  input: UpdateInput,
  items: ItemChange[],
  bulk: BulkChange[],
  snap: PlanSnapshot | null,
): Promise<UpdateResult> {
  const t: UpdateTx = { ctx, c, plan_path, anchor, now: ctx.clock.now(), input };
  const found = await findStep(c, plan_path, anchor, { lock: true });
  // Ordinals must exist: an argument, checked before ownership and status (docs/state.md §4.2); on the
  // stored structure, which is what the ordinals of `state show` name.
  const current = await itemsOfStep(c, plan_path, anchor);
  checkOrdinals(t, current, items);
  const { step, top } = await openStep(t, found);
  const plan = (await getPlan(c, plan_path))!;
  const prose = snap ? (await checkDrift(ctx, c, plan, snap, t.now)) === 'prose' : false;
  const applied = await applyChanges(t, targetsOf(t, current, items, bulk));
  if (step.parent_anchor !== null && step.status === 'pending') {
    startSub(c, { plan_path, anchor, now: t.now });
    applied.wrote = true;
  }
  if (input.complete_remaining) await completeRemaining(t, top.anchor, applied);
  // Auto-complete, deepest first: substeps of the updated step's subtree and its substep ancestors.
  const tree = new Subtree(await subtree(c, plan_path, top.anchor));
  const auto = await autoComplete(ctx, c, plan_path, tree, anchor, input.worktree, top.attempt, t.now);
  const counts = { tasks: emptyCounts(), tests: emptyCounts(), checkpoints: emptyCounts() };
  for (const i of await itemsOfStep(c, plan_path, anchor)) counts[KIND_PLURAL[i.kind]][i.status]++;
  recordUpdate(t, top.attempt, applied, auto, prose);
  return {
    updated: applied.updated,
    step_anchor: anchor,
    ...counts,
    step_auto_completed: auto.includes(anchor),
    auto_completed_steps: auto,
  };
}

/** The step and its top-level ancestor, owned by the caller; a completed step's items no longer change. */
async function openStep({ c, plan_path, anchor, input }: UpdateTx, s: StepAndTop): Promise<StepAndTop> {
  await checkOwner(c, plan_path, s, input.worktree, input.attempt);
  const { step, top } = s;
  if (step.status === 'completed')
    throw invalidTransition(plan_path, step, `${anchor} is completed; its items can no longer change`);
  if (!isHeld(top.status)) throw invalidTransition(plan_path, top, `the top-level step ${top.anchor} is ${top.status}`);
  return s;
}

/** Every explicitly named item exists in the step (InvalidBatch for `--batch` input). */
function checkOrdinals({ plan_path, anchor, input }: UpdateTx, current: ItemRow[], items: ItemChange[]): void {
  const byKey = new Set(current.map((i) => `${i.kind}:${i.ordinal}`));
  for (const c of items) {
    if (byKey.has(`${c.kind}:${c.ordinal}`)) continue;
    const n = current.filter((i) => i.kind === c.kind).length;
    const why = `${c.kind} ${c.ordinal} does not exist: ${anchor} has ${n} ${KIND_PLURAL[c.kind]}${n > 0 ? ` (ordinals 0-${n - 1})` : ''}`;
    throw new TugError(input.batch ? 'InvalidBatch' : 'InvalidArgument', {
      reason: why,
      plan_path,
      step_anchor: anchor,
      kind: c.kind,
      ordinal: c.ordinal,
    });
  }
}

/**
 * The new status (and reason) of each item. Explicit beats bulk for the kind, which beats --all. Explicit
 * changes may not reopen a done item; bulk changes simply skip done items for open/in_progress.
 */
function targetsOf(
  { plan_path, anchor, input }: UpdateTx,
  current: ItemRow[],
  items: ItemChange[],
  bulk: BulkChange[],
): Target[] {
  const explicit = new Map(items.map((c) => [`${c.kind}:${c.ordinal}`, c]));
  const targets: Target[] = [];
  for (const item of current) {
    const e = explicit.get(`${item.kind}:${item.ordinal}`);
    const b = bulk.find((x) => x.kind === item.kind) ?? bulk.find((x) => x.kind === 'all');
    const status = e?.status ?? b?.status;
    if (status === undefined) continue;
    const reopening = isTerminal(item.status) && !isTerminal(status);
    if (reopening) {
      if (e) {
        throw new TugError('InvalidTransition', {
          plan_path,
          step_anchor: anchor,
          kind: item.kind,
          ordinal: item.ordinal,
          status: item.status,
          reason: `${item.kind} ${item.ordinal} of ${anchor} is ${item.status}; it cannot go back to ${status}`,
        });
      }
      continue;
    }
    const reason = status === 'deferred' ? (e?.reason ?? input.reason ?? null) : null;
    targets.push({ item, status, reason });
  }
  return targets;
}

/** Writes the targets that change anything. */
async function applyChanges({ c, now }: UpdateTx, targets: Target[]): Promise<Applied> {
  const applied: Applied = { updated: 0, changes: [], wrote: false };
  for (const p of targets) {
    if (p.item.status === p.status && p.item.reason === p.reason) continue;
    await setItemStatus(c, p.item.id, p.status, p.reason, now);
    applied.wrote = true;
    if (p.item.status !== p.status) {
      applied.updated++;
      applied.changes.push({ kind: p.item.kind, ordinal: p.item.ordinal, from: p.item.status, to: p.status });
    }
  }
  return applied;
}

/** `--complete-remaining`: every non-terminal item of the step and of its non-completed descendants. */
async function completeRemaining({ c, plan_path, anchor, now }: UpdateTx, top: string, applied: Applied) {
  const tree = new Subtree(await subtree(c, plan_path, top));
  const targets = [
    anchor,
    ...tree
      .descendants(anchor)
      .filter((d) => d.status !== 'completed')
      .map((d) => d.anchor),
  ];
  const before = (await itemsOfSubtree(c, plan_path, top)).filter(
    (i) => targets.includes(i.step_anchor) && !isTerminal(i.status),
  );
  await completeNonTerminal(c, plan_path, targets, now);
  for (const i of before)
    applied.changes.push({
      kind: i.kind,
      ordinal: i.ordinal,
      from: i.status,
      to: 'completed',
      ...(i.step_anchor !== anchor ? { step_anchor: i.step_anchor } : {}),
    });
  applied.updated += before.length;
}

/** The update's event; a command that changes nothing appends nothing (docs/state.md §2). */
function recordUpdate(t: UpdateTx, attempt: number, applied: Applied, auto: string[], prose: boolean): void {
  const { updated, changes, wrote } = applied;
  if (updated === 0 && !wrote && auto.length === 0 && !prose) return;
  recordEvent(t.ctx, t.c, {
    at: t.now,
    plan_path: t.plan_path,
    step_anchor: t.anchor,
    actor: t.input.worktree,
    attempt,
    details: {
      updated,
      changes,
      complete_remaining: Boolean(t.input.complete_remaining),
      auto_completed_steps: auto,
      ...(prose ? { prose_refreshed: true } : {}),
    },
  });
}

async function autoComplete(
  ctx: StateContext,
  c: Conn,
  plan_path: string,
  tree: Subtree,
  anchor: string,
  actor: string,
  attempt: number,
  now: string,
): Promise<string[]> {
  const self = tree.byAnchor.get(anchor)!;
  const candidates = [
    ...tree.descendants(anchor),
    ...(self.parent_anchor !== null ? [self] : []),
    ...tree.substepAncestors(anchor),
  ].filter((r) => r.parent_anchor !== null && r.status !== 'completed');
  candidates.sort((a, b) => b.depth - a.depth || a.step_index - b.step_index);
  const items = await itemsOfSubtree(c, plan_path, self.top_anchor);
  const refactors = (await refactorsOfPlan(c, plan_path, self.top_anchor)).filter((r) =>
    tree.byAnchor.has(r.step_anchor),
  );
  const completed = new Set(tree.rows.filter((r) => r.status === 'completed').map((r) => r.anchor));
  const out: string[] = [];
  for (const cand of candidates) {
    const itemsDone = items.every((i) => i.step_anchor !== cand.anchor || isTerminal(i.status));
    const refsDone = refactors.every((r) => r.step_anchor !== cand.anchor || REFACTOR_DONE.has(r.status));
    const kidsDone = tree.descendants(cand.anchor).every((d) => completed.has(d.anchor));
    if (!itemsDone || !refsDone || !kidsDone) continue;
    await completeRow(c, {
      plan_path,
      anchor: cand.anchor,
      now,
      commit_hash: null,
      reason: null,
      via: 'complete',
      owner: null,
    });
    completed.add(cand.anchor);
    out.push(cand.anchor);
    recordEvent(ctx, c, {
      command: 'substep_auto_completed',
      at: now,
      plan_path,
      step_anchor: cand.anchor,
      actor,
      attempt,
      details: { step_anchor: cand.anchor },
    });
  }
  return out;
}
