/**
 * `state show` data (docs/state.md §5): every active and done plan (or one plan, or one step's subtree),
 * with per-step status, owner and lease (a substep's are those of its top-level step), lifted blockers,
 * per-kind counts and the items the text lists, and with `--step` the artifacts of the steps shown. Read-only;
 * the text is rendered by show-text.ts.
 */
import { TugError } from '../contract/errors.js';
import { shellArg } from '../util/shell-arg.js';
import type { SHOW_ITEMS } from '../contract/status.js';
import type { StateContext } from './context.js';
import { stepArg } from './owner.js';
import { resolvePlanRef, requirePlanRow } from './plan-ref.js';
import { itemsOfPlan, itemsOfSubtree } from './queries/items.js';
import { getIntegrationTarget, getPlan, listPlans } from './queries/plans.js';
import { targetSeenBy, type IntegrationTarget } from './integration-target.js';
import { INTEGRATION_TARGET_SCHEMA_VERSION } from './migrate.js';
import { lastRunOn, type LastRun } from './last-run.js';
import { refactorsOfPlan } from './queries/refactors.js';
import { getStep, stepsWithArtifactCounts } from './queries/steps.js';
import { artifactSummariesOfTop } from './queries/artifacts.js';
import { depsOfPlan, liftedDepsOfPlan } from './queries/deps.js';
import type { Conn } from './sql/conn.js';
import { isExpired, isHeld, KIND_PLURAL, type ArtifactKind, type ItemKind, type RefactorStatus } from './status.js';
import { emptyCounts, type Counts, type PlanRow, type StepRow } from './types.js';
import { emptyTotals, type UsageTotals } from '../contract/usage.js';
import { usageByStep } from './queries/usage.js';
import { addGroup, hasLedger } from './usage.js';

export type ItemsMode = (typeof SHOW_ITEMS)[number];

export interface ShowInput {
  plan?: string | undefined;
  items?: ItemsMode | undefined;
  step?: string | undefined;
}

export interface ShowItem {
  kind: ItemKind;
  ordinal: number;
  depth: number;
  text: string;
  status: string;
  reason: string | null;
}

export interface ShowRefactor {
  ordinal: number;
  op_text: string;
  status: RefactorStatus;
  exit_code: number | null;
  snapshot_before: string | null;
  snapshot_after: string | null;
}

/**
 * An artifact as `state show --step` lists it (docs/state.md §5.1): what, when, by whom; not its content
 * (`state export` carries that, as does the board's step detail).
 */
export interface ShowArtifact {
  id: number;
  kind: ArtifactKind;
  summary: string;
  /** The content's length in characters; null when it has none. */
  content_length: number | null;
  recorded_at: string;
  /** The worktree that recorded it (its event's actor) and that attempt; null when no event names it. */
  recorded_by: string | null;
  attempt: number | null;
}

export interface ShowStep {
  anchor: string;
  id: string;
  title: string;
  parent_anchor: string | null;
  step_index: number;
  status: string;
  attempt: number;
  failures: number;
  claimed_by: string | null;
  previous_owner: string | null;
  lease_expires_at: string | null;
  lease_expired: boolean;
  heartbeat_at: string | null;
  started_at: string | null;
  completed_at: string | null;
  commit_hash: string | null;
  completed_via: string | null;
  complete_reason: string | null;
  fail_reason: string | null;
  /** The review gate (docs/state.md §3.11): the kept commit, a human's approval, a human's notes. */
  review_commit: string | null;
  human_decision: 'approved' | null;
  human_notes: string | null;
  depends_on: string[];
  blocked_by: string[];
  counts: {
    tasks: Counts;
    tests: Counts;
    checkpoints: Counts;
    refactors: Record<RefactorStatus, number>;
    /** The step's own artifacts, always counted. */
    artifacts: number;
  };
  items: ShowItem[];
  refactors: ShowRefactor[];
  /** Listed only in a `--step` view (like items, counted always). */
  artifacts: ShowArtifact[];
  /** What the agent runs of this (sub)step used, over all its attempts (docs/state.md §2); null when none reported. */
  usage: UsageTotals | null;
}

export interface ShowPlan {
  plan_path: string;
  phase_title: string | null;
  status: string;
  steps: ShowStep[];
  overall: { steps_completed: number; steps_total: number; percent: number };
  /** The plan's usage: every report of every step; null when none. */
  usage: UsageTotals | null;
  /** Where the plan integrates (docs/run.md §1.11); null before its first integration records it. */
  integration_target: IntegrationTarget | null;
  /** The flags of the plan's last run that ended, and when (docs/state.md §2); null when none is recorded. */
  last_run: LastRun | null;
}

export interface ShowResult {
  plans: ShowPlan[];
}

export function percent(done: number, total: number): number {
  return total === 0 ? 0 : Math.floor((100 * done) / total);
}

export async function show(ctx: StateContext, input: ShowInput = {}): Promise<ShowResult> {
  const mode = input.items ?? 'active';
  const now = ctx.clock.now();
  if (input.plan === undefined) {
    if (input.step !== undefined)
      throw new TugError(
        'InvalidArgument',
        { reason: '--step needs a plan argument', argument: '--step' },
        { hint: `tugcode state show <plan> --step ${shellArg(input.step)}   (tugcode status lists the plans)` },
      );
    const store = ctx.store;
    if (!store) return { plans: [] };
    const seen = { version: store.version, self: ctx.repoRoot, shared: !!ctx.ownerPrefix };
    return store.read(async (c) => {
      const plans: ShowPlan[] = [];
      for (const p of await listPlans(c))
        if (p.status !== 'archived') plans.push(await planView(c, p, mode, now, seen));
      return { plans };
    });
  }
  const ref = await resolvePlanRef(ctx, input.plan);
  await requirePlanRow(ctx, ref);
  const store = ctx.store!;
  const step = input.step === undefined ? undefined : stepArg(input.step);
  const seen = { version: store.version, self: ctx.repoRoot, shared: !!ctx.ownerPrefix };
  return store.read(async (c) => {
    // One step (the driver asks for each unit it runs, the board for each detail opened): its top-level
    // step's rows only, not the plan's, so the cost follows the subtree and not the plan's length.
    const row = step === undefined ? undefined : await getStep(c, ref.plan_path, step);
    if (step !== undefined && !row) throw new TugError('StepNotFound', { plan_path: ref.plan_path, step_anchor: step });
    const top = row?.top_anchor;
    const view = await planView(c, (await getPlan(c, ref.plan_path))!, mode, now, seen, top);
    if (step !== undefined && top !== undefined) {
      const keep = new Set([step]);
      for (const s of view.steps) if (s.parent_anchor !== null && keep.has(s.parent_anchor)) keep.add(s.anchor);
      view.steps = view.steps.filter((s) => keep.has(s.anchor));
      // Only a view with artifacts to list reads them: the counts came with the steps.
      if (view.steps.some((s) => s.counts.artifacts > 0)) {
        const listed = await artifactSummariesOfTop(c, { plan_path: ref.plan_path, top_anchor: top });
        for (const s of view.steps)
          s.artifacts = listed
            .filter((a) => a.step_anchor === s.anchor)
            .map(({ step_anchor: _, ...a }) => ({ ...a, kind: a.kind as ArtifactKind }));
      }
    }
    return { plans: [view] };
  });
}

/** `version`: the store's schema version (an older store, read and not migrated, lacks the later columns). */
/** What planView needs of the store: its schema version, and how the clone it runs in reads a target. */
interface Seen {
  version: number;
  self: string;
  shared: boolean;
}

/** With `top`: the steps of that top-level step's subtree only (and the rows their blockers name). */
async function planView(
  c: Conn,
  plan: PlanRow,
  mode: ItemsMode,
  now: string,
  seen: Seen,
  top?: string,
): Promise<ShowPlan> {
  const ledger = hasLedger(seen.version);
  const rows = await stepsWithArtifactCounts(c, plan.plan_path, top);
  const byAnchor = new Map<string, StepRow>(rows.map((r) => [r.anchor, r]));
  const deps = group(await depsOfPlan(c, plan.plan_path, top));
  const lifted = group(await liftedDepsOfPlan(c, plan.plan_path, top));
  // The steps outside the subtree its dependencies name, and their top-level steps: the blockers' rows.
  if (top !== undefined)
    for (const d of new Set([...deps.values(), ...lifted.values()].flat()))
      for (let a: string | undefined = d; a !== undefined && !byAnchor.has(a);) {
        const t = await getStep(c, plan.plan_path, a);
        if (t) byAnchor.set(a, t);
        a = t?.top_anchor;
      }
  const items = groupBy(
    top === undefined ? await itemsOfPlan(c, plan.plan_path) : await itemsOfSubtree(c, plan.plan_path, top),
  );
  const refactors = groupBy(await refactorsOfPlan(c, plan.plan_path, top));
  const usage = new Map<string, UsageTotals>();
  let planUsage: UsageTotals | null = null;
  for (const g of ledger ? await usageByStep(c, plan.plan_path) : []) {
    usage.set(g.step_anchor, addGroup(usage.get(g.step_anchor) ?? emptyTotals(), g));
    planUsage = addGroup(planUsage ?? emptyTotals(), g);
  }
  const steps = rows.map((r) => {
    const top = byAnchor.get(r.top_anchor) ?? r;
    const held = isHeld(top.status);
    const expired = held && isExpired(top.lease_expires_at, now);
    const counts = {
      tasks: emptyCounts(),
      tests: emptyCounts(),
      checkpoints: emptyCounts(),
      refactors: { open: 0, applied: 0, failed: 0, skipped: 0 },
      artifacts: r.artifact_count,
    };
    const own = items.get(r.anchor) ?? [];
    for (const i of own) counts[KIND_PLURAL[i.kind]][i.status]++;
    const ownRefs = refactors.get(r.anchor) ?? [];
    for (const x of ownRefs) counts.refactors[x.status]++;
    const listed = mode === 'all' || (mode === 'active' && r.parent_anchor === null && held);
    const view: ShowStep = {
      anchor: r.anchor,
      id: r.step_id,
      title: r.title,
      parent_anchor: r.parent_anchor,
      step_index: r.step_index,
      status: r.status,
      attempt: top.attempt,
      failures: top.failures,
      claimed_by: top.claimed_by,
      previous_owner: top.previous_owner,
      lease_expires_at: top.lease_expires_at,
      lease_expired: expired,
      heartbeat_at: top.heartbeat_at,
      started_at: r.started_at,
      completed_at: r.completed_at,
      commit_hash: r.commit_hash,
      completed_via: r.completed_via,
      complete_reason: r.complete_reason,
      fail_reason: r.fail_reason,
      review_commit: r.review_commit,
      human_decision: r.human_decision,
      human_notes: r.human_notes,
      depends_on: deps.get(r.anchor) ?? [],
      blocked_by: r.status === 'completed' ? [] : blockers(r, byAnchor, deps, lifted),
      counts,
      items: listed
        ? own.map((i) => ({
            kind: i.kind,
            ordinal: i.ordinal,
            depth: i.depth,
            text: i.text,
            status: i.status,
            reason: i.reason,
          }))
        : [],
      refactors: ownRefs.map((x) => ({
        ordinal: x.ordinal,
        op_text: x.op_text,
        status: x.status,
        exit_code: x.exit_code,
        snapshot_before: x.snapshot_before,
        snapshot_after: x.snapshot_after,
      })),
      artifacts: [],
      usage: usage.get(r.anchor) ?? null,
    };
    return view;
  });
  return {
    plan_path: plan.plan_path,
    phase_title: plan.phase_title,
    status: plan.status,
    steps,
    overall: {
      steps_completed: plan.steps_completed,
      steps_total: plan.steps_total,
      percent: percent(plan.steps_completed, plan.steps_total),
    },
    usage: planUsage,
    integration_target:
      seen.version >= INTEGRATION_TARGET_SCHEMA_VERSION
        ? targetSeenBy(await getIntegrationTarget(c, plan.plan_path), seen)
        : null,
    last_run: await lastRunOn(c, seen.version, plan.plan_path),
  };
}

/** Lifted blockers: for a top-level step its lifted dependencies not completed; for a substep its own
 * dependencies inside the subtree, and the top-level ancestors of those outside it, not completed. */
function blockers(
  r: StepRow,
  byAnchor: Map<string, StepRow>,
  deps: Map<string, string[]>,
  lifted: Map<string, string[]>,
): string[] {
  const out: string[] = [];
  const add = (a: string) => {
    const t = byAnchor.get(a);
    if (t && t.status !== 'completed' && !out.includes(a)) out.push(a);
  };
  if (r.parent_anchor === null) for (const d of lifted.get(r.anchor) ?? []) add(d);
  else
    for (const d of deps.get(r.anchor) ?? []) {
      const t = byAnchor.get(d);
      if (t) add(t.top_anchor === r.top_anchor ? d : t.top_anchor);
    }
  return out;
}

function group(rows: { step_anchor: string; depends_on: string }[]): Map<string, string[]> {
  const m = new Map<string, string[]>();
  for (const r of rows) {
    const l = m.get(r.step_anchor);
    if (l) l.push(r.depends_on);
    else m.set(r.step_anchor, [r.depends_on]);
  }
  return m;
}

function groupBy<T extends { step_anchor: string }>(rows: T[]): Map<string, T[]> {
  const m = new Map<string, T[]>();
  for (const r of rows) {
    const l = m.get(r.step_anchor);
    if (l) l.push(r);
    else m.set(r.step_anchor, [r]);
  }
  return m;
}
