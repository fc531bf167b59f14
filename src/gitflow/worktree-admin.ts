/**
 * `tugcode worktree list` (read-only) and `tugcode worktree remove` (docs/git.md §3). Removal refuses a dirty
 * tree, commits merged nowhere and live claims unless `--force`; it only ever touches the one worktree and
 * its own branch (R32, R33).
 */
import { existsSync, realpathSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import { TugError } from '../contract/errors.js';
import { shellArg } from '../util/shell-arg.js';
import { getBranchPlan } from '../git/branch-config.js';
import { gitRunner, type GitRunner } from '../git/exec.js';
import type { FlowCtx } from './flow-context.js';
import { BRANCH_PREFIX, integrationBranch, TUGTREE_DIR, worktreeDir } from '../contract/layout.js';
import { slugOfPlan } from './naming.js';
import { branchExists, commitsNotIn, commitsWithoutEquivalent, requireGitVersion, statusEntries } from '../git/refs.js';
import { gitWorktrees } from '../git/repo.js';
import { ALL_BUT_RUNTIME } from '../git/runtime-files.js';
import * as state from './state-bridge.js';

export interface WorktreeInfo {
  worktree_path: string;
  branch: string | null;
  head: string | null;
  dirty: boolean;
  missing: boolean;
  plan_path: string | null;
  base_branch: string | null;
  claimed_steps: {
    plan_path: string;
    step_anchor: string;
    status: string;
    lease_expires_at: string | null;
    lease_expired: boolean;
  }[];
}

function underTugtree(mainRoot: string, path: string): boolean {
  return path.startsWith(join(mainRoot, TUGTREE_DIR) + sep);
}

/** Every registered worktree under `.tugtree/`, with its plan (branch config) and held claims. */
export async function listTugWorktrees(ctx: FlowCtx): Promise<{ worktrees: WorktreeInfo[] }> {
  const { repo } = ctx;
  const g = gitRunner(ctx.env);
  const out: WorktreeInfo[] = [];
  for (const w of await gitWorktrees(g, repo)) {
    if (w.bare || !underTugtree(repo.mainRoot, w.path)) continue;
    const missing = !existsSync(w.path);
    const cfg = w.branch ? await getBranchPlan(g, repo.mainRoot, w.branch) : null;
    const claims = await state.claimsHeldBy(ctx, w.path);
    out.push({
      worktree_path: w.path,
      branch: w.branch,
      head: w.head,
      dirty: missing ? false : (await statusEntries(g, w.path, { pathspec: ALL_BUT_RUNTIME })).length > 0,
      missing,
      plan_path: cfg?.plan_path ?? null,
      base_branch: cfg?.base_branch ?? null,
      claimed_steps: claims.map((c) => ({
        plan_path: c.plan_path,
        step_anchor: c.step_anchor,
        status: c.status,
        lease_expires_at: c.lease_expires_at,
        lease_expired: !c.live,
      })),
    });
  }
  out.sort((a, b) => (a.worktree_path < b.worktree_path ? -1 : 1));
  return { worktrees: out };
}

export interface RemoveData {
  removed: boolean;
  worktree_path: string;
  branch: string | null;
  branch_deleted: boolean;
  /** The deleted branch's last commit, so even a forced removal can be undone (`git branch <b> <tip>`). */
  branch_tip: string | null;
  released_claims: { plan_path: string; step_anchor: string }[];
  forced: boolean;
}

/** A `<path|name>` argument → the registered worktree under `.tugtree/`, else WorktreeNotFound. */
async function findTarget(g: GitRunner, ctx: FlowCtx, arg: string) {
  const { repo } = ctx;
  const all = (await gitWorktrees(g, repo)).filter((w) => !w.bare);
  const candidates = new Set<string>();
  const asPath = resolve(repo.cwd, arg);
  candidates.add(asPath);
  try {
    candidates.add(realpathSync.native(asPath));
  } catch {
    /* a missing directory can still be a registered worktree */
  }
  if (!arg.includes(sep) || arg.startsWith(BRANCH_PREFIX)) {
    candidates.add(join(repo.mainRoot, TUGTREE_DIR, arg));
    candidates.add(worktreeDir(repo.mainRoot, arg));
  }
  const hit = all.find((w) => candidates.has(w.path) || (w.branch !== null && w.branch === arg));
  if (hit?.path === repo.mainRoot) {
    throw new TugError(
      'WorktreeNotFound',
      { worktree: hit.path, repo_root: repo.mainRoot, reason: 'cannot remove the main checkout' },
      {
        message: `cannot remove the main checkout ${repo.mainRoot}: tugcode removes only the worktrees under .tugtree/`,
        hint: 'tugcode worktree list   (names the worktrees that can be removed)',
      },
    );
  }
  if (hit && !underTugtree(repo.mainRoot, hit.path)) {
    throw new TugError(
      'WorktreeNotFound',
      { worktree: hit.path, repo_root: repo.mainRoot, reason: 'only worktrees under .tugtree/ are removed by tugcode' },
      {
        message: `${hit.path} is a linked worktree outside .tugtree/; tugcode removes only the worktrees it made`,
        hint: `git worktree remove ${shellArg(hit.path)}   (if you really mean to remove it)`,
      },
    );
  }
  if (!hit) {
    throw new TugError(
      'WorktreeNotFound',
      { worktree: asPath, repo_root: repo.mainRoot, reason: 'no such worktree' },
      { hint: 'tugcode worktree list' },
    );
  }
  return hit;
}

/** Commits of `tip` contained (or patch-equivalent) in none of the plan's integration branch and base. */
async function unmergedCommits(g: GitRunner, cwd: string, tip: string, upstreams: string[]): Promise<string[]> {
  const existing: string[] = [];
  for (const u of upstreams) if (await branchExists(g, cwd, u)) existing.push(`refs/heads/${u}`);
  if (existing.length === 0) return commitsNotIn(g, cwd, tip, []);
  const candidates = await commitsNotIn(g, cwd, tip, existing);
  if (candidates.length === 0) return [];
  const lacking: Set<string>[] = [];
  for (const u of existing) lacking.push(new Set(await commitsWithoutEquivalent(g, cwd, u, tip)));
  return candidates.filter((c) => lacking.every((set) => set.has(c)));
}

export async function removeWorktree(ctx: FlowCtx, arg: string, opts: { force?: boolean } = {}): Promise<RemoveData> {
  const g = gitRunner(ctx.env);
  await requireGitVersion(g);
  const { repo } = ctx;
  const w = await findTarget(g, ctx, arg);
  const force = Boolean(opts.force);
  const missing = !existsSync(w.path);
  const cfg = w.branch ? await getBranchPlan(g, repo.mainRoot, w.branch) : null;
  const tip = w.head;

  if (!force) {
    if (!missing && (await statusEntries(g, w.path, { pathspec: ALL_BUT_RUNTIME })).length > 0) {
      throw new TugError('WorktreeDirty', { worktree_path: w.path, branch: w.branch });
    }
    if (tip) {
      const base = cfg?.base_branch ?? ctx.config.run.base_branch;
      const upstreams = [base, ...(cfg ? [integrationBranch(slugOfPlan(cfg.plan_path))] : [])];
      const unmerged = await unmergedCommits(g, repo.mainRoot, tip, upstreams);
      if (unmerged.length > 0) {
        throw new TugError('WorktreeUnmerged', {
          worktree_path: w.path,
          branch: w.branch ?? tip,
          count: unmerged.length,
          commits: unmerged,
          upstreams,
        });
      }
    }
  }
  const claims = await state.claimsHeldBy(ctx, w.path);
  const live = claims.filter((c) => c.live);
  if (!force && live.length > 0) {
    // The commands themselves, not their shapes: `state release` needs the tree on disk, so a tree gone from
    // it has --force alone.
    const tree = shellArg(w.path);
    const releases = live.map(
      (c) => `tugcode state release ${shellArg(c.plan_path)} ${c.step_anchor} --worktree ${tree}`,
    );
    const hint = missing
      ? `tugcode worktree remove ${tree} --force (the tree is gone from disk; releases them)`
      : `${releases.join(' && ')}, then tugcode worktree remove ${tree} again; ` +
        `or tugcode worktree remove ${tree} --force (releases them)`;
    throw new TugError(
      'WorktreeHasClaims',
      { worktree_path: w.path, claims: live.map((c) => `${c.plan_path}:${c.step_anchor}`) },
      { hint },
    );
  }
  const released: RemoveData['released_claims'] = [];
  // Only a forced removal releases claims (as an admin action); expired claims of a plain removal stay
  // until someone takes them over (seed Q2).
  for (const c of force ? claims : []) {
    await state.adminRelease(ctx, c.plan_path, c.step_anchor, w.path);
    released.push({ plan_path: c.plan_path, step_anchor: c.step_anchor });
  }

  const args = ['worktree', 'remove', '--force'];
  if (force) args.push('--force'); // also a locked worktree
  await g.run([...args, w.path], repo.mainRoot);
  let branchDeleted = false;
  // Only the branch tugcode made for this worktree (it has a tugplan entry) is deleted, never another.
  if (w.branch && cfg && (await branchExists(g, repo.mainRoot, w.branch))) {
    const r = await g.tryRun(['branch', '-D', w.branch], repo.mainRoot);
    branchDeleted = r.status === 0;
  }
  return {
    removed: true,
    worktree_path: w.path,
    branch: w.branch,
    branch_deleted: branchDeleted,
    branch_tip: tip,
    released_claims: released,
    forced: force,
  };
}
