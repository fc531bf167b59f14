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
import { runCommandFor, runDriverOf } from './run-driver.js';
import { slugOfPlanPath } from '../plan/resolve.js';
import * as state from './state-bridge.js';
import type { UsageTotals } from '../contract/usage.js';

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
  /** The plan's usage from the state (docs/state.md §2); null when none was reported (or no state). */
  usage: UsageTotals | null;
  /** The `tugcode run` holding the plan's run lock, if one does (docs/run.md §1 item 3). */
  run_driver: RunDriverLine | null;
}

/**
 * A run lock's holder as status shows it: `alive` false when its pid on this host is gone (its claims stay
 * until `claims_expire_at`, or until `command`, a new run, takes them over), null when it is on another host.
 */
export interface RunDriverLine {
  pid: number;
  host: string;
  started_at: string;
  alive: boolean | null;
  /** When the last of the plan's claimed steps' leases runs out; null when no step is claimed. */
  claims_expire_at: string | null;
  /** The run that takes the plan up again (the dead run's recorded flags, else a placeholder implementer). */
  command: string;
}

export interface StatusData {
  plans: PlanStatusLine[];
}

const pct = (done: number, total: number): number => (total === 0 ? 0 : Math.floor((100 * done) / total));

/** Progress from the plan's own checkboxes: a top-level step is done when it and its substeps have items, all checked. */
async function fromCheckboxes(root: string, planPath: string): Promise<PlanStatusLine> {
  const { parsePlan } = await import('../plan/parse.js');
  const plan = parsePlan(readFileSync(join(root, planPath)));
  const top = plan.steps.filter((s) => s.parent_anchor === null);
  const topOf = new Map<string, string>();
  for (const s of plan.steps) {
    let a: string = s.anchor;
    let p: string | null = s.parent_anchor;
    while (p !== null) {
      a = p;
      p = plan.steps.find((x) => x.anchor === p)?.parent_anchor ?? null;
    }
    topOf.set(s.anchor, a);
  }
  let done = 0;
  for (const t of top) {
    const items = plan.steps.filter((s) => topOf.get(s.anchor) === t.anchor).flatMap((s) => s.items);
    if (items.length > 0 && items.every((i) => i.checked)) done++;
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
    usage: null,
    run_driver: null,
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
    usage,
    run_driver: null,
  };
}

/** The run holding the plan's lock, with when its claims expire (the latest lease of a claimed step). */
function driverLine(ctx: FlowCtx, planPath: string, steps: state.StepState[]): RunDriverLine | null {
  const slug = slugOfPlanPath(planPath);
  const d = slug === null ? null : runDriverOf(ctx.repo.mainRoot, slug);
  if (!d) return null;
  const leases = steps
    .filter((s) => (s.status === 'claimed' || s.status === 'in_progress') && s.lease_expires_at !== null)
    .map((s) => s.lease_expires_at!)
    .sort();
  return {
    pid: d.pid,
    host: d.host,
    started_at: d.started_at,
    alive: d.alive,
    claims_expire_at: leases.at(-1) ?? null,
    command: runCommandFor(planPath, { run_flags: d.run_flags, run: ctx.config.run }),
  };
}

export async function planStatus(ctx: FlowCtx, plan?: string): Promise<StatusData> {
  const root = ctx.repo.worktreeRoot;
  const known = await state.planRows(ctx);
  const byPath = new Map(known.map((p) => [p.plan_path, p]));
  const lineFor = async (planPath: string): Promise<PlanStatusLine> => {
    const row = byPath.get(planPath);
    if (row)
      return {
        ...fromState(planPath, row.status, row.steps, row.usage),
        run_driver: driverLine(ctx, planPath, row.steps),
      };
    if (!existsSync(join(root, planPath))) throw new TugError('PlanNotFound', { plan: planPath, plan_path: planPath });
    return { ...(await fromCheckboxes(root, planPath)), run_driver: driverLine(ctx, planPath, []) };
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
