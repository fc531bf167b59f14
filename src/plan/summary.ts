/**
 * A compact numeric summary of a parsed plan (step, substep, item and refactor counts, implicit order,
 * error count). Used by the corpus snapshot (scripts/plan-corpus-snapshot.mjs) and handy for reports.
 */
import type { ParsedPlan } from './types.js';
import { validatePlan } from './validate.js';

export interface PlanSummary {
  steps: number;
  substeps: number;
  items: { task: number; test: number; checkpoint: number };
  refactors: number;
  implicit_sequential: boolean;
  errors: number;
}

export function summarizePlan(plan: ParsedPlan): PlanSummary {
  const items = { task: 0, test: 0, checkpoint: 0 };
  let refactors = 0;
  let substeps = 0;
  for (const s of plan.steps) {
    if (s.parent_anchor !== null) substeps++;
    for (const it of s.items) items[it.kind]++;
    refactors += s.refactors.length;
  }
  return {
    steps: plan.steps.length - substeps,
    substeps,
    items,
    refactors,
    implicit_sequential: plan.implicit_sequential,
    errors: validatePlan(plan, 'lenient').diagnostics.length,
  };
}
