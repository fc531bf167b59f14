/**
 * `state init <plan> [--force [--release-claims]]` (docs/state.md §4). Reads, parses and validates the plan
 * before touching anything (a refused init creates no file), then writes everything in one transaction and
 * makes sure `.gitignore` of the main root lists state.db and its WAL files.
 */
import { readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { TugError } from '../contract/errors.js';
import type { Diagnostic, ParsedPlan } from '../plan/types.js';
import { STATE_DB_FILES } from '../contract/layout.js';
import { ensureGitignoreLines } from '../util/gitignore.js';
import { sha256Hex } from '../util/hash.js';
import { recordEvent } from './record.js';
import { ensureWriter, type StateContext } from './context.js';
import { parseSource, refreshProse, structureDiff, warnProseChanged } from './drift.js';
import { insertFresh, reinitialize, type InitCounts } from './init-write.js';
import { resolvePlanRef, type PlanRef } from './plan-ref.js';
import { getPlan } from './queries/plans.js';

export interface InitInput {
  plan: string;
  force?: boolean | undefined;
  release_claims?: boolean | undefined;
  /**
   * The plan's bytes when they do not come from the work tree (e.g. the blob committed on the base branch);
   * `plan` is then the repo-relative plan path.
   */
  source?: Uint8Array | undefined;
}

export interface InitResult extends InitCounts {
  plan_path: string;
  plan_hash: string;
  structure_hash: string;
  already_initialized: boolean;
  reinitialized: boolean;
  implicit_sequential: boolean;
  /** Lines this call added to the main root's .gitignore (not part of the JSON contract). */
  gitignore_added: string[];
}

export async function init(ctx: StateContext, input: InitInput): Promise<InitResult> {
  const ref = input.source ? sourceRef(ctx, input.plan) : await resolvePlanRef(ctx, input.plan);
  if (!ref.exists)
    throw new TugError('PlanNotFound', {
      plan: input.plan,
      plan_path: ref.plan_path,
      reason: `no file at ${ref.abs_path}`,
    });
  const bytes = Buffer.from(input.source ?? readFileSync(ref.abs_path));
  const existing = ctx.store ? await getPlan(ctx.store, ref.plan_path) : undefined;
  const hash = sha256Hex(bytes);
  const unchanged = existing && existing.plan_hash === hash && existing.status !== 'archived' && !input.force;
  let parsed: ParsedPlan | null = null;
  if (!unchanged) {
    parsed = await parseSource(bytes);
    const { validatePlanFile } = await import('../plan/validate.js');
    const v = validatePlanFile(parsed, ref.plan_path, ctx.config.validate?.level ?? 'normal');
    const errors = v.diagnostics.filter((d) => d.severity === 'error');
    if (errors.length > 0) throw new TugError('PlanInvalid', { plan_path: ref.plan_path, diagnostics: errors });
    // Warnings never stop it (docs/state.md §4), but they are reported. The git flows (`source` given) validate
    // the committed plan themselves, at their own level, and report its findings their own way.
    if (!input.source) warnDiagnostics(ctx, ref.plan_path, v.diagnostics);
  }
  const store = await ensureWriter(ctx);
  const result = await store.write(async (c) => {
    const now = ctx.clock.now();
    const row = await getPlan(c, ref.plan_path);
    const base = {
      plan_path: ref.plan_path,
      steps_created: 0,
      checklist_items_created: 0,
      refactors_created: 0,
      steps_removed: 0,
      gitignore_added: [] as string[],
    };
    if (row && row.plan_hash === hash && row.status !== 'archived' && !input.force) {
      return {
        ...base,
        plan_hash: row.plan_hash,
        structure_hash: row.structure_hash,
        already_initialized: true,
        reinitialized: false,
        implicit_sequential: row.implicit_sequential === 1,
      };
    }
    if (!parsed) throw new TugError('InternalError', { reason: 'plan changed during state init; retry' });
    const bytesHash = parsed.plan_hash;
    const out = {
      ...base,
      plan_hash: bytesHash,
      structure_hash: parsed.structure_hash,
      implicit_sequential: parsed.implicit_sequential,
    };
    const actor = 'admin';
    if (!row) {
      const counts = await insertFresh(c, ref.plan_path, parsed, bytes, now);
      recordEvent(ctx, c, {
        at: now,
        plan_path: ref.plan_path,
        step_anchor: null,
        actor,
        attempt: null,
        details: { ...counts, plan_hash: bytesHash },
      });
      return { ...out, ...counts, already_initialized: false, reinitialized: false };
    }
    if (row.status !== 'archived' && !input.force) {
      if (parsed.structure_hash !== row.structure_hash) {
        const diff = await structureDiff(c, ref.plan_path, parsed);
        throw new TugError('PlanDrift', { plan_path: ref.plan_path, summary: diff.summary, ...diff.details });
      }
      await refreshProse(c, ref.plan_path, parsed, bytes, now);
      warnProseChanged(ctx, ref.plan_path);
      recordEvent(ctx, c, {
        at: now,
        plan_path: ref.plan_path,
        step_anchor: null,
        actor,
        attempt: null,
        details: { prose_refreshed: true, plan_hash: bytesHash },
      });
      return { ...out, already_initialized: true, reinitialized: false };
    }
    if (row.status === 'archived') {
      recordEvent(ctx, c, {
        command: 'plan_reactivated',
        at: now,
        plan_path: ref.plan_path,
        step_anchor: null,
        actor,
        attempt: null,
        details: {},
      });
    }
    const report = await reinitialize(c, ref.plan_path, parsed, bytes, now, Boolean(input.release_claims));
    recordEvent(ctx, c, {
      at: now,
      plan_path: ref.plan_path,
      step_anchor: null,
      actor,
      attempt: null,
      details: { reinitialized: true, release_claims: Boolean(input.release_claims), plan_hash: bytesHash, ...report },
    });
    const {
      kept_completed: _a,
      kept_claims: _b,
      kept_decisions: _e,
      reset_steps: _c,
      removed_steps: _d,
      ...counts
    } = report;
    return {
      ...out,
      ...counts,
      steps_removed: report.removed_steps.length,
      already_initialized: false,
      reinitialized: true,
    };
  });
  result.gitignore_added = ensureGitignoreLines(join(ctx.repoRoot, '.gitignore'), STATE_DB_FILES);
  return result;
}

/** The validator's warnings as the call's warnings: `W001: <plan>:<line>: <message>`, line and anchor in details. */
function warnDiagnostics(ctx: StateContext, planPath: string, diagnostics: readonly Diagnostic[]): void {
  for (const d of diagnostics) {
    if (d.severity !== 'warning') continue;
    const details: Record<string, unknown> = { plan_path: planPath };
    if (d.line !== undefined) details.line = d.line;
    if (d.anchor !== undefined) details.anchor = d.anchor;
    ctx.warnings.plan(d.code, `${planPath}${d.line !== undefined ? `:${d.line}` : ''}: ${d.message}`, details);
  }
}

function sourceRef(ctx: StateContext, plan: string): PlanRef {
  const p = plan.replace(/^\.\//, '');
  if (p === '' || isAbsolute(p) || p.includes('\\') || p.split('/').some((x) => x === '..' || x === '')) {
    throw new TugError('InvalidArgument', {
      reason: `with source bytes the plan must be a repo-relative path, got ${JSON.stringify(plan)}`,
    });
  }
  return { plan_path: p, abs_path: join(ctx.workTree, ...p.split('/')), exists: true };
}
