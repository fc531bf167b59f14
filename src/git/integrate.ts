/**
 * Integration (06-run.md §1 item 4.7, 04-git.md §4 step 5): under the repo-wide integration lock, rebase a
 * worktree's new commits onto the plan's integration branch `tugplan/<slug>` and fast-forward that branch,
 * so parallel worktrees build on each other's completed steps. A conflict aborts the rebase and leaves
 * the worktree's branch exactly as it was.
 */
import { TugError } from '../contract/errors.js';
import type { GitRunner } from './exec.js';
import { setBranchPlan } from './branch-config.js';
import { branchTip, currentBranch, headCommit, isAncestor } from './refs.js';
import { gitWorktrees, type Repo } from './repo.js';

export { INTEGRATION_LOCK_FILE as INTEGRATION_LOCK } from '../util/integration-lock.js';

const OWNERSHIP = new Set(['NotOwner', 'LeaseExpired', 'AttemptMismatch', 'InvalidTransition', 'StepNotFound']);

/**
 * Run `fn` holding `<main root>/.tugtool/integration.lock` (proper-lockfile, stale detection). The lock
 * is shared with `tugcode run`. Waiting longer than `timeoutMs` is `Busy`.
 */
export async function withIntegrationLock<T>(
  mainRoot: string,
  fn: () => Promise<T> | T,
  timeoutMs = 60_000,
): Promise<T> {
  const { lockIntegrationFile } = await import('../util/integration-lock.js');
  const release = await lockIntegrationFile(mainRoot, timeoutMs);
  try {
    return await fn();
  } finally {
    await release();
  }
}

export interface IntegrateInput {
  git: GitRunner;
  repo: Repo;
  /** The worktree whose branch (checked out there) carries the new commits. */
  worktree: string;
  integrationBranch: string;
  /** Create the integration branch from this base when it is missing (`--integrate`). */
  createFrom?: { base: string; planPath: string } | undefined;
  /** Renew the claim (with `--attempt`) after taking the lock; throwing stops the integration. */
  heartbeat?: (() => Promise<void> | void) | undefined;
}

export type IntegrateResult =
  | { integrated: true; head: string; integration_tip: string; rebased: boolean }
  | { integrated: false; reason: 'integration_conflict'; error: TugError }
  | { integrated: false; reason: 'ownership'; error: TugError };

/** Rebase the worktree's branch onto the integration tip and fast-forward the integration branch. */
export async function integrate(input: IntegrateInput): Promise<IntegrateResult> {
  const { git: g, repo, worktree: W, integrationBranch: integ } = input;
  return withIntegrationLock(repo.mainRoot, async () => {
    if (input.heartbeat) {
      try {
        await input.heartbeat();
      } catch (e) {
        // The claim is gone (taken over, fenced): not ours to integrate. Anything else (Busy) is an error.
        if (e instanceof TugError && OWNERSHIP.has(e.code))
          return { integrated: false as const, reason: 'ownership' as const, error: e };
        throw e;
      }
    }
    let tip = await branchTip(g, repo.mainRoot, integ);
    if (tip === null) {
      if (!input.createFrom)
        throw new TugError('InvalidArgument', { reason: `integration branch ${integ} does not exist` });
      await g.run(['branch', '--no-track', integ, `refs/heads/${input.createFrom.base}`], repo.mainRoot);
      await setBranchPlan(g, repo.mainRoot, integ, input.createFrom.planPath, input.createFrom.base);
      tip = (await branchTip(g, repo.mainRoot, integ))!;
    }
    let rebased = false;
    if (!(await isAncestor(g, W, tip, 'HEAD'))) {
      const r = await g.tryRun(['rebase', '--quiet', '--no-autosquash', '--no-autostash', tip], W, {
        env: { GIT_EDITOR: 'true' },
      });
      if (r.status !== 0) {
        const files = (await g.tryRun(['diff', '--name-only', '--diff-filter=U'], W)).stdout
          .split('\n')
          .filter(Boolean);
        await g.tryRun(['rebase', '--abort'], W);
        const branch = await currentBranch(g, W);
        return {
          integrated: false as const,
          reason: 'integration_conflict' as const,
          error: new TugError('MergeConflict', {
            branch: branch ?? W,
            into: integ,
            files,
            reason:
              'rebase onto the integration branch conflicted; the rebase was aborted and the commit stays on the worktree branch',
          }),
        };
      }
      rebased = true;
    }
    const head = (await headCommit(g, W))!;
    await fastForward(g, repo, integ, tip, head);
    return { integrated: true as const, head, integration_tip: head, rebased };
  });
}

/** Move `branch` from `from` to `to` (a descendant), atomically; a checked-out branch is merged --ff-only there. */
async function fastForward(g: GitRunner, repo: Repo, branch: string, from: string, to: string): Promise<void> {
  if (from === to) return;
  const holder = (await gitWorktrees(g, repo)).find((w) => w.branch === branch && !w.prunable);
  if (holder) {
    await g.run(['merge', '--ff-only', '--quiet', to], holder.path);
    return;
  }
  await g.run(['update-ref', '-m', 'tugcode: integrate', `refs/heads/${branch}`, to, from], repo.mainRoot);
}
