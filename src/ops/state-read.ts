/**
 * The read-only `state` operations (docs/state.md §4–§5): they open state.db read-only, never create or
 * migrate it, and without a DB report nothing (a plan argument is still resolved).
 */
import { TugError } from '../contract/errors.js';
import type { Call, OpsContext } from './context.js';
import { stateOf } from './support.js';
import type { ParsedPlan } from '../plan/types.js';

export async function stateShow(ctx: OpsContext, input: { plan?: string; items?: string; step?: string }, call: Call) {
  const items = input.items ?? 'active';
  if (items !== 'active' && items !== 'all' && items !== 'none') {
    throw new TugError('InvalidArgument', {
      reason: `items must be active, all or none, got ${JSON.stringify(items)}`,
      argument: 'items',
    });
  }
  const { store, sc, repo } = await stateOf(ctx, call);
  const shown = await store.show(sc, { plan: input.plan, items, step: input.step });
  // The run holding each plan's lock, as status reports it (docs/state.md §4): a dead driver's steps still
  // read as claimed. The state engine knows no run lock, so it is added here; one small file per plan.
  const { lastRunLine, runDriverLine } = await import('../gitflow/run-driver.js');
  const { config } = await ctx.load(call);
  const plans = shown.plans.map((p) => ({
    ...p,
    run_driver: runDriverLine(repo.mainRoot, p.plan_path, p.steps, config.run, p.last_run?.run_flags),
    last_run: lastRunLine(p.plan_path, p.last_run, config.run),
  }));
  // Which backend answered (docs/state.md §8): never the PostgreSQL password.
  return { ...shown, plans, backend: { kind: store.backend, location: store.location } };
}

export async function stateReady(ctx: OpsContext, input: { plan: string }, call: Call) {
  const { store, sc } = await stateOf(ctx, call);
  return store.ready(sc, { plan: input.plan });
}

/** The hashes `state init` stored of a plan (docs/state.md §3.10): the dry run's "would the run re-initialise?". */
export async function stateStoredPlan(ctx: OpsContext, input: { plan: string }, call: Call) {
  const { store, sc } = await stateOf(ctx, call);
  return store.storedPlan(sc, { plan: input.plan });
}

/** The plan's usage totals (docs/run.md §7.2): what the dry run compares a budget with, as the run does. */
export async function stateUsageTotals(ctx: OpsContext, input: { plan: string }, call: Call) {
  const { store, sc } = await stateOf(ctx, call);
  return store.usageTotals(sc, input);
}

export async function stateReinitKeeps(ctx: OpsContext, input: { plan: string; parsed: ParsedPlan }, call: Call) {
  const { store, sc } = await stateOf(ctx, call);
  return store.reinitKeeps(sc, input);
}

export async function stateLog(
  ctx: OpsContext,
  input: { plan?: string; step?: string; limit?: number; after_id?: number; since?: string; count_omitted?: boolean },
  call: Call,
) {
  let since: string | undefined;
  if (input.since !== undefined) {
    const { formatTimestamp, parseInstant } = await import('../clock.js');
    const ms = parseInstant(input.since);
    if (ms === null)
      throw new TugError('InvalidArgument', {
        reason: `since must be an ISO 8601 instant, got ${JSON.stringify(input.since)}`,
        argument: 'since',
      });
    since = formatTimestamp(ms);
  }
  const { store, sc } = await stateOf(ctx, call);
  return store.log(sc, { ...input, since });
}

export async function stateList(ctx: OpsContext, _input: Record<string, never>, call: Call) {
  const { store, sc } = await stateOf(ctx, call);
  return store.list(sc);
}

export async function stateGraph(ctx: OpsContext, input: { plan: string; format?: string }, call: Call) {
  const format = input.format ?? 'mermaid';
  if (format !== 'mermaid' && format !== 'dot')
    throw new TugError('InvalidArgument', {
      reason: `format must be mermaid or dot, got ${JSON.stringify(format)}`,
      argument: 'format',
    });
  const { store, sc } = await stateOf(ctx, call);
  return store.graph(sc, { plan: input.plan, format });
}

/**
 * A store written by a newer tugcode, refused as its first writer would (SchemaTooNew; readers read it
 * best-effort): the run's dry run says what the real run does (docs/run.md §1.10). No store, no refusal.
 */
export async function stateRefuseNewerSchema(ctx: OpsContext, call: Call): Promise<void> {
  const { store, sc } = await stateOf(ctx, call);
  const found = await store.withContext(sc, 'read', (c) =>
    c.store ? { version: c.store.version, at: c.dbPath } : null,
  );
  const { LATEST_SCHEMA_VERSION } = await import('../state/migrate.js');
  if (found && found.version > LATEST_SCHEMA_VERSION)
    throw new TugError('SchemaTooNew', { db_path: found.at, found: found.version, supported: LATEST_SCHEMA_VERSION });
}
