/**
 * `tugcode validate [plan]`: parse and validate one plan, or every plan under `.tugtool/`.
 */
import { readFileSync } from 'node:fs';
import { workTreeHolding, type Repo } from '../git/repo.js';
import type { Diagnostic } from '../plan/types.js';
import { parsePlan } from '../plan/parse.js';
import { validatePlanFile } from '../plan/validate.js';
import { listPlanLinks, listPlans, resolvePlanArg } from '../plan/resolve.js';
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

/** One plan's report: the validator's findings, and E004 first when the file is not named by a valid slug. */
function validateOne(planPath: string, bytes: Uint8Array, level: Level): PlanReport {
  const parsed = parsePlan(bytes);
  const { valid, diagnostics } = validatePlanFile(parsed, planPath, level);
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

/** A plan file that cannot be read as a plan (E003): a report with that one error. */
function unreadable(planPath: string, message: string): PlanReport {
  return {
    plan_path: planPath,
    valid: false,
    steps: 0,
    substeps: 0,
    implicit_sequential: false,
    error_count: 1,
    warning_count: 0,
    diagnostics: [{ code: 'E003', severity: 'error', message }],
  };
}

/**
 * Validate; throws PlanInvalid (with every report in details) when any plan is invalid. Without a plan
 * argument every plan under `.tugtool/` is validated, symlinked ones too: a symlink that resolves to a plan
 * inside the repository is validated like a file, one that leads outside it (or nowhere) is an E003 error
 * naming the file, as every command would refuse it.
 */
export function validatePlans(repo: Repo, planArg: string | undefined, level: Level): ValidateResult {
  const opts = {
    repoRoot: repo.mainRoot,
    workTree: repo.worktreeRoot,
    cwd: repo.cwd,
    workTreeHolding: (abs: string) => workTreeHolding(repo, abs),
  };
  // An empty argument (an unset `$PLAN`) is refused by the resolver, as by every other command: it never
  // means "every plan" (docs/output.md §5).
  const every = planArg === undefined;
  const paths = every ? listPlans(repo.worktreeRoot) : [resolvePlanArg(planArg, opts).plan_path];
  const links = new Map<string, string | null>();
  if (every) {
    for (const link of listPlanLinks(repo.worktreeRoot)) {
      try {
        resolvePlanArg(link, opts);
        links.set(link, null);
      } catch (e) {
        if (!(e instanceof TugError)) throw e;
        links.set(link, `${link} is a symlink tugcode cannot read as a plan: ${e.message}`);
      }
      paths.push(link);
    }
    paths.sort();
  }
  const plans = paths.map((p) => {
    const problem = links.get(p);
    if (problem) return unreadable(p, problem);
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
    // The first invalid plan and what made it invalid at this level (errors; warnings too under strict, never
    // info); the other invalid plans by path, and every report in `plans`.
    const bad = plans.filter((p) => !p.valid);
    const first = bad[0]!;
    const diagnostics = first.diagnostics.filter(
      (d) => d.severity === 'error' || (level === 'strict' && d.severity === 'warning'),
    );
    const details: Record<string, unknown> = { plan_path: first.plan_path, diagnostics, plans };
    if (every) details.invalid_plans = bad.map((p) => p.plan_path);
    // Every plan validated: the catalogue's hint narrows to the first invalid one. One plan named: that hint
    // would be this very command; where to start fixing instead, when a line says (else none).
    const at = diagnostics.find((d) => d.line !== undefined);
    const hint = at ? `fix line ${at.line} of ${first.plan_path} first (${at.code})` : '';
    throw new TugError('PlanInvalid', details, { text: renderValidate(result), ...(planArg ? { hint } : {}) });
  }
  return result;
}

export function renderValidate(r: { plans: PlanReport[]; level: Level }): string {
  if (r.plans.length === 0) return 'no plans found under .tugtool/ (tugcode init writes a skeleton)';
  const lines: string[] = [];
  for (const p of r.plans) {
    const shape = `${n(p.steps, 'step')}${p.substeps ? `, ${n(p.substeps, 'substep')}` : ''}`;
    const counts = `${n(p.error_count, 'error')}, ${n(p.warning_count, 'warning')}`;
    lines.push(
      `${p.valid ? 'ok' : 'INVALID'}  ${p.plan_path}  (${shape}; ${counts}${p.implicit_sequential ? '; implicit sequential order' : ''})`,
    );
    for (const d of p.diagnostics)
      lines.push(`  ${p.plan_path}:${d.line ?? '-'}: ${d.severity} ${d.code}: ${d.message}`);
  }
  return lines.join('\n');
}

/** `1 step`, `2 steps`, `0 errors`. */
const n = (count: number, noun: string): string => `${count} ${noun}${count === 1 ? '' : 's'}`;
