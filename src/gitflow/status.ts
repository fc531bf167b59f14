/**
 * `tugcode status [plan]` (docs/git.md §6): one progress line per plan from
 * state.db, falling back to the plan's checkboxes when the plan has no state. Read-only: state.db is
 * opened read-only and never created or migrated.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TugError } from '../contract/errors.js';
import type { FlowCtx } from './flow-context.js';
import { resolvePlanPath } from './plan-file.js';
import { lastRunLine, runDriverLine, type LastRunLine, type RunDriverLine } from './run-driver.js';
import * as state from './state-bridge.js';
import type { UsageTotals } from '../contract/usage.js';
import type { ParsedPlan } from '../plan/types.js';
import { shellArg } from '../util/shell-arg.js';

export interface PlanStatusLine {
  plan_path: string;
  source: 'state' | 'checkboxes';
  status: string;
  steps_completed: number;
  steps_total: number;
  percent: number;
  claimed_steps: string[];
  failed_steps: string[];
  /** Steps waiting for `state decide` (docs/state.md §3.11). */
  needs_human_steps: string[];
  /**
   * Steps a human approved (`state decide --approve`) whose kept commit the next `tugcode run` integrates,
   * without the implementer or the reviewer (docs/git.md §6, docs/run.md §6.3).
   */
  approved_steps: { step_anchor: string; review_commit: string | null }[];
  /** Steps a human sent back with notes (`state decide --revise`) that their next attempt reads (docs/git.md §6). */
  revised_steps: { step_anchor: string; notes: string }[];
  /** The plan's usage from the state (docs/state.md §2); null when none was reported (or no state). */
  usage: UsageTotals | null;
  /** The `tugcode run` holding the plan's run lock, if one does (docs/run.md §1 item 3). */
  run_driver: RunDriverLine | null;
  /**
   * The plan's last run that ended (docs/state.md §2): its flags, when it ended, and the `tugcode run` that
   * repeats it; null without state or when the state records none.
   */
  last_run: LastRunLine | null;
  /** Why the plan file is invalid, as `tugcode validate` would say it (docs/git.md §6); null when valid or absent. */
  plan_error: PlanErrorLine | null;
  /**
   * The plan file's structure differs from the one the state was initialised from, so the next `tugcode
   * run` re-initialises the state from it (docs/git.md §6, docs/run.md §1.10); false without state or with
   * an invalid file.
   */
  structure_changed: boolean;
}

/** The first of an invalid plan file's errors, and the command that lists them all. */
export interface PlanErrorLine {
  code: string;
  message: string;
  line: number | null;
  error_count: number;
  command: string;
}

export interface StatusData {
  plans: PlanStatusLine[];
}

const pct = (done: number, total: number): number => (total === 0 ? 0 : Math.floor((100 * done) / total));

type Level = 'lenient' | 'normal' | 'strict';

/**
 * The plan file's first error at the configured level, as `tugcode validate` reports it (a bad file name,
 * E004, first; under strict a warning counts too): an empty or binary file is otherwise just `active 0/0`.
 */
async function planErrorOf(plan: ParsedPlan, planPath: string, level: Level): Promise<PlanErrorLine | null> {
  const { validatePlanFile } = await import('../plan/validate.js');
  const errors = validatePlanFile(plan, planPath, level).diagnostics.filter(
    (d) => d.severity === 'error' || (level === 'strict' && d.severity === 'warning'),
  );
  const first = errors[0];
  if (!first) return null;
  return {
    code: first.code,
    message: first.message,
    line: first.line ?? null,
    error_count: errors.length,
    command: `tugcode validate ${shellArg(planPath)}`,
  };
}

/**
 * Progress from the plan's own checkboxes: a top-level step is done when it and its substeps have items, all
 * checked. Linear in the steps (status parses every plan on each call, docs/git.md §6): one map of parents,
 * one pass grouping the items under their top-level step. Exported for the test that counts its reads.
 */
export function fromCheckboxes(plan: ParsedPlan, planPath: string): PlanStatusLine {
  const steps = plan.steps;
  const top = steps.filter((s) => s.parent_anchor === null);
  // The first step of an anchor is its parent's (a duplicate anchor is an error the plan reports).
  const parentOf = new Map<string, string | null>();
  for (const s of steps) if (!parentOf.has(s.anchor)) parentOf.set(s.anchor, s.parent_anchor);
  const topOf = new Map<string, string>();
  for (const s of steps) {
    let a: string = s.anchor;
    let p: string | null = s.parent_anchor;
    while (p !== null) {
      a = p;
      p = parentOf.get(p) ?? null;
    }
    topOf.set(s.anchor, a);
  }
  const itemsOf = new Map<string, { total: number; checked: number }>();
  for (const s of steps) {
    const t = topOf.get(s.anchor)!;
    const c = itemsOf.get(t) ?? { total: 0, checked: 0 };
    for (const i of s.items) {
      c.total++;
      if (i.checked) c.checked++;
    }
    itemsOf.set(t, c);
  }
  let done = 0;
  for (const t of top) {
    const c = itemsOf.get(t.anchor);
    if (c && c.total > 0 && c.checked === c.total) done++;
  }
  return {
    plan_path: planPath,
    source: 'checkboxes',
    status: top.length > 0 && done === top.length ? 'done' : 'active',
    steps_completed: done,
    steps_total: top.length,
    percent: pct(done, top.length),
    claimed_steps: [],
    failed_steps: [],
    needs_human_steps: [],
    approved_steps: [],
    revised_steps: [],
    usage: null,
    run_driver: null,
    last_run: null,
    plan_error: null,
    structure_changed: false,
  };
}

function fromState(
  planPath: string,
  status: string,
  steps: state.StepState[],
  usage: UsageTotals | null,
): PlanStatusLine {
  const top = steps.filter((s) => s.parent_anchor === null);
  const done = top.filter((s) => s.status === 'completed').length;
  return {
    plan_path: planPath,
    source: 'state',
    status,
    steps_completed: done,
    steps_total: top.length,
    percent: pct(done, top.length),
    claimed_steps: top.filter((s) => s.status === 'claimed' || s.status === 'in_progress').map((s) => s.anchor),
    failed_steps: top.filter((s) => s.status === 'failed').map((s) => s.anchor),
    needs_human_steps: top.filter((s) => s.status === 'needs_human').map((s) => s.anchor),
    approved_steps: top
      .filter((s) => s.status !== 'completed' && s.human_decision === 'approved')
      .map((s) => ({ step_anchor: s.anchor, review_commit: s.review_commit })),
    revised_steps: top
      .filter((s) => s.human_notes !== null && s.status !== 'completed' && s.human_decision !== 'approved')
      .map((s) => ({ step_anchor: s.anchor, notes: s.human_notes! })),
    usage,
    run_driver: null,
    last_run: null,
    plan_error: null,
    structure_changed: false,
  };
}

/**
 * The run holding the plan's lock, with when its claims expire (src/gitflow/run-driver.ts); its command has
 * the plan's last run's flags (`last`) when the lock records none.
 */
function driverLine(
  ctx: FlowCtx,
  planPath: string,
  steps: state.StepState[],
  last?: { run_flags: string[] } | null,
): RunDriverLine | null {
  return runDriverLine(ctx.repo.mainRoot, planPath, steps, ctx.config.run, last?.run_flags);
}

export async function planStatus(ctx: FlowCtx, plan?: string): Promise<StatusData> {
  const root = ctx.repo.worktreeRoot;
  const known = await state.planRows(ctx);
  const byPath = new Map(known.map((p) => [p.plan_path, p]));
  const level = ctx.config.validate?.level ?? 'normal';
  const { parsePlan } = await import('../plan/parse.js');
  const lineFor = async (planPath: string): Promise<PlanStatusLine> => {
    const row = byPath.get(planPath);
    const file = join(root, planPath);
    let parsed: ParsedPlan | null = null;
    try {
      parsed = existsSync(file) ? parsePlan(readFileSync(file)) : null;
    } catch {
      parsed = null; // unreadable (a directory, no permission): reported as not found when it has no state
    }
    const plan_error = parsed ? await planErrorOf(parsed, planPath, level) : null;
    if (row)
      return {
        ...fromState(planPath, row.status, row.steps, row.usage),
        run_driver: driverLine(ctx, planPath, row.steps, row.last_run),
        last_run: lastRunLine(planPath, row.last_run, ctx.config.run),
        plan_error,
        // One read of the stored hashes; the file is already parsed (no git: the run's plan is the committed
        // copy, which must equal the main checkout's, docs/run.md §1 item 1).
        structure_changed:
          parsed !== null &&
          plan_error === null &&
          (await state.storedStructureHash(ctx, planPath)) !== parsed.structure_hash,
      };
    if (!parsed) throw new TugError('PlanNotFound', { plan: planPath, plan_path: planPath });
    return { ...fromCheckboxes(parsed, planPath), run_driver: driverLine(ctx, planPath, []), plan_error };
  };
  if (plan !== undefined) {
    const planPath = await resolvePlanPath(
      ctx.repo,
      plan,
      root,
      known.map((p) => p.plan_path),
    );
    return { plans: [await lineFor(planPath)] };
  }
  const { listPlans } = await import('../plan/resolve.js');
  const paths = new Set([...known.filter((p) => p.status !== 'archived').map((p) => p.plan_path), ...listPlans(root)]);
  const plans: PlanStatusLine[] = [];
  for (const p of [...paths].sort()) plans.push(await lineFor(p));
  return { plans };
}
