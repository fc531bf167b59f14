/**
 * `state export <plan>` and `state import` (docs/state.md §8): one plan's rows and events as a versioned JSON
 * document, and back into either backend in one transaction. This is how a plan started on one machine
 * moves to PostgreSQL (or back). A document from SQLite names owners by their plain worktree paths: imported
 * into PostgreSQL they become this machine's (`<host>:<path>`), in the rows and in the events' actors and
 * details, so a claim held here is still its holder's.
 * One from PostgreSQL keeps its `<host>:<path>` owners wherever it goes.
 */
import { isAbsolute, join } from 'node:path';
import { TugError } from '../contract/errors.js';
import type { StateExportDocument } from '../contract/schemas/state-export.js';
import type { UsageRole } from '../contract/usage.js';
import { STATE_DB_FILES } from '../contract/layout.js';
import { ensureGitignoreLines } from '../util/gitignore.js';
import { ensureWriter, type StateContext } from './context.js';
import { parseExportDocument } from './export-check.js';
import { resolvePlanRef, requirePlanRow } from './plan-ref.js';
import { insertPlanRows, planFootprint, readPlanRows, type PlanRows } from './queries/export.js';
import { purgePlan, recountPlan } from './queries/plans.js';
import { recomputeUnmet } from './queries/deps.js';
import { recordEvent } from './record.js';

export interface ExportInput {
  plan: string;
}

export interface ExportCounts {
  steps: number;
  checklist_items: number;
  step_artifacts: number;
  step_refactors: number;
  step_usage: number;
  events: number;
}

export function countsOf(doc: StateExportDocument): ExportCounts {
  return {
    steps: doc.steps.length,
    checklist_items: doc.checklist_items.length,
    step_artifacts: doc.step_artifacts.length,
    step_refactors: doc.step_refactors.length,
    step_usage: doc.step_usage.length,
    events: doc.events.length,
  };
}

/** The plan's rows and events, read in one consistent snapshot. */
export async function exportPlan(ctx: StateContext, input: ExportInput): Promise<StateExportDocument> {
  const ref = await resolvePlanRef(ctx, input.plan);
  await requirePlanRow(ctx, ref);
  const store = ctx.store!;
  const { hasLedger } = await import('./usage.js');
  const rows = await store.read((c) => readPlanRows(c, ref.plan_path, hasLedger(store.version)));
  if (!rows) throw new TugError('PlanNotInitialized', { plan_path: ref.plan_path });
  const { EXPORT_FORMAT, EXPORT_VERSION } = await import('../contract/schemas/state-export.js');
  // The last run's flags stay with this clone (its absolute program paths, its `-C DIR`): not exported.
  const {
    plan_path: _p,
    plan_source,
    implicit_sequential,
    last_run_flags: _f,
    last_run_ended_at: _e,
    ...plan
  } = rows.plan;
  const strip = <T extends { plan_path: unknown; id?: unknown }>({ plan_path: _x, id: _i, ...rest }: T) => rest;
  return {
    format: EXPORT_FORMAT,
    version: EXPORT_VERSION,
    schema_version: store.version,
    plan_path: ref.plan_path,
    exported_at: ctx.clock.now(),
    source: { backend: store.dialect, location: ctx.dbPath },
    plan: {
      ...plan,
      plan_source: Buffer.from(plan_source).toString('base64'),
      implicit_sequential: Number(implicit_sequential) === 1,
    },
    steps: rows.steps.map(({ plan_path: _x, ...s }) => s),
    step_deps: rows.step_deps,
    step_lifted_deps: rows.step_lifted_deps,
    checklist_items: rows.checklist_items.map(strip),
    step_artifacts: rows.step_artifacts.map(strip),
    step_refactors: rows.step_refactors.map(({ plan_path: _x, ...r }) => r),
    step_usage: rows.step_usage.map(({ plan_path: _x, id: _i, role, ...u }) => ({
      ...u,
      role: role as UsageRole,
    })),
    events: rows.events.map(({ plan_path: _x, details_json, ...e }) => ({
      ...e,
      id: Number(e.id),
      details: JSON.parse(details_json) as Record<string, unknown>,
    })),
  };
}

export interface ImportInput {
  /** The document: its JSON text (or the `state export --json` envelope), or a document already validated. */
  document: string | StateExportDocument;
  /** Delete the plan's rows and events here first, instead of refusing. */
  replace?: boolean | undefined;
}

export interface ImportResult {
  plan_path: string;
  replaced: boolean;
  imported: ExportCounts;
  source: StateExportDocument['source'];
}

/**
 * How the importing store names the document's owners: plain worktree paths from SQLite get this machine's
 * `<host>:` on PostgreSQL (`admin` and other non-paths stay); everything else is kept.
 */
function ownerMap(ctx: StateContext, doc: StateExportDocument): (owner: string) => string {
  const prefix = ctx.ownerPrefix;
  if (!prefix || doc.source.backend !== 'sqlite') return (o) => o;
  return (o) => (isAbsolute(o) && !o.startsWith(prefix) ? prefix + o : o);
}

/** Keys of event details that name an owner (a takeover's, a release's or a reset's previous owner). */
const OWNER_KEYS = new Set(['previous_owner', 'claimed_by']);

/** The details with their owners renamed by `owner`, at any depth (a claim's `failed_steps` carry them too). */
function detailsOwners(details: unknown, owner: (o: string) => string): unknown {
  if (Array.isArray(details)) return details.map((d) => detailsOwners(d, owner));
  if (details === null || typeof details !== 'object') return details;
  return Object.fromEntries(
    Object.entries(details).map(([k, v]) => [
      k,
      OWNER_KEYS.has(k) && typeof v === 'string' ? owner(v) : detailsOwners(v, owner),
    ]),
  );
}

function rowsOf(doc: StateExportDocument, owner: (o: string) => string): PlanRows {
  const plan_path = doc.plan_path;
  const opt = (o: string | null) => (o === null ? null : owner(o));
  // Parents before children (the self-referencing foreign key), in declaration order.
  const steps = [...doc.steps].sort((a, b) => a.depth - b.depth || a.step_index - b.step_index);
  return {
    plan: {
      ...doc.plan,
      plan_path,
      plan_source: Buffer.from(doc.plan.plan_source, 'base64'),
      implicit_sequential: doc.plan.implicit_sequential ? 1 : 0,
      // A clone named as the target is an owner name: it moves with the machine, as claims do.
      integration_kind: doc.plan.integration_kind ?? null,
      integration_where:
        doc.plan.integration_kind === 'local' && doc.plan.integration_where
          ? owner(doc.plan.integration_where)
          : (doc.plan.integration_where ?? null),
    },
    steps: steps.map((s) => ({
      ...s,
      plan_path,
      claimed_by: opt(s.claimed_by),
      previous_owner: opt(s.previous_owner),
      review_commit: s.review_commit ?? null,
      human_decision: s.human_decision ?? null,
      human_notes: s.human_notes ?? null,
      touches: s.touches ?? null,
    })),
    step_deps: doc.step_deps,
    step_lifted_deps: doc.step_lifted_deps,
    checklist_items: doc.checklist_items.map((x) => ({ ...x, plan_path, id: 0 })),
    step_artifacts: doc.step_artifacts.map((x) => ({ ...x, plan_path, id: 0 })),
    step_refactors: doc.step_refactors.map((x) => ({ ...x, plan_path })),
    step_usage: doc.step_usage.map((x) => ({ ...x, plan_path, id: 0 })),
    events: [...doc.events]
      .sort((a, b) => a.id - b.id)
      .map(({ details, ...e }) => ({
        ...e,
        plan_path,
        actor: owner(e.actor),
        details_json: JSON.stringify(detailsOwners(details, owner)),
      })),
  };
}

/**
 * Loads a document in one transaction. A plan that already has rows here is refused (PlanExists, nothing
 * changed) unless `replace`: then its rows and events are deleted first, in the same transaction.
 */
export async function importPlan(ctx: StateContext, input: ImportInput): Promise<ImportResult> {
  const doc = await parseExportDocument(input.document);
  const plan_path = doc.plan_path;
  const replace = Boolean(input.replace);
  // Refuse before creating anything: an existing plan on an existing store.
  if (ctx.store && !replace) await refuseExisting(ctx.store, plan_path);
  const store = await ensureWriter(ctx);
  const result = await store.write(async (c) => {
    const here = await planFootprint(c, plan_path);
    const replaced = here.plan || here.steps > 0 || here.events > 0;
    if (replaced && !replace) throw planExists(plan_path, here);
    if (replaced) await purgePlan(c, plan_path);
    await insertPlanRows(c, rowsOf(doc, ownerMap(ctx, doc)));
    await recomputeUnmet(c, plan_path);
    await recountPlan(c, plan_path);
    const imported = countsOf(doc);
    recordEvent(ctx, c, {
      at: ctx.clock.now(),
      plan_path,
      step_anchor: null,
      actor: 'admin',
      attempt: null,
      details: { imported, replaced, source: doc.source, exported_at: doc.exported_at },
    });
    return { plan_path, replaced, imported, source: doc.source };
  });
  if (store.dialect === 'sqlite') ensureGitignoreLines(join(ctx.repoRoot, '.gitignore'), STATE_DB_FILES);
  return result;
}

async function refuseExisting(c: Parameters<typeof planFootprint>[0], plan_path: string): Promise<void> {
  const here = await planFootprint(c, plan_path);
  if (here.plan || here.steps > 0 || here.events > 0) throw planExists(plan_path, here);
}

function planExists(plan_path: string, here: { steps: number; events: number }): TugError {
  return new TugError('PlanExists', { plan_path, steps: here.steps, events: here.events });
}
