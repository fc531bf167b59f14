/**
 * `tugcode merge <plan>` (docs/git.md §5): brings a finished plan back without losing a commit (R31, R32).
 * Every check runs before anything is written; the merge itself is computed with `git merge-tree`
 * (conflicts are detected without touching a work tree or writing an object), committed with
 * `commit-tree` and published with a compare-and-swap `update-ref`, so a refused or conflicting merge
 * leaves the repository exactly as it was. Only fully merged worktrees and branches of this plan are
 * removed afterwards.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, sep } from 'node:path';
import { TugError } from '../contract/errors.js';
import { commitFailed } from './commit.js';
import { shellArg } from '../util/shell-arg.js';
import { IMPLEMENTATION_LOG_INDEX, renderIndex } from './implementation-log.js';
import { getBranchPlan, listBranchPlans, type BranchPlan } from '../git/branch-config.js';
import { gitRunner, type GitRunner } from '../git/exec.js';
import type { FlowCtx } from './flow-context.js';
import { withIntegrationLock } from './integrate.js';
import {
  checkMerge,
  fileAt,
  mergeTree,
  readTreeFiles,
  treeWithFile,
  withQuarantine,
  type Quarantine,
} from '../git/merge-tree.js';
import {
  IMPLEMENTATION_LOG_DIR,
  IMPLEMENTATION_LOG_INDEX_PATH,
  integrationBranch,
  isCreateBranch,
  isPlanBranch,
  TUGTREE_DIR,
} from '../contract/layout.js';
import { slugOfPlan } from './naming.js';
import { runDriverOf, runLockFresh } from './run-driver.js';
import { resolvePlanPath } from './plan-file.js';
import { branchExists, branchTip, isAncestor, requireGitVersion, resolveCommit, statusDetails } from '../git/refs.js';
import { gitWorktrees } from '../git/repo.js';
import { ALL_BUT_RUNTIME } from '../git/runtime-files.js';
import * as state from './state-bridge.js';
import { readTrailerCommits } from '../git/log.js';
import type { TrailerCommit } from '../git/trailers.js';

export interface MergeInput {
  plan: string;
  into?: string | undefined;
  branch?: string | undefined;
  dryRun?: boolean | undefined;
  force?: boolean | undefined;
  /** Keep the plan's linked worktrees and their branches (`run --merge --keep-worktrees`). */
  keepWorktrees?: boolean | undefined;
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
async function sourceBranch(
  g: GitRunner,
  ctx: FlowCtx,
  planPath: string,
  slug: string,
  explicit?: string,
): Promise<string> {
  const root = ctx.repo.mainRoot;
  if (explicit) {
    if (!(await branchExists(g, root, explicit)))
      throw new TugError(
        'InvalidArgument',
        { reason: `branch ${explicit} does not exist`, branch: explicit },
        { hint: `tugcode worktree list   (the plans' worktree branches), or drop --branch to merge the plan's own` },
      );
    return explicit;
  }
  const integ = integrationBranch(slug);
  if (await branchExists(g, root, integ)) return integ;
  const own: BranchPlan[] = [];
  for (const b of await listBranchPlans(g, root))
    if (b.plan_path === planPath && isCreateBranch(b.branch, slug) && (await branchExists(g, root, b.branch)))
      own.push(b);
  if (own.length === 1) return own[0]!.branch;
  if (own.length === 0) {
    // The hint's `tugcode run` repeats the plan's last run's flags when the state has them (docs/state.md §2),
    // else names a placeholder implementer unless the config names one (docs/run.md §2).
    const flags = await state.lastRunFlags(ctx, 'merge', planPath);
    throw new TugError('BranchNotFound', {
      plan_path: planPath,
      branch: integ,
      reason: `${planPath} has no integration branch ${integ} and no worktree branch to merge`,
      implementer_configured: Boolean(ctx.config.run.implementer || ctx.config.run.agent),
      ...(flags ? { run_flags: flags } : {}),
    });
  }

  throw new TugError(
    'InvalidArgument',
    {
      reason: `${planPath} has several worktree branches; pass --branch`,
      plan_path: planPath,
      candidates: own.map((b) => b.branch),
    },
    // The newest first (timestamp names sort by time), a few at most: details.candidates has them all.
    {
      hint: own
        .map((b) => b.branch)
        .sort()
        .reverse()
        .slice(0, 3)
        .map((b) => `tugcode merge ${shellArg(planPath)} --branch ${shellArg(b)}`)
        .join('   or   '),
    },
  );
}

/**
 * The answer for a plan whose branches a merge deleted already: "already merged" when it has step commits
 * and every one is on `into`, else null (nothing was merged: BranchNotFound stands).
 */
async function mergedBefore(
  g: GitRunner,
  ctx: FlowCtx,
  slug: string,
  steps: state.StepState[],
  into: string,
): Promise<MergeData | null> {
  const root = ctx.repo.mainRoot;
  if (!(await branchExists(g, root, into))) return null;
  const withCommit = steps.filter((s) => s.commit_hash);
  if (withCommit.length === 0) return null;
  // A commit this clone does not have (the plan ran in another clone) is not merged here either; the
  // caller says where the branch is (remoteBranchMissing), rather than a raw GitError.
  for (const s of withCommit) if ((await resolveCommit(g, root, s.commit_hash!)) === null) return null;
  for (const s of withCommit) if (!(await isAncestor(g, root, s.commit_hash!, into))) return null;
  return {
    merged: false,
    merge_commit: null,
    branch: integrationBranch(slug),
    into,
    dry_run: false,
    already_merged: true,
    steps_included: steps.map((s) => s.anchor),
    step_commits: Object.fromEntries(steps.map((s) => [s.anchor, s.commit_hash])),
    worktrees_removed: [],
    branches_deleted: [],
    kept: [],
  };
}

/**
 * BranchNotFound on a clone that never ran the plan, while the state says it integrates on a remote and
 * names step commits (docs/run.md §1.11, docs/state.md §8): the branch is there, not missing; the
 * catalogue's hint is then the fetch that brings it here. Null when that is not the case ("run it first").
 */
async function remoteBranchMissing(
  ctx: FlowCtx,
  planPath: string,
  slug: string,
  steps: state.StepState[],
  e: TugError,
): Promise<TugError | null> {
  if (!steps.some((s) => s.commit_hash)) return null;
  const target = await state.integrationTarget(ctx, planPath).catch(() => null);
  if (target?.kind !== 'remote') return null;
  const integ = integrationBranch(slug);
  return new TugError('BranchNotFound', {
    ...e.details,
    integration_kind: target.kind,
    integration_where: target.where,
    reason: `${planPath} integrates on ${target.where}/${integ}, and this clone has no ${integ}: it ran in another clone`,
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
  const g = gitRunner(ctx.env);
  await requireGitVersion(g);
  const { repo } = ctx;
  const planPath = await resolvePlanPath(repo, input.plan, repo.worktreeRoot, await state.knownPlans(ctx));
  const slug = slugOfPlan(planPath);
  // A run of the plan still going works in the branch and worktrees a merge removes (docs/git.md §5). Its own
  // `--merge` holds the lock in this very process.
  const driver = runDriverOf(repo.mainRoot, slug);
  const self = driver?.alive !== null && driver?.pid === process.pid;
  if (driver && !self && (driver.alive ?? runLockFresh(repo.mainRoot, slug)))
    throw new TugError('RunInProgress', {
      plan_path: planPath,
      holder_pid: driver.pid,
      holder_host: driver.host,
      started_at: driver.started_at,
      reason: 'merge would remove the integration branch and the worktrees it works in',
    });
  const steps = await state.planSteps(ctx, planPath);
  if (!steps) throw await state.notInitialized(ctx, 'merge', planPath);
  const incomplete = steps.filter((s) => s.status !== 'completed');
  if (incomplete.length > 0 && !input.force) {
    throw new TugError(
      'PlanIncomplete',
      {
        plan_path: planPath,
        reason: `${incomplete.length} step(s) not completed: ${incomplete.map((s) => s.anchor).join(', ')}`,
        incomplete_steps: incomplete.map((s) => ({ step_anchor: s.anchor, status: s.status })),
      },
      { hint: `tugcode state show ${shellArg(planPath)}   (or tugcode merge --force)` },
    );
  }
  const branch = await sourceBranch(g, ctx, planPath, slug, input.branch).catch(async (e: unknown) => {
    // Merged already: merge deleted the branches, and every step commit is on the target.
    const missing = e instanceof TugError && e.code === 'BranchNotFound' ? e : null;
    const done = missing !== null && incomplete.length === 0;
    const merged = done ? await mergedBefore(g, ctx, slug, steps, input.into ?? ctx.config.run.base_branch) : null;
    if (merged) return merged;
    throw (missing && (await remoteBranchMissing(ctx, planPath, slug, steps, missing))) ?? e;
  });
  if (typeof branch !== 'string') return { ...branch, merged: !input.dryRun, dry_run: Boolean(input.dryRun) };
  const into = input.into ?? (await getBranchPlan(g, repo.mainRoot, branch))?.base_branch ?? ctx.config.run.base_branch;
  if (!(await branchExists(g, repo.mainRoot, into)))
    throw new TugError(
      'InvalidArgument',
      { reason: `target branch ${into} does not exist`, branch: into },
      {
        hint:
          input.into === undefined
            ? `pass --into <branch> (git branch lists them), or create ${shellArg(into)}`
            : `pass --into an existing branch (git branch lists them)`,
      },
    );
  if (into === branch) throw new TugError('InvalidArgument', { reason: `cannot merge ${branch} into itself` });

  const run = async (): Promise<MergeData> => {
    const source = (await branchTip(g, repo.mainRoot, branch))!;
    const target = (await branchTip(g, repo.mainRoot, into))!;
    const included = await verifySteps(
      g,
      ctx,
      planPath,
      steps.filter((s) => s.status === 'completed'),
      branch,
      source,
    );
    const holder = await cleanHolder(g, repo, into);
    const already = await isAncestor(g, repo.mainRoot, source, target);
    let tree: string | null = null;
    let ownIndex: string | null = null;
    if (!already) {
      const check = await checkMerge(g, repo, target, source);
      if (!check.clean) throw new TugError('MergeConflict', { branch, into, files: check.files, plan_path: planPath });
      // The checkout of `into` is asked now, in a dry run too, exactly as the publish will ask it: on the
      // merge's tree made in a quarantine, so a dry run or a refusal writes no object.
      if (holder) {
        const path = holder.path;
        ownIndex = await withQuarantine(repo, async (q) =>
          holderUpdatable(g, ctx, path, target, await mergedTree(g, ctx, target, source, q), { into, branch }, q),
        );
      }
      if (!input.dryRun) tree = await mergedTree(g, ctx, target, source);
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
      await planCleanup(g, ctx, planPath, slug, into, [source, target], data, { dryRun: true });
      return data;
    }
    let result = target;
    if (!already) {
      const titles = new Map(steps.map((s) => [s.anchor, s.title]));
      result = await commitMerge(g, ctx, tree!, target, source, mergeMessage(planPath, slug, branch, included, titles));
      await publish(g, ctx, { into, branch }, target, result, holder?.path ?? null, ownIndex);
      data.merge_commit = result;
    }
    data.merged = true;
    await planCleanup(g, ctx, planPath, slug, into, [result], data, {
      dryRun: false,
      keepWorktrees: input.keepWorktrees,
    });
    return data;
  };
  return input.dryRun ? run() : withIntegrationLock(repo.mainRoot, run);
}

/**
 * The worktree that has `into` checked out, if any; WorktreeDirty when it has uncommitted changes (the merge
 * would update it). `tugcode run --merge` asks before its first claim, so a dirty checkout costs no work.
 */
export async function cleanHolder(g: GitRunner, repo: FlowCtx['repo'], into: string) {
  const holder = (await gitWorktrees(g, repo)).find((w) => w.branch === into && !w.prunable);
  const dirty = holder ? await statusDetails(g, holder.path, { untracked: false, pathspec: ALL_BUT_RUNTIME }) : [];
  if (holder && dirty.length > 0) {
    const files = [...new Set(dirty.map((e) => e.path))].sort();
    const shown = files.length > 5 ? [...files.slice(0, 5), `… ${files.length - 5} more`] : files;
    throw new TugError(
      'WorktreeDirty',
      {
        worktree_path: holder.path,
        branch: into,
        files,
        reason: `${into} is checked out there with uncommitted changes (${shown.join(', ')})`,
      },
      {
        message: `cannot merge into ${into}: ${holder.path} has uncommitted changes to ${shown.join(', ')}`,
        hint: `commit or stash the changes in ${shellArg(holder.path)}, then merge again`,
      },
    );
  }
  return holder;
}

/** Every completed step's commit is reachable from the branch, or has a patch-equivalent with its trailer. */
async function verifySteps(
  g: GitRunner,
  ctx: FlowCtx,
  planPath: string,
  completed: state.StepState[],
  branch: string,
  source: string,
): Promise<Included[]> {
  const root = ctx.repo.mainRoot;
  let scanned: TrailerCommit[] | null = null;
  const out: Included[] = [];
  for (const s of completed) {
    if (!s.commit_hash) {
      out.push({ step_anchor: s.anchor, commit_hash: null });
      continue;
    }
    const reachable = (await g.tryRun(['merge-base', '--is-ancestor', s.commit_hash, source], root)).status === 0;
    if (reachable) {
      out.push({ step_anchor: s.anchor, commit_hash: s.commit_hash });
      continue;
    }
    scanned ??= (await readTrailerCommits(g, root, [source])).commits;
    // The newest commit on the branch whose trailers name this plan and step (a rebase or cherry-pick keeps them).
    const equivalent = scanned.find((c) => c.steps.includes(s.anchor) && c.plans.includes(planPath));
    if (!equivalent) {
      const where = await whereIntegrated(g, ctx, planPath, s.commit_hash);
      // This clone's integration branch is behind the remote the plan integrates on, and the commit was never
      // fetched: the catalogue's hint is then the literal fetch of that branch (docs/run.md §1.11).
      const unfetched =
        where.integration_kind === 'remote' &&
        branch === integrationBranch(slugOfPlan(planPath)) &&
        (await resolveCommit(g, root, s.commit_hash)) === null;
      throw new TugError('CommitNotIntegrated', {
        plan_path: planPath,
        step_anchor: s.anchor,
        commit_hash: s.commit_hash,
        branch,
        ...where,
        ...(unfetched ? { commit_unfetched: true } : {}),
      });
    }
    out.push({ step_anchor: s.anchor, commit_hash: equivalent.hash });
  }
  return out;
}

/**
 * For CommitNotIntegrated's hint (docs/run.md §1.11), on that error path only: the branches (local and
 * remote-tracking) that hold the commit, and where the state says the plan integrates.
 */
async function whereIntegrated(g: GitRunner, ctx: FlowCtx, planPath: string, commit: string) {
  const r = await g.tryRun(
    ['for-each-ref', '--format=%(refname:short)', `--contains=${commit}`, 'refs/heads', 'refs/remotes'],
    ctx.repo.mainRoot,
  );
  const on = r.status === 0 ? r.stdout.split('\n').filter(Boolean).slice(0, 5) : [];
  const target = await state.integrationTarget(ctx, planPath).catch(() => null);
  return { found_on: on, ...(target ? { integration_kind: target.kind, integration_where: target.where } : {}) };
}

/** The tree of the merge: the merged tree with the implementation-log index regenerated from its entries. */
async function mergedTree(g: GitRunner, ctx: FlowCtx, target: string, source: string, q?: Quarantine): Promise<string> {
  const { repo } = ctx;
  const merged = await mergeTree(g, repo, target, source, q);
  if (!merged.clean) throw new TugError('MergeConflict', { branch: source, into: target, files: merged.files });
  let tree = merged.tree;
  const entries = await readTreeFiles(g, repo, tree, IMPLEMENTATION_LOG_DIR, q);
  if (entries.length > 0) {
    const index = renderIndex(entries);
    if ((await fileAt(g, repo, tree, IMPLEMENTATION_LOG_INDEX_PATH, q)) !== index)
      tree = await treeWithFile(g, repo, tree, IMPLEMENTATION_LOG_INDEX_PATH, index, q);
  }
  return tree;
}

/** The merge commit of `tree`, parents target and source. */
async function commitMerge(
  g: GitRunner,
  ctx: FlowCtx,
  tree: string,
  target: string,
  source: string,
  message: string,
): Promise<string> {
  // commit-tree ignores commit.gpgsign: asked here, so a repository that signs its commits gets a signed
  // merge (and a signing failure is CommitFailed, nothing changed). Hooks are not run (docs/git.md).
  const root = ctx.repo.mainRoot;
  const sign = (await g.tryRun(['config', '--type=bool', '--get', 'commit.gpgsign'], root)).stdout.trim() === 'true';
  const args = ['commit-tree', tree, '-p', target, '-p', source, ...(sign ? ['-S'] : []), '-F', '-'];
  try {
    return (await g.run(args, root, { input: message })).trim();
  } catch (e) {
    if (!(e instanceof TugError) || e.code !== 'GitError') throw e;
    throw await commitFailed(g, root, e, { noVerify: true });
  }
}

/**
 * Whether the checkout of `into` at `holder` can follow the merge (`git read-tree -m -u -n`, the publish's
 * own check without writing): local changes the merge does not touch stay, as with `git merge`; a change
 * or an untracked file in the merge's way is WorktreeDirty, in a dry run too. The one exception is an
 * untracked implementation-log index that `tugcode init` wrote (its header only) or that equals the
 * merge's: tugcode's own file, replaced by the merge (docs/git.md). Returns its path then, else null.
 */
async function holderUpdatable(
  g: GitRunner,
  ctx: FlowCtx,
  holder: string,
  from: string,
  to: string,
  names: { into: string; branch: string },
  q: Quarantine,
): Promise<string | null> {
  const r = await g.tryRun(['read-tree', '-m', '-u', '-n', from, to], holder, { env: q });
  if (r.status === 0) return null;
  const untracked = untrackedInTheWay(r.stderr);
  let own: string | null = null;
  if (untracked.includes(IMPLEMENTATION_LOG_INDEX_PATH)) {
    const text = readText(join(holder, IMPLEMENTATION_LOG_INDEX_PATH));
    if (
      text !== null &&
      (text === IMPLEMENTATION_LOG_INDEX || text === (await fileAt(g, ctx.repo, to, IMPLEMENTATION_LOG_INDEX_PATH, q)))
    )
      own = IMPLEMENTATION_LOG_INDEX_PATH;
  }
  const others = untracked.filter((p) => p !== own);
  if (others.length > 0 || untracked.length === 0) throw holderRefusal(holder, names, r.stderr, others);
  return own;
}

/** WorktreeDirty for a checkout of `into` that cannot follow the merge (`git read-tree` said why). */
function holderRefusal(
  holder: string,
  names: { into: string; branch: string },
  stderr: string,
  untracked: string[],
): TugError {
  const { into, branch } = names;
  if (untracked.length > 0) {
    const list = untracked.join(', ');
    return new TugError(
      'WorktreeDirty',
      {
        worktree_path: holder,
        branch: into,
        untracked_files: untracked,
        reason: `untracked file(s) in ${holder} would be overwritten by merging ${branch}: ${list}`,
      },
      {
        message: `merging ${branch} into ${into} would overwrite untracked file(s) in ${holder}: ${list}`,
        hint: `move or delete ${untracked.length > 1 ? 'them' : 'it'} (the merge brings ${untracked.length > 1 ? 'its own copies' : 'its own copy'}), then run tugcode merge again`,
      },
    );
  }
  const reason = stderr.trim().split('\n')[0] || 'files would be overwritten';
  return new TugError(
    'WorktreeDirty',
    { worktree_path: holder, branch: into, reason },
    {
      message: `cannot update ${into} checked out in ${holder}: ${reason}`,
      hint: `commit or stash the changes in ${shellArg(holder)}, then run tugcode merge again`,
    },
  );
}

function readText(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

/** `error: Untracked working tree file 'x' would be overwritten by merge.` lines of git → the paths. */
function untrackedInTheWay(stderr: string): string[] {
  const out: string[] = [];
  for (const m of stderr.matchAll(/Untracked working tree file '(.+)' would be (?:overwritten|removed) by merge/g))
    out.push(m[1]!);
  // git 2.39 lists them after a header when there are several.
  const block = /untracked working tree files would be (?:overwritten|removed) by merge:\n((?:\t.+\n?)+)/.exec(stderr);
  if (block) for (const l of block[1]!.split('\n')) if (l.trim()) out.push(l.trim());
  return [...new Set(out)];
}

/**
 * Move `into` from `from` to `to`; a checked-out target's index and files follow (two-tree read-tree), which
 * refuses — changing nothing — when the merge would overwrite a file there. `--force` does not help with
 * that, so the refusal names the files and what to do instead.
 */
async function publish(
  g: GitRunner,
  ctx: FlowCtx,
  names: { into: string; branch: string },
  from: string,
  to: string,
  holder: string | null,
  ownIndex: string | null = null,
): Promise<void> {
  const { into } = names;
  const root = ctx.repo.mainRoot;
  // tugcode's own untracked index (holderUpdatable) makes way for the merge's; it is back on a refusal.
  const aside = holder && ownIndex ? join(holder, ownIndex) : null;
  const kept = aside ? readFileSync(aside) : null;
  const putBack = () => aside && kept && writeFileSync(aside, kept);
  if (holder) {
    if (aside) rmSync(aside, { force: true });
    const r = await g.tryRun(['read-tree', '-m', '-u', from, to], holder);
    if (r.status !== 0) {
      putBack();
      throw holderRefusal(holder, names, r.stderr, untrackedInTheWay(r.stderr));
    }
  }
  const u = await g.tryRun(['update-ref', '-m', `tugcode merge into ${into}`, `refs/heads/${into}`, to, from], root);
  if (u.status !== 0) {
    if (holder) await g.tryRun(['read-tree', '-m', '-u', to, from], holder);
    putBack();
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
  g: GitRunner,
  ctx: FlowCtx,
  planPath: string,
  slug: string,
  into: string,
  tips: string[],
  data: MergeData,
  o: { dryRun: boolean; keepWorktrees?: boolean | undefined },
): Promise<void> {
  const { dryRun, keepWorktrees } = o;
  const { repo } = ctx;
  const root = repo.mainRoot;
  const worktrees = await gitWorktrees(g, repo);
  const branches: string[] = [];
  for (const b of await listBranchPlans(g, root))
    if (
      b.plan_path === planPath &&
      b.branch !== into &&
      isPlanBranch(b.branch, slug) &&
      (await branchExists(g, root, b.branch))
    )
      branches.push(b.branch);
  for (const b of branches) {
    const tip = (await branchTip(g, root, b))!;
    const wt = worktrees.find((w) => w.branch === b);
    if (wt?.path === root) {
      data.kept.push({ branch: b, worktree_path: wt.path, reason: 'checked out in the main checkout' });
      continue;
    }
    // Only trees tugcode made (under .tugtree/) are removed; one the user added by hand is theirs, and the
    // branch checked out there stays with it.
    if (wt && !wt.path.startsWith(join(root, TUGTREE_DIR) + sep)) {
      data.kept.push({
        branch: b,
        worktree_path: wt.path,
        reason: 'checked out in a worktree tugcode did not make (outside .tugtree/)',
      });
      continue;
    }
    if (wt && keepWorktrees) {
      data.kept.push({ branch: b, worktree_path: wt.path, reason: 'worktrees kept as asked' });
      continue;
    }
    let contained = false;
    for (const t of tips) if (!contained && (await isAncestor(g, root, tip, t))) contained = true;
    if (!contained) {
      data.kept.push({ branch: b, worktree_path: wt?.path ?? null, reason: 'has commits not in the merge' });
      continue;
    }
    if (wt && !wt.prunable) {
      // A tree git cannot open (its `.git` points nowhere: moved or half-deleted) is kept and said so; the
      // merge itself does not need it.
      const st = await g.tryRun(['status', '--porcelain', '-z', '--', ...ALL_BUT_RUNTIME], wt.path);
      if (st.status !== 0) {
        const why = st.stderr.trim().split('\n')[0] || `git status exited ${st.status}`;
        data.kept.push({
          branch: b,
          worktree_path: wt.path,
          reason: `git cannot open the worktree (${why}); fix it with git worktree repair, or remove the directory and run git worktree prune`,
        });
        continue;
      }
      if (st.stdout !== '') {
        data.kept.push({ branch: b, worktree_path: wt.path, reason: 'worktree has uncommitted changes' });
        continue;
      }
    }
    if (wt && (await state.claimsHeldBy(ctx, wt.path)).some((c) => c.live)) {
      data.kept.push({ branch: b, worktree_path: wt.path, reason: 'worktree holds a live claim' });
      continue;
    }
    if (!dryRun) {
      if (wt) await g.run(['worktree', 'remove', '--force', wt.path], root);
      await g.run(['branch', '-D', b], root);
    }
    if (wt) data.worktrees_removed.push(wt.path);
    data.branches_deleted.push(b);
  }
}
