/**
 * The git flows' one door into the state library (02-state.md §7): in-process calls, each opening a state
 * context for one operation and closing it. Git facts (trailer commits) are gathered before a state call,
 * so no git runs inside a write transaction. Read-only helpers open state.db read-only and never create or
 * migrate it.
 */
import { TugError } from '../contract/errors.js';
import type { StateContext, OpenMode } from '../state/context.js';
import type { FlowCtx } from './flow-context.js';
import { scanTrailerCommits } from './trailer-scan.js';

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

export interface HeldClaim {
  plan_path: string;
  step_anchor: string;
  status: 'claimed' | 'in_progress';
  lease_expires_at: string | null;
  live: boolean;
}

export interface PlanState {
  plan_path: string;
  status: 'active' | 'done' | 'archived';
  steps: StepState[];
}

async function withState<T>(ctx: FlowCtx, mode: OpenMode, command: string, workTree: string, fn: (s: StateContext) => Promise<T> | T): Promise<T> {
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
    cwd: ctx.repo.cwd,
  });
  try {
    return await fn(s);
  } finally {
    closeStateContext(s);
  }
}

/**
 * `state init` of the plan as committed (the caller checked that the main checkout's file equals the
 * committed blob, so it is read from the main root), then `state reconcile` over the trailer commits
 * reachable from `refs`; returns the plan's step lists.
 */
export async function initAndReconcile(
  ctx: FlowCtx,
  planPath: string,
  _bytes: Uint8Array,
  refs: string[],
  command = 'worktree create',
): Promise<{ all_steps: string[]; ready_steps: string[]; state_initialized: boolean }> {
  const commits = scanTrailerCommits(ctx.repo.mainRoot, refs.map((r) => `refs/heads/${r}`));
  return withState(ctx, 'read', command, ctx.repo.mainRoot, async (s) => {
    const { init } = await import('../state/init.js');
    await init(s, { plan: planPath });
    await reconcileCommits(s, planPath, commits);
    const { ready } = await import('../state/ready.js');
    const c = ready(s, { plan: planPath });
    return { all_steps: c.all_steps, ready_steps: c.ready_steps, state_initialized: true };
  });
}

async function reconcileCommits(s: StateContext, planPath: string, commits: ReturnType<typeof scanTrailerCommits>): Promise<void> {
  const spec = '../state/index.js';
  const lib = (await import(spec).catch(() => null)) as { reconcile?: (s: StateContext, i: unknown) => unknown } | null;
  if (!lib?.reconcile) return;
  await lib.reconcile(s, { plan: planPath, commits });
}

/** The reason strict completion would refuse now (ownership, fencing, open items, substeps, refactors), or null. */
export async function completionBlocker(ctx: FlowCtx, ref: StepRef): Promise<TugError | null> {
  try {
    await withState(ctx, 'write', 'commit', ref.worktree, async (s) => {
      const { ownerPlan, findStep, checkOwner, invalidTransition } = await import('../state/owner.js');
      const { openItemsOfStep } = await import('../state/queries/items.js');
      const { openRefactorsOfStep } = await import('../state/queries/refactors.js');
      const { subtree } = await import('../state/queries/steps.js');
      const { isHeld } = await import('../state/status.js');
      const { ref: pref, store } = ownerPlan(s, { plan: ref.planPath, worktree: ref.worktree });
      const db = store.db;
      const st = findStep(db, pref.plan_path, ref.step);
      if (st.step.status === 'completed') return;
      checkOwner(db, pref.plan_path, st, ref.worktree, ref.attempt);
      if (!isHeld(st.top.status)) throw invalidTransition(pref.plan_path, st.top, `the top-level step ${st.top.anchor} is ${st.top.status}`);
      const open_items = openItemsOfStep(db, pref.plan_path, ref.step).map((i) => ({ kind: i.kind, ordinal: i.ordinal, text: i.text, status: i.status }));
      const prefix = new Set<string>([ref.step]);
      const incomplete_substeps = subtree(db, pref.plan_path, st.top.anchor)
        .filter((r) => {
          if (r.parent_anchor !== null && prefix.has(r.parent_anchor)) {
            prefix.add(r.anchor);
            return r.status !== 'completed';
          }
          return false;
        })
        .map((r) => r.anchor);
      const open_refactors = openRefactorsOfStep(db, pref.plan_path, ref.step).map((r) => ({ ordinal: r.ordinal, op_text: r.op_text, status: r.status }));
      const details = { plan_path: pref.plan_path, step_anchor: ref.step, open_items, incomplete_substeps, open_refactors };
      if (open_items.length > 0) throw new TugError('ChecklistIncomplete', details);
      if (incomplete_substeps.length > 0) throw new TugError('SubstepsIncomplete', details);
      if (open_refactors.length > 0) throw new TugError('RefactorsIncomplete', details);
    });
    return null;
  } catch (e) {
    if (e instanceof TugError) return e;
    throw e;
  }
}

export async function heartbeat(ctx: FlowCtx, ref: StepRef): Promise<void> {
  await withState(ctx, 'write', 'commit', ref.worktree, async (s) => {
    const { heartbeat: hb } = await import('../state/heartbeat.js');
    hb(s, { plan: ref.planPath, step: ref.step, worktree: ref.worktree, attempt: ref.attempt });
  });
}

export async function complete(ctx: FlowCtx, ref: StepRef & { commit: string }): Promise<{ plan_completed: boolean }> {
  return withState(ctx, 'write', 'commit', ref.worktree, async (s) => {
    const { complete: done } = await import('../state/complete.js');
    const r = await done(s, { plan: ref.planPath, step: ref.step, worktree: ref.worktree, attempt: ref.attempt, commit: ref.commit });
    return { plan_completed: r.plan_completed };
  });
}

/** Every plan in state.db with its steps (read-only; empty without a DB). */
export async function planRows(ctx: FlowCtx): Promise<PlanState[]> {
  return withState(ctx, 'read', 'status', ctx.repo.worktreeRoot, async (s) => {
    if (!s.store) return [];
    const { listPlans } = await import('../state/queries/plans.js');
    const { stepsOfPlan } = await import('../state/queries/steps.js');
    const db = s.store.db;
    return listPlans(db).map((p) => ({
      plan_path: p.plan_path,
      status: p.status,
      steps: stepsOfPlan(db, p.plan_path).map(toStepState),
    }));
  });
}

function toStepState(r: { anchor: string; parent_anchor: string | null; title: string; status: string; commit_hash: string | null; claimed_by: string | null; lease_expires_at: string | null }): StepState {
  return { anchor: r.anchor, parent_anchor: r.parent_anchor, title: r.title, status: r.status, commit_hash: r.commit_hash, claimed_by: r.claimed_by, lease_expires_at: r.lease_expires_at };
}

export async function knownPlans(ctx: FlowCtx): Promise<string[]> {
  return (await planRows(ctx)).map((p) => p.plan_path);
}

/** The plan's steps from state.db (read-only); null when the plan has no row. */
export async function planSteps(ctx: FlowCtx, planPath: string): Promise<StepState[] | null> {
  return (await planRows(ctx)).find((p) => p.plan_path === planPath)?.steps ?? null;
}

/** Top-level steps held (claimed or in progress) by `worktree`, in every plan. Read-only. */
export async function claimsHeldBy(ctx: FlowCtx, worktree: string): Promise<HeldClaim[]> {
  const { isExpired } = await import('../state/status.js');
  const now = ctx.clock.now();
  const out: HeldClaim[] = [];
  for (const p of await planRows(ctx)) {
    for (const s of p.steps) {
      if (s.parent_anchor !== null || s.claimed_by !== worktree) continue;
      if (s.status !== 'claimed' && s.status !== 'in_progress') continue;
      out.push({ plan_path: p.plan_path, step_anchor: s.anchor, status: s.status, lease_expires_at: s.lease_expires_at, live: !isExpired(s.lease_expires_at, now) });
    }
  }
  return out;
}

/** Release a claim held by `worktree` (`worktree remove --force`): step back to pending, attempt discarded. */
export async function adminRelease(ctx: FlowCtx, planPath: string, step: string, worktree: string): Promise<void> {
  await withState(ctx, 'write', 'worktree remove', ctx.repo.mainRoot, async (s) => {
    const { release } = await import('../state/release.js');
    // The worktree is being removed: its plan file may be gone, so resolve against the main root.
    release({ ...s, workTree: ctx.repo.mainRoot }, { plan: planPath, step, worktree });
  });
}
