/**
 * The step brief (docs/run.md §2): what the implementer is told about its step, built from the parsed plan
 * and the step's state (item statuses, earlier failures).
 */
import { TugError } from '../contract/errors.js';
import type { ParsedPlan, PlanStep } from '../plan/types.js';
import type { BriefItem, ReviewIssue, StepBrief } from './types.js';

export interface StepBriefOptions {
  /** The plan's repo-relative path (TUG_PLAN). */
  plan_path: string;
  attempt: number;
  /** Item statuses keyed `${step_anchor}:${kind}:${ordinal}`; an item not in it (or no map) is `open`. */
  statuses?: Map<string, BriefItem['status']>;
  /** The step's earlier failed attempts (its substeps' briefs get none). */
  previous_failures?: { attempt: number; reason: string }[];
  /** `state decide --revise` notes for the step (docs/run.md §6.3): in its brief only, when set. */
  human_notes?: string | null | undefined;
  /** The reviewer's issues in a REVISE round (docs/run.md §6.2): in the step's brief only. */
  review_issues?: ReviewIssue[] | undefined;
}

/** The key of an item in `StepBriefOptions.statuses`. */
export function itemKey(step_anchor: string, kind: BriefItem['kind'], ordinal: number): string {
  return `${step_anchor}:${kind}:${ordinal}`;
}

/**
 * The brief of one step with its substeps (recursively, in `step_index` order). `depends_on` is the
 * step's effective dependencies (the plan's edges after implicit order, as state.db stores them).
 * Throws StepNotFound when the anchor is not a step of the plan.
 */
export function stepBrief(plan: ParsedPlan, anchor: string, o: StepBriefOptions): StepBrief {
  const step = plan.steps.find((s) => s.anchor === anchor);
  if (!step) throw new TugError('StepNotFound', { plan_path: o.plan_path, step_anchor: anchor });
  const children = new Map<string, PlanStep[]>();
  for (const s of plan.steps) {
    if (s.parent_anchor === null) continue;
    const l = children.get(s.parent_anchor);
    if (l) l.push(s);
    else children.set(s.parent_anchor, [s]);
  }
  const deps = new Map<string, string[]>();
  for (const [from, to] of plan.edges) {
    const l = deps.get(from);
    if (l) l.push(to);
    else deps.set(from, [to]);
  }
  const build = (s: PlanStep, failures: { attempt: number; reason: string }[]): StepBrief => ({
    plan_path: o.plan_path,
    step_anchor: s.anchor,
    title: s.title,
    attempt: o.attempt,
    commit_message: s.commit_message,
    references: s.references,
    depends_on: deps.get(s.anchor) ?? [],
    items: s.items.map((it) => ({
      kind: it.kind,
      ordinal: it.ordinal,
      text: it.text,
      status: o.statuses?.get(itemKey(s.anchor, it.kind, it.ordinal)) ?? 'open',
    })),
    substeps: [...(children.get(s.anchor) ?? [])].sort((a, b) => a.step_index - b.step_index).map((c) => build(c, [])),
    previous_failures: failures,
  });
  const brief = build(step, o.previous_failures ?? []);
  // Only when there is something: a brief without a review or a human's notes is as it always was.
  if (o.human_notes) brief.human_notes = o.human_notes;
  if (o.review_issues) brief.review_issues = o.review_issues;
  return brief;
}
