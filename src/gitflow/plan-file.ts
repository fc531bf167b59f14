/**
 * Plan files as the git flows need them: the argument resolved to a repo-relative path (through the
 * one plan resolver), the committed blob on a branch, parsed and validated.
 */
import { lstatSync, readFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { TugError } from '../contract/errors.js';
import { shellArg } from '../util/shell-arg.js';
import type { ParsedPlan } from '../plan/types.js';
import type { GitRunner } from '../git/exec.js';
import { relativeToRoot, workTreeHolding, type Repo } from '../git/repo.js';
import { showBlob } from '../git/refs.js';

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
export async function committedPlan(g: GitRunner, repo: Repo, planPath: string, branch: string): Promise<Buffer> {
  // git commits a symlink as the link (its target's name), never the plan it points to.
  const main = join(repo.mainRoot, planPath);
  let link = false;
  try {
    link = lstatSync(main).isSymbolicLink();
  } catch {
    /* missing: reported below */
  }
  if (link)
    throw new TugError(
      'PlanNotCommitted',
      {
        plan_path: planPath,
        base_branch: branch,
        reason: `${planPath} is a symlink; git commits the link, not the plan it points to`,
      },
      {
        message: `${planPath} is a symlink: git commits the link, not the plan it points to`,
        hint: `replace the link with the plan itself (cp --remove-destination "$(readlink -f ${shellArg(planPath)})" ${shellArg(planPath)}), then git add ${shellArg(planPath)} && git commit`,
      },
    );
  const blob = await showBlob(g, repo.mainRoot, `refs/heads/${branch}`, planPath);
  if (!blob) throw await planNotCommitted(g, repo, planPath, branch, `${planPath} does not exist on ${branch}`);
  return blob;
}

/**
 * PlanNotCommitted. With the main checkout on another branch than the base, `git add && git commit` would
 * commit there and still not on the base: the hint says where the checkout is and names `--base` for it
 * (docs/git.md §3).
 */
export async function planNotCommitted(
  g: GitRunner,
  repo: Repo,
  planPath: string,
  base: string,
  reason: string,
): Promise<TugError> {
  const details = { plan_path: planPath, base_branch: base, reason };
  const head = await g.tryRun(['symbolic-ref', '--quiet', '--short', 'HEAD'], repo.mainRoot);
  const on = head.status === 0 ? head.stdout.trim() : '';
  if (!on || on === base) return new TugError('PlanNotCommitted', details);
  let copy: Buffer | null = null;
  try {
    copy = readFileSync(join(repo.mainRoot, planPath));
  } catch {
    /* no copy: not committed there either */
  }
  const there = await showBlob(g, repo.mainRoot, `refs/heads/${on}`, planPath);
  const elsewhere = `commit the plan on ${base} (git switch ${shellArg(base)})`;
  const hint =
    copy && there && copy.equals(there)
      ? `the main checkout is on ${on}, where the plan is committed: pass --base ${shellArg(on)}, or ${elsewhere}`
      : `git add ${shellArg(planPath)} && git commit (on ${on}, the main checkout's branch), then pass ` +
        `--base ${shellArg(on)}; or ${elsewhere}`;
  return new TugError('PlanNotCommitted', { ...details, checkout_branch: on }, { hint });
}

/**
 * Why the base branch `base` does not exist: in a repository with no commits yet there is no branch at all,
 * and the cause is that nothing, the plan included, is committed (PlanNotCommitted, hint: commit it);
 * otherwise the branch is named wrong (InvalidArgument, hint: --base).
 */
export async function missingBase(g: GitRunner, repo: Repo, planPath: string, base: string): Promise<TugError> {
  const heads = await g.tryRun(['for-each-ref', '--count=1', '--format=%(refname)', 'refs/heads/'], repo.mainRoot);
  if (heads.status === 0 && heads.stdout.trim() === '')
    return new TugError(
      'PlanNotCommitted',
      { plan_path: planPath, base_branch: base, reason: 'the repository has no commits yet', no_commits: true },
      { message: `the repository has no commits yet: commit the plan first (${planPath} is not committed on ${base})` },
    );
  return new TugError(
    'InvalidArgument',
    { reason: `base branch ${base} does not exist`, base_branch: base },
    { hint: 'pass --base <branch>, or set run.base_branch in .tugtool/config.toml' },
  );
}

/**
 * The plan argument as a repo-relative path, read from the work tree `root` (docs/git.md §1), through the
 * one plan resolver. `knownPlanPaths` (plans with rows in state.db) name a plan even when its file is gone.
 */
export async function resolvePlanPath(
  repo: Repo,
  arg: string,
  root: string = repo.worktreeRoot,
  knownPlanPaths: string[] = [],
): Promise<string> {
  const { resolvePlanArg } = await import('../plan/resolve.js');
  return resolvePlanArg(arg, {
    repoRoot: repo.mainRoot,
    workTree: root,
    cwd: repo.cwd,
    knownPlanPaths,
    workTreeHolding: (abs) => workTreeHolding(repo, abs),
  }).plan_path;
}

/**
 * The plan argument resolved against the main checkout (`worktree create`, docs/git.md §3: the plan must be
 * committed on the base branch and equal to the main checkout's copy). Run from a linked worktree, the
 * current directory and an absolute path inside that worktree stand for the same place in the main
 * checkout, so `.tugtool/tugplan-x.md` never names the worktree's own copy as a second candidate.
 */
export async function resolvePlanInMain(repo: Repo, arg: string, knownPlanPaths: string[] = []): Promise<string> {
  const onMain = (p: string): string => {
    if (!repo.isLinkedWorktree) return p;
    const rel = relativeToRoot(repo.worktreeRoot, p);
    return rel === null ? p : join(repo.mainRoot, ...rel.split('/').filter(Boolean));
  };
  const { resolvePlanArg } = await import('../plan/resolve.js');
  const planArg = isAbsolute(arg) ? onMain(resolve(arg)) : arg;
  return resolvePlanArg(planArg, {
    repoRoot: repo.mainRoot,
    workTree: repo.mainRoot,
    cwd: onMain(repo.cwd),
    knownPlanPaths,
    workTreeHolding: (abs) => workTreeHolding(repo, abs),
  }).plan_path;
}
