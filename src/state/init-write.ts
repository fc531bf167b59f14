/**
 * The writes of `state init`: a fresh insert, and the `--force` re-initialization (docs/state.md §4) that
 * keeps completed steps and live claims, resets everything else, deletes removed steps and recomputes
 * step_index, dependencies, unmet_deps and counters, all inside the caller's transaction.
 */
import { liftedDependencies, liftedTouches, topLevelMap } from '../plan/lift.js';
import type { ParsedPlan, PlanStep } from '../plan/types.js';
import type { Conn } from './sql/conn.js';
import { insertPlan, recountPlan, setPlanStatus, updatePlanHeader, getPlan, type PlanHeader } from './queries/plans.js';
import {
  clearClaimColumns,
  deleteStep,
  insertStep,
  resetStepFully,
  stepsOfPlan,
  touchesColumn,
  updateStepStructure,
} from './queries/steps.js';
import { deleteDeps, depsOfPlan, insertDep, insertLiftedDep, recomputeUnmet } from './queries/deps.js';
import { deleteItemsOfStep, insertItem, itemsOfPlan } from './queries/items.js';
import { deleteRefactorsOfStep, insertRefactor, refactorsOfPlan } from './queries/refactors.js';
import { isExpired, isHeld } from './status.js';
import type { ItemRow, RefactorRow, StepRow } from './types.js';

export interface InitCounts {
  steps_created: number;
  checklist_items_created: number;
  refactors_created: number;
}

/** What stepShape reads besides the step: its top-level ancestor, depth and lifted Touches, by anchor. */
interface Shapes {
  top: Map<string, string>;
  depth: Map<string, number>;
  touches: Map<string, string[]>;
}

function shapes(parsed: ParsedPlan): Shapes {
  return { top: topLevelMap(parsed), depth: depths(parsed), touches: liftedTouches(parsed) };
}

function stepShape(plan_path: string, s: PlanStep, { top, depth, touches }: Shapes) {
  return {
    plan_path,
    anchor: s.anchor,
    parent_anchor: s.parent_anchor,
    top_anchor: top.get(s.anchor) ?? s.anchor,
    step_id: s.id,
    step_index: s.step_index,
    depth: depth.get(s.anchor) ?? 0,
    title: s.title,
    commit_message: s.commit_message,
    // A top-level step is stored with its substeps' Touches too (docs/state.md §3.12).
    touches: touchesColumn(touches.get(s.anchor) ?? s.touches),
  };
}

function depths(parsed: ParsedPlan): Map<string, number> {
  const d = new Map<string, number>();
  for (const s of parsed.steps) d.set(s.anchor, s.parent_anchor === null ? 0 : (d.get(s.parent_anchor) ?? 0) + 1);
  return d;
}

function uniqueSteps(parsed: ParsedPlan): PlanStep[] {
  const seen = new Set<string>();
  return parsed.steps.filter((s) => (seen.has(s.anchor) ? false : (seen.add(s.anchor), true)));
}

async function writeEdges(c: Conn, plan_path: string, parsed: ParsedPlan): Promise<void> {
  for (const [from, to] of parsed.edges) await insertDep(c, plan_path, from, to);
  for (const [from, tos] of liftedDependencies(parsed))
    for (const to of tos) await insertLiftedDep(c, plan_path, from, to);
}

/** A plan seen for the first time: every row, items open, refactors open. */
function header(plan_path: string, parsed: ParsedPlan, bytes: Uint8Array, now: string): PlanHeader {
  return {
    plan_path,
    plan_hash: parsed.plan_hash,
    plan_source: bytes,
    structure_hash: parsed.structure_hash,
    phase_title: parsed.title,
    implicit_sequential: parsed.implicit_sequential,
    now,
  };
}

export async function insertFresh(
  c: Conn,
  plan_path: string,
  parsed: ParsedPlan,
  bytes: Uint8Array,
  now: string,
): Promise<InitCounts> {
  await insertPlan(c, header(plan_path, parsed, bytes, now));
  const sh = shapes(parsed);
  const counts: InitCounts = { steps_created: 0, checklist_items_created: 0, refactors_created: 0 };
  for (const s of uniqueSteps(parsed)) {
    await insertStep(c, stepShape(plan_path, s, sh));
    counts.steps_created++;
    for (const it of s.items) {
      await insertItem(c, {
        plan_path,
        step_anchor: s.anchor,
        kind: it.kind,
        ordinal: it.ordinal,
        depth: it.depth,
        text: it.text,
        status: 'open',
        reason: null,
        updated_at: null,
      });
      counts.checklist_items_created++;
    }
    for (const r of s.refactors) {
      await insertRefactor(c, {
        plan_path,
        step_anchor: s.anchor,
        ordinal: r.ordinal,
        op_text: r.command ?? r.text,
        status: 'open',
        snapshot_before: null,
        snapshot_after: null,
        exit_code: null,
        result_json: null,
        updated_at: now,
      });
      counts.refactors_created++;
    }
  }
  await writeEdges(c, plan_path, parsed);
  await recomputeUnmet(c, plan_path);
  await recountPlan(c, plan_path);
  return counts;
}

type Mode = 'completed' | 'kept' | 'reset';

export interface ReinitReport extends InitCounts {
  kept_completed: string[];
  kept_claims: string[];
  /** Top-level steps that keep a person's decision, or wait for one, since their work did not change. */
  kept_decisions: string[];
  reset_steps: string[];
  removed_steps: string[];
}

/**
 * What a top-level step's subtree asks to be done, as one string per top anchor: its steps, their items
 * (kind, ordinal, text), refactor rows and dependencies. Two plans give the same string for a step when the
 * work a reviewer or a person judged is still the work asked for.
 */
function subtreeWork(
  top: (anchor: string) => string,
  parts: { anchors: string[]; items: string[][]; refactors: string[][]; deps: string[][] },
): Map<string, string> {
  const lines = new Map<string, string[]>();
  const add = (anchor: string, line: string) => {
    const t = top(anchor);
    lines.set(t, [...(lines.get(t) ?? []), line]);
  };
  for (const a of parts.anchors) add(a, `step ${a}`);
  for (const [a, ...rest] of parts.items) add(a!, `item ${a} ${rest.join('\0')}`);
  for (const [a, ...rest] of parts.refactors) add(a!, `refactor ${a} ${rest.join('\0')}`);
  for (const [a, to] of parts.deps) add(a!, `dep ${a} ${to}`);
  return new Map([...lines].map(([t, l]) => [t, l.sort().join('\n')]));
}

/**
 * The top-level steps that keep a person's part through a re-initialisation (docs/state.md §3.11): one
 * waiting for a decision (`needs_human`), or approved or sent back with notes and not yet claimed again,
 * whose subtree's work is the same in the new plan. The rest of the plan may change around them.
 */
export async function decisionsKept(c: Conn, plan_path: string, parsed: ParsedPlan): Promise<string[]> {
  const rows = await stepsOfPlan(c, plan_path);
  const decided = rows.filter(
    (r) =>
      r.parent_anchor === null &&
      (r.status === 'needs_human' || (r.status === 'pending' && (r.human_decision !== null || r.human_notes !== null))),
  );
  if (decided.length === 0) return [];
  const oldTop = new Map(rows.map((r) => [r.anchor, r.top_anchor]));
  const before = subtreeWork((a) => oldTop.get(a) ?? a, {
    anchors: rows.map((r) => r.anchor),
    items: (await itemsOfPlan(c, plan_path)).map((i) => [i.step_anchor, i.kind, String(i.ordinal), i.text]),
    refactors: (await refactorsOfPlan(c, plan_path)).map((r) => [r.step_anchor, String(r.ordinal), r.op_text]),
    deps: (await depsOfPlan(c, plan_path)).map((d) => [d.step_anchor, d.depends_on]),
  });
  const newTop = topLevelMap(parsed);
  const steps = uniqueSteps(parsed);
  const after = subtreeWork((a) => newTop.get(a) ?? a, {
    anchors: steps.map((s) => s.anchor),
    items: steps.flatMap((s) => s.items.map((i) => [s.anchor, i.kind, String(i.ordinal), i.text])),
    refactors: steps.flatMap((s) => s.refactors.map((r) => [s.anchor, String(r.ordinal), r.command ?? r.text])),
    deps: parsed.edges.map(([from, to]) => [from, to]),
  });
  return decided
    .filter((r) => (newTop.get(r.anchor) ?? r.anchor) === r.anchor && before.get(r.anchor) === after.get(r.anchor))
    .map((r) => r.anchor);
}

/** `state init --force` (and reactivation of an archived plan). Foreign keys are checked at commit. */
export async function reinitialize(
  c: Conn,
  plan_path: string,
  parsed: ParsedPlan,
  bytes: Uint8Array,
  now: string,
  releaseClaims: boolean,
): Promise<ReinitReport> {
  await c.run(c.dialect === 'sqlite' ? 'PRAGMA defer_foreign_keys = ON' : 'SET CONSTRAINTS ALL DEFERRED');
  const old = new Map((await stepsOfPlan(c, plan_path)).map((s) => [s.anchor, s]));
  const oldItems = groupBy(await itemsOfPlan(c, plan_path), (i) => i.step_anchor);
  const oldRefs = groupBy(await refactorsOfPlan(c, plan_path), (r) => r.step_anchor);
  const sh = shapes(parsed);
  const keptDecisions = new Set(await decisionsKept(c, plan_path, parsed));
  const report: ReinitReport = {
    steps_created: 0,
    checklist_items_created: 0,
    refactors_created: 0,
    kept_completed: [],
    kept_claims: [],
    kept_decisions: [...keptDecisions],
    reset_steps: [],
    removed_steps: [],
  };
  await deleteDeps(c, plan_path);
  const steps = uniqueSteps(parsed);
  const live = (row: StepRow | undefined) =>
    Boolean(row && row.parent_anchor === null && isHeld(row.status) && !isExpired(row.lease_expires_at, now));
  for (const s of steps) {
    const shape = stepShape(plan_path, s, sh);
    const o = old.get(s.anchor);
    const keepClaim = !releaseClaims && live(old.get(shape.top_anchor));
    let mode: Mode;
    if (o) {
      mode =
        o.status === 'completed'
          ? 'completed'
          : (keepClaim && o.status !== 'failed') || keptDecisions.has(shape.top_anchor)
            ? 'kept'
            : 'reset';
      // Order matters for the row CHECKs: clear claim columns before a row becomes a substep.
      if (mode === 'reset') await resetStepFully(c, plan_path, s.anchor);
      if (o.parent_anchor === null && shape.parent_anchor !== null)
        await clearClaimColumns(c, plan_path, s.anchor, shape.parent_anchor);
      await updateStepStructure(c, shape);
    } else {
      await insertStep(c, shape);
      report.steps_created++;
      mode = 'reset';
    }
    if (o && mode === 'completed') report.kept_completed.push(s.anchor);
    else if (o && mode === 'kept' && !keptDecisions.has(shape.top_anchor)) report.kept_claims.push(s.anchor);
    else if (o) report.reset_steps.push(s.anchor);
    await rewriteItems(c, plan_path, s, mode, oldItems.get(s.anchor) ?? [], report);
    await rewriteRefactors(c, plan_path, s, mode, oldRefs.get(s.anchor) ?? [], now, report);
  }
  const keep = new Set(steps.map((s) => s.anchor));
  const removed = [...old.values()]
    .filter((s) => !keep.has(s.anchor))
    .sort((a, b) => b.depth - a.depth || b.step_index - a.step_index);
  for (const s of removed) {
    await deleteStep(c, plan_path, s.anchor);
    report.removed_steps.push(s.anchor);
  }
  await writeEdges(c, plan_path, parsed);
  await recomputeUnmet(c, plan_path);
  await recountPlan(c, plan_path);
  await updatePlanHeader(c, header(plan_path, parsed, bytes, now));
  const p = (await getPlan(c, plan_path))!;
  await setPlanStatus(c, plan_path, p.steps_total > 0 && p.steps_completed === p.steps_total ? 'done' : 'active', now);
  return report;
}

/** Why an item or refactor row added to a completed step by a re-init is not done (docs/state.md §4). */
const ADDED_TO_COMPLETED = 'added to a completed step by state init --force';

async function rewriteItems(
  c: Conn,
  plan_path: string,
  s: PlanStep,
  mode: Mode,
  oldItems: ItemRow[],
  report: InitCounts,
): Promise<void> {
  const byKey = new Map(oldItems.map((i) => [`${i.kind}:${i.ordinal}`, i]));
  await deleteItemsOfStep(c, plan_path, s.anchor);
  for (const it of s.items) {
    const o = byKey.get(`${it.kind}:${it.ordinal}`);
    if (!o) report.checklist_items_created++;
    const carry = o && mode !== 'reset';
    await insertItem(c, {
      plan_path,
      step_anchor: s.anchor,
      kind: it.kind,
      ordinal: it.ordinal,
      depth: it.depth,
      text: it.text,
      // A completed step stays completed (its commit stands) and consistent; an item added to it was never
      // done, so it is deferred with a reason saying so, as a refactor added to it is skipped.
      status: carry ? o.status : mode === 'completed' ? 'deferred' : 'open',
      reason: carry ? o.reason : mode === 'completed' ? ADDED_TO_COMPLETED : null,
      updated_at: carry ? o.updated_at : null,
    });
  }
}

async function rewriteRefactors(
  c: Conn,
  plan_path: string,
  s: PlanStep,
  mode: Mode,
  oldRows: RefactorRow[],
  now: string,
  report: InitCounts,
): Promise<void> {
  const byKey = new Map(oldRows.map((r) => [`${r.ordinal}\0${r.op_text}`, r]));
  await deleteRefactorsOfStep(c, plan_path, s.anchor);
  for (const r of s.refactors) {
    const op_text = r.command ?? r.text;
    const o = byKey.get(`${r.ordinal}\0${op_text}`);
    if (!o) report.refactors_created++;
    if (o && mode !== 'reset') {
      await insertRefactor(c, { ...o, plan_path, step_anchor: s.anchor });
      continue;
    }
    const skipped = mode === 'completed';
    await insertRefactor(c, {
      plan_path,
      step_anchor: s.anchor,
      ordinal: r.ordinal,
      op_text,
      status: skipped ? 'skipped' : 'open',
      snapshot_before: null,
      snapshot_after: null,
      exit_code: null,
      result_json: skipped ? JSON.stringify({ skipped_reason: ADDED_TO_COMPLETED }) : null,
      updated_at: now,
    });
  }
}

function groupBy<T>(rows: T[], key: (r: T) => string): Map<string, T[]> {
  const m = new Map<string, T[]>();
  for (const r of rows) {
    const k = key(r);
    const list = m.get(k);
    if (list) list.push(r);
    else m.set(k, [r]);
  }
  return m;
}
