/**
 * `tugcode validate [plan]`: parse and validate one plan, or every plan under `.tugtool/`.
 */
import { readFileSync } from 'node:fs';
import type { Repo } from '../git/repo.js';
import type { Diagnostic } from '../plan/types.js';
import { parsePlan } from '../plan/parse.js';
import { validatePlan } from '../plan/validate.js';
import { listPlans, resolvePlanArg } from '../plan/resolve.js';
import { TugError } from '../contract/errors.js';
import { join } from 'node:path';

export type Level = 'lenient' | 'normal' | 'strict';

export interface PlanReport {
  plan_path: string;
  valid: boolean;
  steps: number;
  substeps: number;
  implicit_sequential: boolean;
  error_count: number;
  warning_count: number;
  diagnostics: Diagnostic[];
}

export interface ValidateResult {
  valid: boolean;
  level: Level;
  plans: PlanReport[];
}

export function validateOne(planPath: string, bytes: Uint8Array, level: Level): PlanReport {
  const parsed = parsePlan(bytes);
  const { valid, diagnostics } = validatePlan(parsed, level);
  const substeps = parsed.steps.filter((s) => s.parent_anchor !== null).length;
  return {
    plan_path: planPath,
    valid,
    steps: parsed.steps.length - substeps,
    substeps,
    implicit_sequential: parsed.implicit_sequential,
    error_count: diagnostics.filter((d) => d.severity === 'error').length,
    warning_count: diagnostics.filter((d) => d.severity === 'warning').length,
    diagnostics,
  };
}

/** Validate; throws PlanInvalid (with every report in details) when any plan is invalid. */
export function validatePlans(repo: Repo, planArg: string | undefined, level: Level): ValidateResult {
  const paths = planArg
    ? [resolvePlanArg(planArg, { repoRoot: repo.mainRoot, workTree: repo.worktreeRoot, cwd: repo.cwd }).plan_path]
    : listPlans(repo.worktreeRoot);
  const plans = paths.map((p) => {
    let bytes: Uint8Array;
    try {
      bytes = readFileSync(join(repo.worktreeRoot, p));
    } catch (e) {
      throw new TugError('PlanNotFound', { plan: p, reason: (e as Error).message });
    }
    return validateOne(p, bytes, level);
  });
  const result = { valid: plans.every((p) => p.valid), level, plans };
  if (!result.valid) {
    const bad = plans.filter((p) => !p.valid);
    const diagnostics = bad.flatMap((p) => p.diagnostics.filter((d) => d.severity === 'error' || level === 'strict'));
    throw new TugError(
      'PlanInvalid',
      { plan_path: bad.map((p) => p.plan_path).join(', '), diagnostics, plans },
      { text: renderValidate(result) },
    );
  }
  return result;
}

export function renderValidate(r: { plans: PlanReport[]; level: Level }): string {
  if (r.plans.length === 0) return 'no plans found under .tugtool/ (tugcode init writes a skeleton)';
  const lines: string[] = [];
  for (const p of r.plans) {
    const shape = `${p.steps} steps${p.substeps ? `, ${p.substeps} substeps` : ''}`;
    const counts = `${p.error_count} errors, ${p.warning_count} warnings`;
    lines.push(
      `${p.valid ? 'ok' : 'INVALID'}  ${p.plan_path}  (${shape}; ${counts}${p.implicit_sequential ? '; implicit sequential order' : ''})`,
    );
    for (const d of p.diagnostics)
      lines.push(`  ${p.plan_path}:${d.line ?? '-'}: ${d.severity} ${d.code}: ${d.message}`);
  }
  return lines.join('\n');
}
