/**
 * `tugcode worktree create` (docs/git.md §3): a branch + worktree per plan, its state initialized and
 * reconciled. Everything is checked before `git worktree add`; any failure after it removes what it
 * made (worktree, branch, branch config, ignore lines), so a failed create leaves no debris.
 */
import { existsSync, readdirSync, readFileSync, rmdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { TugError } from '../contract/errors.js';
import { shellArg } from '../util/shell-arg.js';
import { gitRunner, type GitRunner } from '../git/exec.js';
import type { FlowCtx } from './flow-context.js';
import { listBranchPlans, setBranchPlan } from '../git/branch-config.js';
import { integrationBranch, isCreateBranch, TUGTREE_DIR, worktreeBranch, worktreeDir } from '../contract/layout.js';
import { checkName, slugOfPlan, timestampName } from './naming.js';
import {
  committedPlan,
  missingBase,
  parseAndValidate,
  planNotCommitted,
  resolvePlanInMain,
  resolvePlanPath,
} from './plan-file.js';
import { branchExists, requireGitVersion } from '../git/refs.js';
import { gitWorktrees } from '../git/repo.js';
import { hookFile } from './hooks.js';
import { ensureRuntimeExclude } from '../git/runtime-files.js';
import * as state from './state-bridge.js';

export interface CreateInput {
  plan: string;
  base?: string | undefined;
  name?: string | undefined;
  reuse?: boolean | undefined;
  new?: boolean | undefined;
}

export interface CreateData {
  worktree_path: string;
  branch_name: string;
  base_branch: string;
  plan_path: string;
  all_steps: string[];
  ready_steps: string[];
  state_initialized: boolean;
  reused: boolean;
}

export interface PlanWorktree {
  path: string;
  branch: string;
  head: string | null;
  plan_path: string;
  base_branch: string | null;
}

/** Live worktrees made by `worktree create` for this plan (registered in git and present on disk). */
async function planWorktrees(ctx: FlowCtx, planPath: string): Promise<PlanWorktree[]> {
  const g = gitRunner(ctx.env);
  const slug = slugOfPlan(planPath);
  const configs = new Map((await listBranchPlans(g, ctx.repo.mainRoot)).map((b) => [b.branch, b]));
  return (await gitWorktrees(g, ctx.repo))
    .filter((w) => w.branch && !w.prunable && existsSync(w.path) && isCreateBranch(w.branch, slug))
    .flatMap((w) => {
      const cfg = configs.get(w.branch!);
      return cfg && cfg.plan_path === planPath
        ? [{ path: w.path, branch: w.branch!, head: w.head, plan_path: planPath, base_branch: cfg.base_branch }]
        : [];
    });
}

/** The refs whose trailers heal this plan's state: its integration branch (when it exists) and `branch`. */
async function reconcileRefs(ctx: FlowCtx, slug: string, branch: string): Promise<string[]> {
  const integ = integrationBranch(slug);
  return (await branchExists(gitRunner(ctx.env), ctx.repo.mainRoot, integ)) ? [integ, branch] : [branch];
}

export async function createWorktree(ctx: FlowCtx, input: CreateInput): Promise<CreateData> {
  const g = gitRunner(ctx.env);
  await requireGitVersion(g);
  if (input.reuse && input.new)
    throw new TugError(
      'InvalidArgument',
      { reason: '--reuse and --new exclude each other' },
      { hint: "pass --reuse to continue in the plan's worktree, or --new to make another beside it" },
    );
  if (input.name !== undefined) checkName(input.name);
  const { repo } = ctx;
  // Resolved against the main checkout, also from a linked worktree (docs/git.md §3).
  // A plan only the linked worktree has is named from there, and refused below as not committed.
  const planPath = await resolvePlanInMain(repo, input.plan).catch((e: unknown) => {
    if (repo.isLinkedWorktree && (e as { code?: string }).code === 'PlanNotFound')
      return resolvePlanPath(repo, input.plan);
    throw e;
  });
  const slug = slugOfPlan(planPath);
  const base = input.base ?? ctx.config.run.base_branch;
  if (!(await branchExists(g, repo.mainRoot, base))) throw await missingBase(g, repo, planPath, base);
  const blob = await committedPlan(g, repo, planPath, base);
  const mainCopy = existsSync(join(repo.mainRoot, planPath)) ? readFileSync(join(repo.mainRoot, planPath)) : null;
  if (!mainCopy || !mainCopy.equals(blob)) {
    const reason = mainCopy ? `the main checkout's copy differs from ${base}` : `the main checkout has no ${planPath}`;
    throw await planNotCommitted(g, repo, planPath, base, reason);
  }
  await parseAndValidate(planPath, blob);

  const existing = (await planWorktrees(ctx, planPath)).sort((a, b) => (a.branch < b.branch ? 1 : -1));
  if (existing.length > 0 && !input.new) {
    const w = existing[0]!;
    if (!input.reuse) {
      throw new TugError('WorktreeExists', {
        reason: `a worktree for ${planPath} already exists`,
        worktree_path: w.path,
        branch: w.branch,
        plan_path: planPath,
      });
    }
    ensureRuntimeExclude(repo.commonDir);
    const st = await state.initAndReconcile(ctx, planPath, blob, await reconcileRefs(ctx, slug, w.branch));
    return {
      worktree_path: w.path,
      branch_name: w.branch,
      base_branch: w.base_branch ?? base,
      plan_path: planPath,
      ...st,
      reused: true,
    };
  }

  const tugtree = join(repo.mainRoot, TUGTREE_DIR);
  const madeTugtree = !existsSync(tugtree);
  const exclude = ensureRuntimeExclude(repo.commonDir);
  // Without --name the name is the time to the second; a name taken (a `--new` in the same second, in
  // this process or another) gets the next free `-2`, `-3`, … instead of a failure.
  const stem = input.name ?? timestampName(ctx.clock.now());
  for (let n = 1; ; n++) {
    const branch = worktreeBranch(slug, n === 1 ? stem : `${stem}-${n}`);
    const dir = worktreeDir(repo.mainRoot, branch);
    const taken = (await branchExists(g, repo.mainRoot, branch))
      ? { reason: `branch ${branch} already exists`, branch }
      : existsSync(dir)
        ? { reason: `the worktree directory already exists`, worktree_path: dir }
        : null;
    if (taken && (input.name !== undefined || n >= 100)) {
      exclude.undo();
      // --new or --reuse would not help a name taken: another name does (the catalogue's hint is for a
      // live worktree of the plan).
      throw new TugError('WorktreeExists', taken, {
        hint:
          input.name !== undefined
            ? `pass another --name, or leave it out to name the worktree by the time${input.new ? '' : "; --reuse continues in the plan's latest worktree"}`
            : 'pass --name <a name of your own>',
      });
    }
    if (taken) continue;
    let added = false;
    try {
      const r = await g.tryRun(
        ['worktree', 'add', '--quiet', '--no-track', '-b', branch, dir, `refs/heads/${base}`],
        repo.mainRoot,
      );
      // Taken between the check and the add by another create: not ours to undo; the next name is tried.
      if (r.status !== 0 && input.name === undefined && /already exists/.test(r.stderr) && n < 100) continue;
      // A branch named `tugplan` (or `tugplan/<slug>`) leaves no room for refs under it.
      const blocker = /'refs\/heads\/([^']+)' exists; cannot create/.exec(r.stderr)?.[1];
      if (r.status !== 0 && blocker)
        throw new TugError(
          'WorktreeExists',
          { reason: `a branch named ${blocker} exists, so git cannot create ${branch}`, branch: blocker },
          { hint: `rename it (git branch -m ${shellArg(blocker)} <new-name>), then run tugcode worktree create again` },
        );
      if (r.status !== 0) {
        // git runs post-checkout once the new tree is checked out: a tree there and a hook to run mean the
        // hook refused (git says nothing of its own then), and the error names it (docs/git.md §3).
        const hook = existsSync(join(dir, '.git')) ? await hookFile(g, repo.mainRoot, 'post-checkout') : null;
        throw new TugError('GitError', {
          args: ['worktree', 'add', branch],
          stderr: r.stderr,
          exit_code: r.status,
          // `hook: null`: none to run, so the catalogue's guess at one (for the driver's add) is left out.
          ...(hook ? { hook, hook_name: 'post-checkout', then_run: 'tugcode worktree create' } : { hook: null }),
        });
      }
      added = true;
      await setBranchPlan(g, repo.mainRoot, branch, planPath, base);
      const st = await state.initAndReconcile(ctx, planPath, blob, await reconcileRefs(ctx, slug, branch));
      return { worktree_path: dir, branch_name: branch, base_branch: base, plan_path: planPath, ...st, reused: false };
    } catch (e) {
      await undoCreate(g, repo.mainRoot, dir, branch, added);
      exclude.undo();
      if (madeTugtree) removeIfEmpty(tugtree);
      throw e;
    }
  }
}

/** Remove the worktree and branch a failed create made (never anything else). */
async function undoCreate(g: GitRunner, mainRoot: string, dir: string, branch: string, added: boolean): Promise<void> {
  if (added || existsSync(dir)) {
    await g.tryRun(['worktree', 'remove', '--force', '--force', dir], mainRoot);
    if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
  }
  // `git branch -D` also drops the branch's config section (tugplan/tugbase).
  if (await branchExists(g, mainRoot, branch)) await g.tryRun(['branch', '-D', branch], mainRoot);
  await g.tryRun(['config', '--remove-section', `branch.${branch}`], mainRoot);
}

function removeIfEmpty(dir: string): void {
  try {
    if (readdirSync(dir).length === 0) rmdirSync(dir);
  } catch {
    /* already gone */
  }
}
