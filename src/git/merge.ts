/**
 * `tugcode merge <plan>` (04-git.md §5): brings a finished plan back without losing a commit (R31, R32).
 * Every check runs before anything is written; the merge itself is computed with `git merge-tree`
 * (conflicts are detected without touching a work tree or writing an object), committed with
 * `commit-tree` and published with a compare-and-swap `update-ref`, so a refused or conflicting merge
 * leaves the repository exactly as it was. Only fully merged worktrees and branches of this plan are
 * removed afterwards.
 */
import { TugError } from '../contract/errors.js';
import { LOG_DIR, LOG_INDEX, renderIndex } from './implementation-log.js';
import { getBranchPlan, listBranchPlans } from './branch-config.js';
import { git, gitTry } from './exec.js';
import type { FlowCtx } from './flow-context.js';
import { withIntegrationLock } from './integrate.js';
import { checkMerge, fileAt, mergeTree, readTreeFiles, treeWithFile } from './merge-tree.js';
import { integrationBranch, isCreateBranch, slugOfPlan } from './naming.js';
import { resolvePlanPath } from './plan-file.js';
import { branchExists, branchTip, isAncestor, requireGitVersion, statusEntries } from './refs.js';
import { listWorktrees } from './repo.js';
import { ALL_BUT_RUNTIME } from './runtime-files.js';
import * as state from './state-bridge.js';
import { listTrailerCommits } from './log.js';
import type { TrailerCommit } from './trailers.js';

export interface MergeInput {
  plan: string;
  into?: string | undefined;
  branch?: string | undefined;
  dryRun?: boolean | undefined;
  force?: boolean | undefined;
}

export interface MergeData {
  merged: boolean;
  merge_commit: string | null;
  branch: string;
  into: string;
  dry_run: boolean;
  already_merged: boolean;
  steps_included: string[];
  step_commits: Record<string, string | null>;
  worktrees_removed: string[];
  branches_deleted: string[];
  kept: { branch: string; worktree_path: string | null; reason: string }[];
}

/** The branch that carries the plan: its integration branch, else its one worktree branch. */
function sourceBranch(ctx: FlowCtx, planPath: string, slug: string, explicit?: string): string {
  const root = ctx.repo.mainRoot;
  if (explicit) {
    if (!branchExists(root, explicit))
      throw new TugError('InvalidArgument', { reason: `branch ${explicit} does not exist`, branch: explicit });
    return explicit;
  }
  const integ = integrationBranch(slug);
  if (branchExists(root, integ)) return integ;
  const own = listBranchPlans(root).filter(
    (b) => b.plan_path === planPath && isCreateBranch(b.branch, slug) && branchExists(root, b.branch),
  );
  if (own.length === 1) return own[0]!.branch;
  throw new TugError('InvalidArgument', {
    reason:
      own.length === 0
        ? `${planPath} has no integration branch ${integ} and no worktree branch to merge`
        : `${planPath} has several worktree branches; pass --branch`,
    plan_path: planPath,
    candidates: own.map((b) => b.branch),
  });
}

function mergeMessage(
  planPath: string,
  slug: string,
  branch: string,
  steps: Included[],
  titles: Map<string, string>,
): string {
  const lines = [`Merge ${branch}: ${slug}`, '', `Plan: ${planPath}`, '', 'Steps:'];
  for (const s of steps)
    lines.push(
      `- ${s.step_anchor}${titles.get(s.step_anchor) ? `: ${titles.get(s.step_anchor)}` : ''}${s.commit_hash ? ` (${s.commit_hash.slice(0, 12)})` : ''}`,
    );
  return lines.join('\n') + '\n';
}

interface Included {
  step_anchor: string;
  commit_hash: string | null;
}

export async function mergePlan(ctx: FlowCtx, input: MergeInput): Promise<MergeData> {
  requireGitVersion();
  const { repo } = ctx;
  const planPath = await resolvePlanPath(repo, input.plan, repo.worktreeRoot, await state.knownPlans(ctx));
  const slug = slugOfPlan(planPath);
  const steps = await state.planSteps(ctx, planPath);
  if (!steps) throw new TugError('PlanNotInitialized', { plan_path: planPath });
  const incomplete = steps.filter((s) => s.status !== 'completed');
  if (incomplete.length > 0 && !input.force) {
    throw new TugError(
      'PlanIncomplete',
      {
        plan_path: planPath,
        reason: `${incomplete.length} step(s) not completed: ${incomplete.map((s) => s.anchor).join(', ')}`,
        incomplete_steps: incomplete.map((s) => ({ step_anchor: s.anchor, status: s.status })),
      },
      { hint: `tugcode state show ${planPath}   (or tugcode merge --force)` },
    );
  }
  const branch = sourceBranch(ctx, planPath, slug, input.branch);
  const into = input.into ?? getBranchPlan(repo.mainRoot, branch)?.base_branch ?? ctx.config.run.base_branch;
  if (!branchExists(repo.mainRoot, into))
    throw new TugError('InvalidArgument', { reason: `target branch ${into} does not exist`, branch: into });
  if (into === branch) throw new TugError('InvalidArgument', { reason: `cannot merge ${branch} into itself` });

  const run = async (): Promise<MergeData> => {
    const source = branchTip(repo.mainRoot, branch)!;
    const target = branchTip(repo.mainRoot, into)!;
    const included = verifySteps(
      ctx,
      planPath,
      steps.filter((s) => s.status === 'completed'),
      branch,
      source,
    );
    const holder = listWorktrees(repo).find((w) => w.branch === into && !w.prunable);
    if (holder && statusEntries(holder.path, { untracked: false, pathspec: ALL_BUT_RUNTIME }).length > 0) {
      throw new TugError(
        'WorktreeDirty',
        { worktree_path: holder.path, branch: into, reason: `${into} is checked out there with uncommitted changes` },
        { hint: `commit or stash the changes in ${holder.path}, then merge again` },
      );
    }
    const already = isAncestor(repo.mainRoot, source, target);
    if (!already) {
      const check = checkMerge(repo, target, source);
      if (!check.clean) throw new TugError('MergeConflict', { branch, into, files: check.files, plan_path: planPath });
    }
    const data: MergeData = {
      merged: false,
      merge_commit: null,
      branch,
      into,
      dry_run: Boolean(input.dryRun),
      already_merged: already,
      steps_included: included.map((s) => s.step_anchor),
      step_commits: Object.fromEntries(included.map((s) => [s.step_anchor, s.commit_hash])),
      worktrees_removed: [],
      branches_deleted: [],
      kept: [],
    };
    if (input.dryRun) {
      await planCleanup(ctx, planPath, slug, into, [source, target], data, true);
      return data;
    }
    let result = target;
    if (!already) {
      const titles = new Map(steps.map((s) => [s.anchor, s.title]));
      result = commitMerge(ctx, target, source, mergeMessage(planPath, slug, branch, included, titles));
      publish(ctx, into, target, result, holder?.path ?? null);
      data.merge_commit = result;
    }
    data.merged = true;
    await planCleanup(ctx, planPath, slug, into, [result], data, false);
    return data;
  };
  return input.dryRun ? run() : withIntegrationLock(repo.mainRoot, run);
}

/** Every completed step's commit is reachable from the branch, or has a patch-equivalent with its trailer. */
function verifySteps(
  ctx: FlowCtx,
  planPath: string,
  completed: state.StepState[],
  branch: string,
  source: string,
): Included[] {
  const root = ctx.repo.mainRoot;
  let scanned: TrailerCommit[] | null = null;
  const out: Included[] = [];
  for (const s of completed) {
    if (!s.commit_hash) {
      out.push({ step_anchor: s.anchor, commit_hash: null });
      continue;
    }
    const reachable = gitTry(['merge-base', '--is-ancestor', s.commit_hash, source], root).status === 0;
    if (reachable) {
      out.push({ step_anchor: s.anchor, commit_hash: s.commit_hash });
      continue;
    }
    scanned ??= listTrailerCommits(root, [source]).commits;
    // The newest commit on the branch whose trailers name this plan and step (a rebase or cherry-pick keeps them).
    const equivalent = scanned.find((c) => c.steps.includes(s.anchor) && c.plans.includes(planPath));
    if (!equivalent)
      throw new TugError('CommitNotIntegrated', {
        plan_path: planPath,
        step_anchor: s.anchor,
        commit_hash: s.commit_hash,
        branch,
      });
    out.push({ step_anchor: s.anchor, commit_hash: equivalent.hash });
  }
  return out;
}

/** The merge commit: merged tree + regenerated implementation-log index, parents target and source. */
function commitMerge(ctx: FlowCtx, target: string, source: string, message: string): string {
  const { repo } = ctx;
  const merged = mergeTree(repo, target, source);
  if (!merged.clean) throw new TugError('MergeConflict', { branch: source, into: target, files: merged.files });
  let tree = merged.tree;
  const entries = readTreeFiles(repo, tree, LOG_DIR);
  if (entries.length > 0) {
    const index = renderIndex(entries);
    if (fileAt(repo, tree, LOG_INDEX) !== index) tree = treeWithFile(repo, tree, LOG_INDEX, index);
  }
  return git(['commit-tree', tree, '-p', target, '-p', source, '-F', '-'], repo.mainRoot, { input: message }).trim();
}

/** Move `into` from `from` to `to`; a checked-out target's index and files follow (two-tree read-tree). */
function publish(ctx: FlowCtx, into: string, from: string, to: string, holder: string | null): void {
  const root = ctx.repo.mainRoot;
  if (holder) {
    const r = gitTry(['read-tree', '-m', '-u', from, to], holder);
    if (r.status !== 0) {
      throw new TugError('WorktreeDirty', {
        worktree_path: holder,
        branch: into,
        reason: r.stderr.trim().split('\n')[0] ?? 'files would be overwritten',
      });
    }
  }
  const u = gitTry(['update-ref', '-m', `tugcode merge into ${into}`, `refs/heads/${into}`, to, from], root);
  if (u.status !== 0) {
    if (holder) gitTry(['read-tree', '-m', '-u', to, from], holder);
    throw new TugError('GitError', {
      args: ['update-ref', `refs/heads/${into}`],
      stderr: u.stderr,
      reason: `${into} moved during the merge; nothing was changed`,
    });
  }
}

/**
 * Remove the plan's worktrees and branches whose tips are contained in `tips` (the merge result), whose
 * worktree is clean and holds no live claim; everything else is kept and reported. With `dryRun`, only
 * report.
 */
async function planCleanup(
  ctx: FlowCtx,
  planPath: string,
  slug: string,
  into: string,
  tips: string[],
  data: MergeData,
  dryRun: boolean,
): Promise<void> {
  const { repo } = ctx;
  const root = repo.mainRoot;
  const worktrees = listWorktrees(repo);
  const branches = listBranchPlans(root)
    .filter(
      (b) =>
        b.plan_path === planPath &&
        b.branch !== into &&
        (b.branch === integrationBranch(slug) || b.branch.startsWith(`tugplan/${slug}--`)),
    )
    .map((b) => b.branch)
    .filter((b) => branchExists(root, b));
  for (const b of branches) {
    const tip = branchTip(root, b)!;
    const wt = worktrees.find((w) => w.branch === b);
    if (wt?.path === root) {
      data.kept.push({ branch: b, worktree_path: wt.path, reason: 'checked out in the main checkout' });
      continue;
    }
    if (!tips.some((t) => isAncestor(root, tip, t))) {
      data.kept.push({ branch: b, worktree_path: wt?.path ?? null, reason: 'has commits not in the merge' });
      continue;
    }
    if (wt && !wt.prunable && statusEntries(wt.path, { pathspec: ALL_BUT_RUNTIME }).length > 0) {
      data.kept.push({ branch: b, worktree_path: wt.path, reason: 'worktree has uncommitted changes' });
      continue;
    }
    if (wt && (await state.claimsHeldBy(ctx, wt.path)).some((c) => c.live)) {
      data.kept.push({ branch: b, worktree_path: wt.path, reason: 'worktree holds a live claim' });
      continue;
    }
    if (!dryRun) {
      if (wt) git(['worktree', 'remove', '--force', wt.path], root);
      git(['branch', '-D', b], root);
    }
    if (wt) data.worktrees_removed.push(wt.path);
    data.branches_deleted.push(b);
  }
}
