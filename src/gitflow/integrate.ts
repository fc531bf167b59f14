/**
 * Integration (docs/run.md §1 item 4.7, docs/git.md §4 step 5): under the repo-wide integration lock, rebase a
 * worktree's new commits onto the plan's integration branch `tugplan/<slug>` and fast-forward that branch,
 * so parallel worktrees build on each other's completed steps. A conflict aborts the rebase and leaves
 * the worktree's branch exactly as it was — or, when the caller resolves conflicts (`keepConflict`,
 * docs/run.md §1.9), leaves the rebase stopped on it, outside the lock (conflict.ts continues it).
 */
import { isClaimLost, TugError } from '../contract/errors.js';
import type { GitRunner } from '../git/exec.js';
import { setBranchPlan } from '../git/branch-config.js';
import { isAncestorFromFiles } from '../git/ancestry.js';
import { branchCheckedOut, headTip, refTip } from '../git/ref-files.js';
import { branchTip, currentBranch, isAncestor } from '../git/refs.js';
import { gitWorktrees, type Repo } from '../git/repo.js';
import { timed, type TraceFn } from '../git/trace.js';
import { rebaseInProgress, rebasingBranchOf, unmergedFiles } from './conflict.js';

import { join } from 'node:path';
import { INTEGRATION_LOCK } from '../contract/layout.js';

/**
 * Callers of this process waiting for the lock, per lock file: each waits for the one before it, so only
 * the head of the line polls the file lock. Without it, a driver's workers poll the same file (5 ms, then
 * ×1.5 up to 100 ms) and one integration waits up to a poll interval after the other's release.
 */
const lines = new Map<string, Promise<void>>();

function busy(lockfilePath: string, timeoutMs: number, reason: string): TugError {
  return new TugError(
    'Busy',
    { db_path: lockfilePath, timeout_ms: timeoutMs, reason },
    { hint: 'another tugcode commit or run is integrating; retry in a moment' },
  );
}

/** Wait for `p`, at most `ms`: false when the time ran out first. */
async function within(p: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((res) => (timer = setTimeout(() => res(false), ms)));
  try {
    return await Promise.race([p.then(() => true as const), late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The file lock this process holds between two of its own integrations: the one finishing hands it to the
 * next in its line as it is, instead of releasing it and the next taking it again (that took 10–15 ms of
 * callbacks between two integrations of a busy driver).
 */
const handedOn = new Map<string, () => Promise<void>>();

/**
 * Run `fn` holding `<main root>/.tugtool/integration.lock` (src/util/integration-lock.ts). The lock
 * is shared with `tugcode run`. Waiting longer than `timeoutMs` is `Busy`. Callers in one process queue
 * up first (in order) and the file lock settles it between processes; while callers of this process wait
 * in line, the lock goes from one to the next without being released in between.
 */
export async function withIntegrationLock<T>(
  mainRoot: string,
  fn: () => Promise<T> | T,
  timeoutMs = 60_000,
): Promise<T> {
  const lockfilePath = join(mainRoot, INTEGRATION_LOCK);
  const before = lines.get(lockfilePath) ?? Promise.resolve();
  let leave!: () => void;
  const mine = before.then(() => new Promise<void>((res) => (leave = res)));
  lines.set(lockfilePath, mine);
  const started = Date.now();
  /** At the end of a turn: the lock to the next of this process in line, else released. */
  const passOn = async (release: (() => Promise<void>) | undefined) => {
    if (!release) return;
    if (lines.get(lockfilePath) !== mine) handedOn.set(lockfilePath, release);
    else await release();
  };
  const takeHandedOn = () => {
    const release = handedOn.get(lockfilePath);
    handedOn.delete(lockfilePath);
    return release;
  };
  let turn = false;
  try {
    if (!(await within(before, timeoutMs)))
      throw busy(lockfilePath, timeoutMs, 'timed out behind another integration of this process');
    turn = true;
    const release = takeHandedOn() ?? (await takeFileLock(mainRoot, Math.max(1, timeoutMs - (Date.now() - started))));
    try {
      return await fn();
    } finally {
      await passOn(release);
    }
  } finally {
    // Once `before` settled `leave` is set; a caller that timed out leaves its place when `before` does,
    // passing on the lock handed to it.
    if (turn) leave();
    else void before.then(async () => (await passOn(takeHandedOn()), leave()));
    if (lines.get(lockfilePath) === mine)
      void mine.then(() => lines.get(lockfilePath) === mine && lines.delete(lockfilePath));
  }
}

async function takeFileLock(mainRoot: string, timeoutMs: number): Promise<() => Promise<void>> {
  const { lockIntegrationFile } = await import('../util/integration-lock.js');
  return lockIntegrationFile(mainRoot, timeoutMs);
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
  /** The opt-in timing trace of the integration's parts (the driver's). */
  trace?: TraceFn | undefined;
  /**
   * false: the caller knows no notes rewrite is configured (notes.rewriteRef, GIT_NOTES_REWRITE_REF), so the
   * rebase skips the `git notes copy` process it would start for nothing. Default: git decides.
   */
  notesRewrite?: boolean | undefined;
  /** Skip the pre-rebase hook (`run.no_verify`, docs/run.md §2). */
  noVerify?: boolean | undefined;
  /**
   * Runs the rebase (and so its hooks) instead of `git`: the driver's bounded runner (bounded.ts), so a hook
   * that hangs counts against the step's time. When it fails (a timeout), the rebase is aborted first.
   */
  rebaseGit?: GitRunner | undefined;
  /**
   * A conflict leaves the rebase stopped in the worktree (the result's `stop`) instead of aborting it, for a
   * resolver to merge (docs/run.md §1.9). The lock is released either way: a resolution takes minutes.
   */
  keepConflict?: boolean | undefined;
  /**
   * Under the lock, the tip found before anything moves: throwing refuses the integration (the run's check
   * that the branch is where it left it, docs/agents.md §1.6).
   */
  expectTip?: ((tip: string) => void | Promise<void>) | undefined;
  /** Under the lock, the tip the branch was just moved to (the run records it). */
  moved?: ((head: string) => void) | undefined;
}

/** A rebase left stopped on a conflict (`keepConflict`): what it stopped on. */
export interface RebaseStop {
  /** The tip the commits are being rebased onto. */
  onto: string;
  /** The unmerged paths. */
  files: string[];
  /** The worktree's HEAD before the rebase (its branch's commits; the rebase's `orig-head`). */
  head: string;
}

export type IntegrateResult =
  | { integrated: true; head: string; integration_tip: string; rebased: boolean }
  | { integrated: false; reason: 'integration_conflict'; error: TugError; stop?: RebaseStop }
  | { integrated: false; reason: 'ownership'; error: TugError };

/**
 * `--integrate` whose commit cannot be integrated yet (a completion blocker): the integration branch is
 * still made from the base, under the integration lock, so the plan has one from now on and a completion
 * by hand with a commit it lacks is refused (docs/git.md). Nothing when it exists already.
 */
export async function createIntegrationBranch(
  g: GitRunner,
  repo: Repo,
  integ: string,
  from: { base: string; planPath: string },
): Promise<void> {
  await withIntegrationLock(repo.mainRoot, async () => {
    if ((await refTip(g, repo.commonDir, repo.mainRoot, integ)) !== null) return;
    await g.run(['branch', '--no-track', integ, `refs/heads/${from.base}`], repo.mainRoot);
    await setBranchPlan(g, repo.mainRoot, integ, from.planPath, from.base);
  });
}

/** Rebase the worktree's branch onto the integration tip and fast-forward the integration branch. */
export async function integrate(input: IntegrateInput): Promise<IntegrateResult> {
  const { git: g, repo, worktree: W, integrationBranch: integ, trace: tr } = input;
  const waiting = Date.now();
  return withIntegrationLock(repo.mainRoot, async () => {
    tr?.('integrate.lock', waiting);
    if (input.heartbeat) {
      try {
        await timed(tr, 'integrate.heartbeat', async () => input.heartbeat!());
      } catch (e) {
        // The claim is gone (taken over, fenced): not ours to integrate. Anything else (Busy) is an error.
        if (isClaimLost(e)) return { integrated: false as const, reason: 'ownership' as const, error: e };
        throw e;
      }
    }
    let tip = await timed(tr, 'integrate.tip', () => refTip(g, repo.commonDir, repo.mainRoot, integ));
    if (tip === null) {
      if (!input.createFrom)
        throw new TugError('InvalidArgument', { reason: `integration branch ${integ} does not exist` });
      await g.run(['branch', '--no-track', integ, `refs/heads/${input.createFrom.base}`], repo.mainRoot);
      await setBranchPlan(g, repo.mainRoot, integ, input.createFrom.planPath, input.createFrom.base);
      tip = (await branchTip(g, repo.mainRoot, integ))!;
    }
    if (input.expectTip) await input.expectTip(tip);
    let rebased = false;
    if (!(await timed(tr, 'integrate.ancestor', () => containsTip(g, repo, W, tip)))) {
      const rg = input.rebaseGit ?? g;
      const r = await timed(tr, 'integrate.rebase', () =>
        rg.tryRun(
          [
            ...(input.notesRewrite === false ? ['-c', 'notes.rewrite.rebase=false'] : []),
            'rebase',
            '--quiet',
            '--no-autosquash',
            '--no-autostash',
            ...(input.noVerify ? ['--no-verify'] : []),
            tip,
          ],
          W,
          {
            env: { GIT_EDITOR: 'true' },
          },
        ),
      ).catch(async (e: unknown) => {
        // Stopped (the step's time ran out in a hook): leave the worktree as it was, then report it.
        await g.tryRun(['rebase', '--abort'], W);
        throw e;
      });
      if (r.status !== 0) {
        const files = await unmergedFiles(g, W);
        // Where the branch was before the rebase: git's own record of it (no git call before the rebase).
        const before = input.keepConflict ? (rebaseInProgress(W)?.origHead ?? null) : null;
        const kept = before !== null && files.length > 0;
        if (!kept) await g.tryRun(['rebase', '--abort'], W);
        const branch = kept ? rebasingBranchOf(W) : await currentBranch(g, W);
        return {
          integrated: false as const,
          reason: 'integration_conflict' as const,
          error: new TugError('MergeConflict', {
            branch: branch ?? W,
            into: integ,
            files,
            rebase: kept ? 'stopped' : 'aborted',
            reason: kept
              ? 'rebase onto the integration branch conflicted; the rebase is stopped there for the resolver'
              : 'rebase onto the integration branch conflicted; the rebase was aborted and the commit stays on the worktree branch',
          }),
          ...(kept ? { stop: { onto: tip, files, head: before } } : {}),
        };
      }
      rebased = true;
    }
    const head = (await timed(tr, 'integrate.head', () => headTip(g, W)))!;
    await timed(tr, 'integrate.ff', () => fastForward(g, repo, integ, tip, head));
    input.moved?.(head);
    return { integrated: true as const, head, integration_tip: head, rebased };
  });
}

/** Whether `tip` is already in the history of the worktree's HEAD (no rebase needed). */
async function containsTip(g: GitRunner, repo: Repo, W: string, tip: string): Promise<boolean> {
  const head = await headTip(g, W);
  const known = head ? isAncestorFromFiles(repo.commonDir, tip, head) : null;
  return known ?? isAncestor(g, W, tip, 'HEAD');
}

/** Move `branch` from `from` to `to` (a descendant), atomically; a checked-out branch is merged --ff-only there. */
async function fastForward(g: GitRunner, repo: Repo, branch: string, from: string, to: string): Promise<void> {
  if (from === to) return;
  // Nobody has it checked out (read from the HEAD files): no `git worktree list` needed.
  const held = branchCheckedOut(repo.commonDir, branch);
  const holder =
    held === false ? undefined : (await gitWorktrees(g, repo)).find((w) => w.branch === branch && !w.prunable);
  if (holder) {
    await g.run(['merge', '--ff-only', '--quiet', to], holder.path);
    return;
  }
  await g.run(['update-ref', '-m', 'tugcode: integrate', `refs/heads/${branch}`, to, from], repo.mainRoot);
}

/** What `catchUpWithBase` did to the integration branch. */
export type CatchUp = 'none' | 'fast_forward' | 'merge';

/** The commit the integration branch moves to so as to take in the base, and how. */
export interface CatchUpMove {
  how: 'fast_forward' | 'merge';
  to: string;
}

/**
 * The rule of the catch-up with the base (docs/run.md §1.1 item 2), for the clone's integration branch and
 * for the remote one alike: the integration branch at `tip` takes in the base (`refs/heads/<base>` of this
 * clone) when the plan there differs from the tip's: the plan was edited and committed on the base after
 * the branch was made, and the workers' trees (reset to the integration tip) would hold the plan the state
 * was initialised from. A tip behind the base moves to it (a fast-forward); one with step commits of its
 * own moves to a merge commit of the base, built without a work tree (merge-tree + commit-tree), no hooks,
 * like `merge` (docs/git.md §5.2). Returns that move, or null when there is nothing to take in. Moves no
 * ref: the caller fast-forwards the branch or pushes. A conflict is MergeConflict, to merge by hand; a
 * plan whose structure the integration branch itself changed (its copy still differs after the move) is
 * PlanDrift, since claims in its trees would refuse it. `remote`: the branch is that remote's (the hints
 * then bring its tip into the clone's branch first). Call it under the integration lock.
 */
export async function catchUpCommit(
  g: GitRunner,
  repo: Repo,
  o: { tip: string; integrationBranch: string; base: string; planPath: string; remote?: string | undefined },
): Promise<CatchUpMove | null> {
  const root = repo.mainRoot;
  const { tip, integrationBranch: integ } = o;
  const blob = async (ref: string) =>
    (await g.tryRun(['rev-parse', '--verify', '--quiet', `${ref}:${o.planPath}`], root)).stdout.trim();
  const base = await refTip(g, repo.commonDir, root, o.base);
  if (base === null || tip === base) return null;
  const want = await blob(base);
  if ((await blob(tip)) === want) return null;
  const into = o.remote ? `${o.remote}/${integ}` : integ;
  // On a remote the hints first bring the clone's branch to its tip; the next run publishes what they commit.
  const fix = o.remote ? `git switch ${integ} && git merge --ff-only ${into} && ` : `git switch ${integ} && `;
  const checked = async (move: CatchUpMove | null): Promise<CatchUpMove | null> => {
    const now = await blob(move?.to ?? tip);
    if (now === want || (await sameStructure(g, root, now, want))) return move;
    // The hint is the catalogue's (src/contract/errors.ts): these details say which branches, and on a
    // remote ensureRemoteBranch adds which side holds the newer plan.
    throw new TugError('PlanDrift', {
      plan_path: o.planPath,
      summary: `${into} holds another copy of the plan than ${o.base}`,
      base_branch: o.base,
      integration_branch: integ,
      ...(o.remote ? { remote: o.remote } : {}),
      integration_tip: move?.to ?? tip,
    });
  };
  if (await isAncestor(g, root, base, tip)) return checked(null); // nothing of the base's to bring in
  if (await isAncestor(g, root, tip, base)) return checked({ how: 'fast_forward', to: base });
  const { mergeTree } = await import('../git/merge-tree.js');
  const merged = await mergeTree(g, repo, tip, base);
  if (!merged.clean)
    throw new TugError(
      'MergeConflict',
      {
        branch: o.base,
        into,
        files: merged.files,
        reason: `the plan changed on ${o.base}; bringing ${o.base} into ${into} conflicts`,
      },
      { hint: `${fix}git merge ${o.base}, then run again` },
    );
  const message = `Merge ${o.base} into ${integ}\n\nThe plan ${o.planPath} changed on ${o.base}.\n`;
  const commit = (
    await g.run(['commit-tree', merged.tree, '-p', tip, '-p', base, '-F', '-'], root, { input: message })
  ).trim();
  return checked({ how: 'merge', to: commit });
}

/**
 * The clone's integration branch brought up to the base (catchUpCommit), under the integration lock: the
 * branch is fast-forwarded to the move. An error changes nothing.
 */
export async function catchUpWithBase(
  g: GitRunner,
  repo: Repo,
  o: { integrationBranch: string; base: string; planPath: string },
): Promise<CatchUp> {
  const root = repo.mainRoot;
  return withIntegrationLock(root, async () => {
    const tip = await refTip(g, repo.commonDir, root, o.integrationBranch);
    if (tip === null) return 'none';
    const move = await catchUpCommit(g, repo, { ...o, tip });
    if (!move) return 'none';
    await fastForward(g, repo, o.integrationBranch, tip, move.to);
    return move.how;
  });
}

/** Whether two plan blobs (ids; '' for none) have the same structure. */
async function sameStructure(g: GitRunner, root: string, a: string, b: string): Promise<boolean> {
  if (a === '' || b === '') return false;
  const { parsePlan } = await import('../plan/parse.js');
  const [x, y] = await Promise.all([g.bytes(['cat-file', 'blob', a], root), g.bytes(['cat-file', 'blob', b], root)]);
  return parsePlan(x).structure_hash === parsePlan(y).structure_hash;
}
