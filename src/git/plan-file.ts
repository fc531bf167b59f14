/**
 * Plan files as the git flows need them: the argument resolved to a repo-relative path (through the
 * one plan resolver), the committed blob on a branch, parsed and validated.
 */
import { TugError } from '../contract/errors.js';
import type { ParsedPlan } from '../plan/types.js';
import type { Repo } from './repo.js';
import { showBlob } from './refs.js';

export async function parseAndValidate(
  planPath: string,
  bytes: Uint8Array,
  level: 'lenient' | 'normal' | 'strict' = 'lenient',
): Promise<ParsedPlan> {
  const { parsePlan } = await import('../plan/parse.js');
  const { validatePlan } = await import('../plan/validate.js');
  const plan = parsePlan(bytes);
  const v = validatePlan(plan, level);
  const errors = v.diagnostics.filter((d) => d.severity === 'error');
  if (errors.length > 0) throw new TugError('PlanInvalid', { plan_path: planPath, diagnostics: errors });
  return plan;
}

/** The plan's bytes on `branch`, or PlanNotCommitted. */
export function committedPlan(repo: Repo, planPath: string, branch: string): Buffer {
  const blob = showBlob(repo.mainRoot, `refs/heads/${branch}`, planPath);
  if (!blob)
    throw new TugError('PlanNotCommitted', {
      plan_path: planPath,
      base_branch: branch,
      reason: `${planPath} does not exist on ${branch}`,
    });
  return blob;
}

/**
 * The plan argument as a repo-relative path, read from the work tree `root` (04-git.md §1), through the
 * one plan resolver. `knownPlanPaths` (plans with rows in state.db) name a plan even when its file is gone.
 */
export async function resolvePlanPath(
  repo: Repo,
  arg: string,
  root: string = repo.worktreeRoot,
  knownPlanPaths: string[] = [],
): Promise<string> {
  const { resolvePlanArg } = await import('../plan/resolve.js');
  return resolvePlanArg(arg, { repoRoot: repo.mainRoot, workTree: root, cwd: repo.cwd, knownPlanPaths }).plan_path;
}
