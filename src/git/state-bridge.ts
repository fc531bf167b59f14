/**
 * The git flows' one door into the state library (02-state.md §7): in-process calls, each opening a state
 * context for one operation and closing it. Git facts (trailer commits) are gathered before a state call,
 * so no git runs inside a write transaction. Read-only helpers open state.db read-only and never create or
 * migrate it.
 */
import type { TugError } from '../contract/errors.js';
import type { StateContext, OpenMode } from '../state/context.js';
import type { FlowCtx } from './flow-context.js';
import { gitRunner } from './exec.js';
import { readTrailerCommits } from './log.js';
import type { TrailerCommit } from './trailers.js';

export interface StepRef {
  planPath: string;
  step: string;
  worktree: string;
  attempt?: number | undefined;
}

export interface StepState {
  anchor: string;
  parent_anchor: string | null;
  title: string;
  status: string;
  commit_hash: string | null;
  claimed_by: string | null;
  lease_expires_at: string | null;
}

/** The state library's own type: one HeldClaim for every caller. */
import type { HeldClaim } from '../state/bridge.js';
export type { HeldClaim };

export interface PlanState {
  plan_path: string;
  status: 'active' | 'done' | 'archived';
  steps: StepState[];
}

async function withState<T>(
  ctx: FlowCtx,
  mode: OpenMode,
  command: string,
  workTree: string,
  fn: (s: StateContext) => Promise<T> | T,
): Promise<T> {
  // The process's store when the operations layer gave one (one connection per process); else its own.
  // The flows pass repo-relative plan paths, resolved against `workTree`; the caller's directory (maybe a
  // linked worktree holding its own copy of the plan) must not make them ambiguous.
  if (ctx.store && mode !== 'create')
    return ctx.store.withContext({ command, warnings: ctx.warnings, workTree, cwd: workTree }, mode, fn);
  const { openStateContext, closeStateContext } = await import('../state/context.js');
  const s = openStateContext({
    repoRoot: ctx.repo.mainRoot,
    workTree,
    clock: ctx.clock,
    config: ctx.config,
    warnings: ctx.warnings,
    command,
    mode,
    env: ctx.env,
    // The flows pass repo-relative plan paths, resolved against `workTree`; the caller's directory (maybe a
    // linked worktree holding its own copy of the plan) must not make them ambiguous.
    cwd: workTree,
  });
  try {
    return await fn(s);
  } finally {
    await closeStateContext(s);
  }
}

/**
 * `state init` of the plan from its committed blob (`git show <base>:<plan>`), then `state reconcile` over the trailer commits
 * reachable from `refs`; returns the plan's step lists.
 */
export async function initAndReconcile(
  ctx: FlowCtx,
  planPath: string,
  bytes: Uint8Array,
  refs: string[],
  command = 'worktree create',
): Promise<{ all_steps: string[]; ready_steps: string[]; state_initialized: boolean }> {
  const { commits, scanned } = await readTrailerCommits(
    gitRunner(ctx.env),
    ctx.repo.mainRoot,
    refs.map((r) => `refs/heads/${r}`),
  );
  return withState(ctx, 'read', command, ctx.repo.mainRoot, async (s) => {
    const { init } = await import('../state/init.js');
    await init(s, { plan: planPath, source: bytes });
    await reconcileCommits(s, planPath, commits, scanned);
    const { ready } = await import('../state/ready.js');
    const c = await ready(s, { plan: planPath });
    return { all_steps: c.all_steps, ready_steps: c.ready_steps, state_initialized: true };
  });
}

async function reconcileCommits(
  s: StateContext,
  planPath: string,
  commits: TrailerCommit[],
  scanned: number,
): Promise<void> {
  const { reconcile } = await import('../state/index.js');
  await reconcile(s, { plan: planPath, commits, scanned_commits: scanned });
}

/** The reason strict completion would refuse now (ownership, fencing, drift, open items, …), or null. */
export async function completionBlocker(ctx: FlowCtx, ref: StepRef): Promise<TugError | null> {
  return withState(ctx, 'write', 'commit', ref.worktree, async (s) => {
    const lib = await import('../state/index.js');
    return lib.completionBlocker(s, {
      plan: ref.planPath,
      step: ref.step,
      worktree: ref.worktree,
      attempt: ref.attempt,
    });
  });
}

export async function heartbeat(ctx: FlowCtx, ref: StepRef): Promise<void> {
  await withState(ctx, 'write', 'commit', ref.worktree, async (s) => {
    const { heartbeat: hb } = await import('../state/index.js');
    await hb(s, { plan: ref.planPath, step: ref.step, worktree: ref.worktree, attempt: ref.attempt });
  });
}

export async function complete(ctx: FlowCtx, ref: StepRef & { commit: string }): Promise<{ plan_completed: boolean }> {
  return withState(ctx, 'write', 'commit', ref.worktree, async (s) => {
    const { complete: done } = await import('../state/index.js');
    const r = await done(s, {
      plan: ref.planPath,
      step: ref.step,
      worktree: ref.worktree,
      attempt: ref.attempt,
      commit: ref.commit,
    });
    return { plan_completed: r.plan_completed };
  });
}

/**
 * `Tug-Refactor` trailer values of the step's applied refactor rows, in ordinal order (05-kernel.md §7.4).
 * Read-only; a repository without state.db, or a plan or step it does not know, has none.
 */
export async function refactorTrailers(ctx: FlowCtx, ref: StepRef): Promise<string[]> {
  return withState(ctx, 'read', 'commit', ref.worktree, async (s) => {
    const { refactorRows, refactorTrailers: trailers } = await import('../state/refactors.js');
    try {
      return trailers(await refactorRows(s, { plan: ref.planPath, step: ref.step, worktree: ref.worktree }));
    } catch (e) {
      const code = (e as { code?: string }).code;
      if (code === 'PlanNotInitialized' || code === 'PlanNotFound' || code === 'StepNotFound') return [];
      throw e;
    }
  });
}

/** Every plan in state.db that is not archived, with its steps (read-only; empty without a DB). */
export async function planRows(ctx: FlowCtx): Promise<PlanState[]> {
  return withState(ctx, 'read', 'status', ctx.repo.worktreeRoot, async (s) => {
    const { show } = await import('../state/index.js');
    return (await show(s, { items: 'none' })).plans.map((p) => ({
      plan_path: p.plan_path,
      status: p.status as PlanState['status'],
      steps: p.steps.map((r) => ({
        anchor: r.anchor,
        parent_anchor: r.parent_anchor,
        title: r.title,
        status: r.status,
        commit_hash: r.commit_hash,
        claimed_by: r.claimed_by,
        lease_expires_at: r.lease_expires_at,
      })),
    }));
  });
}

export async function knownPlans(ctx: FlowCtx): Promise<string[]> {
  return (await planRows(ctx)).map((p) => p.plan_path);
}

/** The plan's steps from state.db (read-only); null when the plan has no row. */
export async function planSteps(ctx: FlowCtx, planPath: string): Promise<StepState[] | null> {
  return (await planRows(ctx)).find((p) => p.plan_path === planPath)?.steps ?? null;
}

/** Top-level steps held (claimed or in progress, live or expired) by `worktree`, in every plan. Read-only. */
export async function claimsHeldBy(ctx: FlowCtx, worktree: string): Promise<HeldClaim[]> {
  return withState(ctx, 'read', 'worktree list', ctx.repo.worktreeRoot, async (s) => {
    const lib = await import('../state/index.js');
    return lib.claimsHeldBy(s, worktree);
  });
}

/** Release `worktree`'s claim as an admin action (`worktree remove --force`): actor `admin`, attempt discarded. */
export async function adminRelease(ctx: FlowCtx, planPath: string, step: string, worktree: string): Promise<boolean> {
  return withState(ctx, 'write', 'worktree remove', ctx.repo.mainRoot, async (s) => {
    const lib = await import('../state/index.js');
    return (await lib.adminRelease(s, { plan: planPath, step, worktree })).released;
  });
}
