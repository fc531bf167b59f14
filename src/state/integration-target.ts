/**
 * Where a plan integrates (docs/state.md §8.4, docs/run.md §1.11). The first run or commit that integrates a
 * plan records its target in the plan's row: a git remote (`remote`, by the name `--remote` takes), or a
 * clone's own `tugplan/<slug>` (`local`, named by the clone's owner name, `<host>:<path>` on PostgreSQL, so
 * two hosts sharing one state never each integrate into a branch of their own). Integrating anywhere else
 * is refused before anything changes (IntegrationTargetMismatch), unless the caller moves the plan on
 * purpose (`move`: `tugcode run --move-integration`). A store older than the columns has no target: the
 * next writer migrates it and its first integration records one.
 */
import { TugError } from '../contract/errors.js';
import type { StateContext } from './context.js';
import { INTEGRATION_TARGET_SCHEMA_VERSION } from './migrate.js';
import { requirePlanRow, resolvePlanRef, writeStore } from './plan-ref.js';
import { getIntegrationTarget, setIntegrationTarget, type TargetRow } from './queries/plans.js';
import { recordEvent } from './record.js';

export interface IntegrationTarget {
  kind: 'local' | 'remote';
  /** The remote's name, or the clone's owner name (its main checkout, as the store names owners). */
  where: string;
}

export interface TargetInput {
  plan: string;
  /** The git remote the caller integrates through; null: the clone's own integration branch. */
  remote: string | null;
  /** The caller's main checkout; the store names it as it names owners. */
  worktree: string;
  /** Record the caller's target even when another one is recorded (a deliberate move). */
  move?: boolean | undefined;
  /** What the refusal's hint needs of the caller: its `command`, `run_flags`, where the remote came from. */
  details?: Record<string, unknown> | undefined;
}

export interface TargetResult {
  /** The target recorded before this call; null when none was. */
  recorded: IntegrationTarget | null;
  /** Whether this call recorded the caller's target (a first integration, or a move). */
  changed: boolean;
}

function wanted(input: TargetInput): IntegrationTarget {
  return input.remote ? { kind: 'remote', where: input.remote } : { kind: 'local', where: input.worktree };
}

/** The target a plans row records; null when none. */
export function targetOf(row: TargetRow | undefined): IntegrationTarget | null {
  if (!row?.integration_kind || row.integration_where === null) return null;
  return { kind: row.integration_kind, where: row.integration_where };
}

/**
 * The target a plans row records, as the clone `self` sees it. On a clone's own state.db (not `shared`) a
 * local target can only be that clone, wherever it is now: a clone moved on disk keeps its old path in the
 * row until its next integration rewrites it (recordIntegrationTarget), and readers name it as it is.
 */
export function targetSeenBy(
  row: TargetRow | undefined,
  here: { self: string; shared: boolean },
): IntegrationTarget | null {
  const t = targetOf(row);
  return t?.kind === 'local' && !here.shared ? { kind: 'local', where: here.self } : t;
}

/**
 * Whether two targets are one. A local target names its clone only where clones share a store (PostgreSQL,
 * owner names carry the host): an embedded state.db is its clone's own, so a clone that moved on disk is
 * still the same clone.
 */
function same(ctx: StateContext, a: IntegrationTarget, b: IntegrationTarget): boolean {
  if (a.kind !== b.kind) return false;
  return a.where === b.where || (a.kind === 'local' && !ctx.ownerPrefix);
}

function mismatch(plan_path: string, recorded: IntegrationTarget, want: IntegrationTarget, input: TargetInput) {
  return new TugError('IntegrationTargetMismatch', {
    plan_path,
    recorded_kind: recorded.kind,
    recorded_where: recorded.where,
    kind: want.kind,
    where: want.where,
    clone: input.worktree,
    ...input.details,
  });
}

/** The plan's recorded target (null: none, or a store older than the columns). Reads only. */
export async function integrationTarget(ctx: StateContext, input: { plan: string }): Promise<IntegrationTarget | null> {
  const store = ctx.store;
  if (!store || store.version < INTEGRATION_TARGET_SCHEMA_VERSION) return null;
  const ref = await resolvePlanRef(ctx, input.plan);
  return targetOf(await getIntegrationTarget(store, ref.plan_path));
}

/**
 * Refuse (IntegrationTargetMismatch) when the plan's recorded target is not the caller's, unless `move`.
 * Reads only: callers ask before they change anything, and record once they integrate.
 */
export async function checkIntegrationTarget(ctx: StateContext, input: TargetInput): Promise<TargetResult> {
  const recorded = await integrationTarget(ctx, input);
  const want = wanted(input);
  if (recorded && !input.move && !same(ctx, recorded, want)) {
    const ref = await resolvePlanRef(ctx, input.plan);
    throw mismatch(ref.plan_path, recorded, want, input);
  }
  return { recorded, changed: false };
}

/**
 * Record the caller's target when none is (or, with `move`, when another one is), with an event; refuse a
 * different recorded one, decided inside the transaction (two hosts starting at once: one wins).
 */
export async function recordIntegrationTarget(ctx: StateContext, input: TargetInput): Promise<TargetResult> {
  const ref = await resolvePlanRef(ctx, input.plan);
  await requirePlanRow(ctx, ref);
  const store = writeStore(ctx);
  const want = wanted(input);
  return store.write(async (c) => {
    const recorded = targetOf(await getIntegrationTarget(c, ref.plan_path));
    const one = recorded !== null && same(ctx, recorded, want);
    // The clone moved on disk (its own state.db): the record follows it, so show and doctor name it as it is.
    if (one && recorded.where === want.where) return { recorded, changed: false };
    if (recorded && !one && !input.move) throw mismatch(ref.plan_path, recorded, want, input);
    await setIntegrationTarget(c, ref.plan_path, want.kind, want.where);
    recordEvent(ctx, c, {
      at: ctx.clock.now(),
      plan_path: ref.plan_path,
      step_anchor: null,
      actor: 'admin', // a change of the plan, not of a worktree's claim (as `state init`); `where` names the clone
      attempt: null,
      details: { integration_target: want, ...(recorded ? { previous_target: recorded } : {}) },
    });
    return { recorded, changed: true };
  });
}
