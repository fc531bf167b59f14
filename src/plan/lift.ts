/**
 * Lifting (docs/state.md §3): a top-level step is the claim unit. For a top-level step and its descendants,
 * a dependency whose target lies outside the step's own subtree is replaced by the target's top-level
 * ancestor; dependencies inside one subtree only order work inside the claim. Touches are lifted the same
 * way: a substep's count for its top-level step. Pure, no markdown-it, cheap to import from state code.
 */
import type { ParsedPlan, PlanStep } from './types.js';

type StepsOnly = Pick<ParsedPlan, 'steps'>;
type WithEdges = Pick<ParsedPlan, 'steps' | 'edges'>;

/** Anchor → top-level ancestor anchor (itself for a top-level step). First occurrence wins for duplicates. */
export function topLevelMap(plan: StepsOnly): Map<string, string> {
  const parent = new Map<string, string | null>();
  for (const s of plan.steps) if (!parent.has(s.anchor)) parent.set(s.anchor, s.parent_anchor);
  const top = new Map<string, string>();
  for (const anchor of parent.keys()) {
    let cur = anchor;
    // Parents always precede children in document order, so a chain is at most steps.length long.
    for (let guard = 0; guard <= plan.steps.length; guard++) {
      const known = top.get(cur);
      if (known !== undefined) {
        cur = known;
        break;
      }
      const p = parent.get(cur);
      if (p === null || p === undefined) break;
      cur = p;
    }
    top.set(anchor, cur);
  }
  return top;
}

/** The top-level ancestor of `anchor` (itself when top-level), or null when no step has that anchor. */
export function topLevelOf(plan: StepsOnly, anchor: string): string | null {
  const byAnchor = new Map<string, PlanStep>();
  for (const s of plan.steps) if (!byAnchor.has(s.anchor)) byAnchor.set(s.anchor, s);
  let cur = byAnchor.get(anchor);
  if (!cur) return null;
  for (let guard = 0; guard <= plan.steps.length && cur.parent_anchor !== null; guard++) {
    const p = byAnchor.get(cur.parent_anchor);
    if (!p) break;
    cur = p;
  }
  return cur.anchor;
}

export interface LiftedEdges {
  /** Edges between two members of one top-level subtree, unchanged (`[from, to]`). */
  intra: [string, string][];
  /** Cross-subtree edges lifted to `[topLevel(from), topLevel(to)]`, deduplicated. */
  cross: [string, string][];
}

/** Splits `plan.edges` into intra-subtree edges and lifted cross-subtree edges (document order, deduped). */
export function liftEdges(plan: WithEdges): LiftedEdges {
  const top = topLevelMap(plan);
  const intra: [string, string][] = [];
  const cross: [string, string][] = [];
  const seen = new Set<string>();
  for (const [from, to] of plan.edges) {
    const tf = top.get(from);
    const tt = top.get(to);
    if (tf === undefined || tt === undefined) continue;
    const edge: [string, string] = tf === tt ? [from, to] : [tf, tt];
    const key = (tf === tt ? 'i' : 'c') + JSON.stringify(edge);
    if (seen.has(key)) continue;
    seen.add(key);
    (tf === tt ? intra : cross).push(edge);
  }
  return { intra, cross };
}

/**
 * The lifted dependencies of each top-level step's claim unit: top-level anchors it waits for, in
 * `step_index` order, excluding dependencies inside its own subtree. Every top-level step has an entry.
 */
export function liftedDependencies(plan: WithEdges): Map<string, string[]> {
  const order = new Map<string, number>();
  const result = new Map<string, string[]>();
  for (const s of plan.steps) {
    if (!order.has(s.anchor)) order.set(s.anchor, s.step_index);
    if (s.parent_anchor === null && !result.has(s.anchor)) result.set(s.anchor, []);
  }
  for (const [from, to] of liftEdges(plan).cross) {
    const list = result.get(from);
    if (list && !list.includes(to)) list.push(to);
  }
  for (const list of result.values()) list.sort((a, b) => (order.get(a) ?? 0) - (order.get(b) ?? 0));
  return result;
}

/**
 * The Touches each step is stored with (docs/plan-format.md §2.5, docs/state.md §3.12): a top-level step
 * carries its own globs, then its substeps' in document order, duplicates dropped, since its claim covers
 * them (the claim rule and `run --dry-run` compare top-level steps only); a substep keeps its own.
 * First occurrence wins for duplicate anchors.
 */
export function liftedTouches(plan: StepsOnly): Map<string, string[]> {
  const top = topLevelMap(plan);
  const out = new Map<string, string[]>();
  for (const s of plan.steps) {
    if (out.has(s.anchor)) continue;
    out.set(s.anchor, [...new Set(s.touches)]);
    // Parents precede children in document order: the top-level step's list exists already.
    const t = top.get(s.anchor);
    const mine = t === undefined || t === s.anchor ? undefined : out.get(t);
    if (mine) for (const g of s.touches) if (!mine.includes(g)) mine.push(g);
  }
  return out;
}
