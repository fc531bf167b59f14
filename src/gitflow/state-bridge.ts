/**
 * The git flows' calls into the state library (docs/state.md §7), each a named operation of the process's
 * store (the operations layer, the driver or a test passes it in the FlowCtx: SQLite or PostgreSQL,
 * owners qualified by the store). Git facts (trailer commits) are gathered before a state call, so no git
 * runs inside a write transaction. Read-only helpers open state.db read-only and never create or migrate it.
 */
import { TugError } from '../contract/errors.js';
import { stateCall, type StateCall } from '../state/store.js';
import type { FlowCtx } from './flow-context.js';
import { gitRunner } from '../git/exec.js';
import { readTrailerCommits } from '../git/log.js';

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
  /** The commit the review gate kept (needs_human, or pending after `decide --approve`; docs/state.md §3.11). */
  review_commit: string | null;
  human_decision: 'approved' | null;
  /** A person's `decide --revise` notes for the step's next attempt; null when none. */
  human_notes: string | null;
}

/** The state library's own type: one HeldClaim for every caller. */
import type { HeldClaim } from '../state/bridge.js';
export type { HeldClaim };

export interface PlanState {
  plan_path: string;
  status: 'active' | 'done' | 'archived';
  steps: StepState[];
  /** What the plan's agent runs used (docs/state.md §2); null when none reported. */
  usage: import('../contract/usage.js').UsageTotals | null;
  /** The flags of the plan's last run that ended, and when (docs/state.md §2); null when none is recorded. */
  last_run: import('../state/last-run.js').LastRun | null;
}

/**
 * A state call of the flow's `command` in `workTree`. The flows pass repo-relative plan paths, resolved
 * against `workTree`: the caller's directory (maybe a linked worktree holding its own copy of the plan)
 * must not make them ambiguous.
 */
function callIn(ctx: FlowCtx, command: string, workTree: string): StateCall {
  return stateCall({ command, warnings: ctx.warnings }, workTree);
}

/**
 * `state init` of the plan from its committed blob (`git show <base>:<plan>`), then `state reconcile` over the trailer commits
 * reachable from `refs`; returns the plan's step lists. With `onDrift`, a changed structure is taken over as
 * `state init --force` would (no claims released) instead of PlanDrift, and `onDrift` gets the drift's summary.
 */
export async function initAndReconcile(
  ctx: FlowCtx,
  planPath: string,
  bytes: Uint8Array,
  refs: string[],
  command = 'worktree create',
  o: { onDrift?: (summary: string) => void } = {},
): Promise<{ all_steps: string[]; ready_steps: string[]; state_initialized: boolean }> {
  const { commits, scanned } = await readTrailerCommits(
    gitRunner(ctx.env),
    ctx.repo.mainRoot,
    refs.map((r) => `refs/heads/${r}`),
  );
  const root = ctx.repo.mainRoot;
  try {
    await ctx.store.init(callIn(ctx, command, root), { plan: planPath, source: bytes });
  } catch (e) {
    if (!o.onDrift || !(e instanceof TugError) || e.code !== 'PlanDrift') throw e;
    await ctx.store.init(callIn(ctx, command, root), { plan: planPath, source: bytes, force: true });
    o.onDrift(String(e.details.summary ?? 'the structure changed'));
  }
  await ctx.store.reconcile(callIn(ctx, command, root), { plan: planPath, commits, scanned_commits: scanned });
  await dropStaleReviewRefs(ctx, planPath, command);
  const c = await ctx.store.ready(callIn(ctx, command, root), { plan: planPath });
  return { all_steps: c.all_steps, ready_steps: c.ready_steps, state_initialized: true };
}

/**
 * The plan's review refs whose step keeps no commit any more (a forced re-init, or a completion reconcile
 * found, cleared it): nothing would integrate or delete them after this (docs/run.md §6.3). Best effort.
 */
export async function dropStaleReviewRefs(ctx: FlowCtx, planPath: string, command: string): Promise<void> {
  const [{ reviewRefName, staleReviewRefs }, { slugOfPlanPath }] = await Promise.all([
    import('../contract/layout.js'),
    import('../plan/resolve.js'),
  ]);
  const slug = slugOfPlanPath(planPath);
  if (!slug) return;
  const g = gitRunner(ctx.env);
  const root = ctx.repo.mainRoot;
  const prefix = reviewRefName(slug, '');
  // From git's ref files when they can say (git/ref-files.ts): one git process fewer at each run's start.
  const all = await (await import('../git/ref-files.js')).allRefs(ctx.repo.commonDir);
  const listed = all ? null : await g.tryRun(['for-each-ref', '--format=%(refname)', prefix], root);
  const refs = all
    ? [...all.keys()].filter((r) => r.startsWith(prefix)).sort()
    : listed!.status === 0
      ? listed!.stdout.split('\n').filter(Boolean)
      : [];
  if (refs.length === 0) return; // the usual case: no state read
  const shown = (await ctx.store.show(callIn(ctx, command, root), { plan: planPath, items: 'none' })).plans[0];
  if (!shown) return;
  for (const ref of staleReviewRefs(slug, refs, shown.steps)) await g.tryRun(['update-ref', '-d', ref], root);
}

/** The reason strict completion would refuse now (ownership, fencing, drift, open items, …), or null. */
export async function completionBlocker(ctx: FlowCtx, ref: StepRef): Promise<TugError | null> {
  return ctx.store.completionBlocker(callIn(ctx, 'commit', ref.worktree), {
    plan: ref.planPath,
    step: ref.step,
    worktree: ref.worktree,
    attempt: ref.attempt,
  });
}

export async function heartbeat(ctx: FlowCtx, ref: StepRef): Promise<void> {
  await ctx.store.heartbeat(callIn(ctx, 'commit', ref.worktree), {
    plan: ref.planPath,
    step: ref.step,
    worktree: ref.worktree,
    attempt: ref.attempt,
  });
}

export async function complete(ctx: FlowCtx, ref: StepRef & { commit: string }): Promise<{ plan_completed: boolean }> {
  const r = await ctx.store.complete(callIn(ctx, 'commit', ref.worktree), {
    plan: ref.planPath,
    step: ref.step,
    worktree: ref.worktree,
    attempt: ref.attempt,
    commit: ref.commit,
  });
  return { plan_completed: r.plan_completed };
}

/**
 * `Tug-Refactor` trailer values of the step's applied refactor rows, in ordinal order (docs/kernel.md §7.4).
 * Read-only; a repository without state.db, or a plan or step it does not know, has none.
 */
export async function refactorTrailers(ctx: FlowCtx, ref: StepRef): Promise<string[]> {
  return noneWhenUnknown(
    ctx.store.refactorTrailers(callIn(ctx, 'commit', ref.worktree), {
      plan: ref.planPath,
      step: ref.step,
      worktree: ref.worktree,
    }),
  );
}

/** A read about a step: none when state.db, the plan or the step is not known. */
async function noneWhenUnknown<T>(read: Promise<T[]>): Promise<T[]> {
  try {
    return await read;
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === 'PlanNotInitialized' || code === 'PlanNotFound' || code === 'StepNotFound') return [];
    throw e;
  }
}

/**
 * The step's refactor rows neither applied nor skipped (read-only): a step commit made now would lack them
 * (docs/git.md §4). A repository without state.db, or a plan or step it does not know, has none.
 */
export async function openRefactors(
  ctx: FlowCtx,
  ref: StepRef,
): Promise<{ ordinal: number; op_text: string; status: string }[]> {
  return noneWhenUnknown(
    ctx.store.openRefactors(callIn(ctx, 'commit', ref.worktree), {
      plan: ref.planPath,
      step: ref.step,
      worktree: ref.worktree,
    }),
  );
}

/** Every plan in state.db that is not archived, with its steps (read-only; empty without a DB). */
export async function planRows(ctx: FlowCtx): Promise<PlanState[]> {
  const shown = await ctx.store.show(callIn(ctx, 'status', ctx.repo.worktreeRoot), { items: 'none' });
  return shown.plans.map((p) => ({
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
      review_commit: r.review_commit,
      human_decision: r.human_decision,
      human_notes: r.human_notes,
    })),
    usage: p.usage,
    last_run: p.last_run,
  }));
}

/**
 * The structure hash `state init` stored of the plan (docs/state.md §3.10), read-only: status compares it
 * with the plan file's to say the next run re-initialises the state (docs/git.md §6).
 */
export async function storedStructureHash(ctx: FlowCtx, planPath: string): Promise<string> {
  const stored = await ctx.store.storedPlan(callIn(ctx, 'status', ctx.repo.worktreeRoot), { plan: planPath });
  return stored.structure_hash;
}

export async function knownPlans(ctx: FlowCtx): Promise<string[]> {
  return (await planRows(ctx)).map((p) => p.plan_path);
}

/** The plan's steps from state.db (read-only); null when the plan has no row. */
export async function planSteps(ctx: FlowCtx, planPath: string): Promise<StepState[] | null> {
  return (await planRows(ctx)).find((p) => p.plan_path === planPath)?.steps ?? null;
}

/**
 * PlanNotInitialized as the store words it (on PostgreSQL it names the schema and server, not state.db):
 * the store's own refusal of a read of the plan; the plain error if the plan turned up meanwhile.
 */
export async function notInitialized(ctx: FlowCtx, command: string, planPath: string): Promise<TugError> {
  try {
    await ctx.store.ready(callIn(ctx, command, ctx.repo.worktreeRoot), { plan: planPath });
  } catch (e) {
    if (e instanceof TugError && e.code === 'PlanNotInitialized') return e;
  }
  return new TugError('PlanNotInitialized', { plan_path: planPath });
}

/** Top-level steps held (claimed or in progress, live or expired) by `worktree`, in every plan. Read-only. */
export async function claimsHeldBy(ctx: FlowCtx, worktree: string): Promise<HeldClaim[]> {
  return ctx.store.claimsHeldBy(callIn(ctx, 'worktree list', ctx.repo.worktreeRoot), { worktree });
}

/** Release `worktree`'s claim as an admin action (`worktree remove --force`): actor `admin`, attempt discarded. */
export async function adminRelease(ctx: FlowCtx, planPath: string, step: string, worktree: string): Promise<boolean> {
  const r = await ctx.store.adminRelease(callIn(ctx, 'worktree remove', ctx.repo.mainRoot), {
    plan: planPath,
    step,
    worktree,
  });
  return r.released;
}

/**
 * `tugcode commit` integrates into this clone's own branch (docs/run.md §1.11): `check` refuses
 * (IntegrationTargetMismatch) when the plan integrates elsewhere, before anything is written; `record` notes
 * the clone as the plan's target at its first integration (refusing when another host got there first).
 */
export async function localTarget(
  ctx: FlowCtx,
  ref: { planPath: string; worktree: string; integ: string },
  mode: 'check' | 'record',
): Promise<void> {
  const call = callIn(ctx, 'commit', ref.worktree);
  const input = {
    plan: ref.planPath,
    remote: null,
    worktree: ctx.repo.mainRoot,
    details: {
      command: 'commit',
      integration_branch: ref.integ,
      // The hint's `tugcode run` names a placeholder implementer unless the config names one (docs/run.md §2).
      implementer_configured: Boolean(ctx.config.run.implementer || ctx.config.run.agent),
    },
  };
  try {
    if (mode === 'check') await ctx.store.checkIntegrationTarget(call, input);
    else await ctx.store.recordIntegrationTarget(call, input);
  } catch (e) {
    // The refusal's `tugcode run` repeats the plan's last run's flags when the state has them (docs/state.md
    // §2): read only once refused, so a commit that goes through reads nothing more.
    if (!(e instanceof TugError) || e.code !== 'IntegrationTargetMismatch') throw e;
    const flags = await lastRunFlags(ctx, 'commit', ref.planPath);
    throw flags ? new TugError('IntegrationTargetMismatch', { ...e.details, run_flags: flags } as never) : e;
  }
}

/**
 * The flags of the plan's last run that ended (docs/state.md §2), for a hint's `tugcode run` once no run's
 * lock records them; undefined when the state records none (or cannot be read: a hint never fails its error).
 */
export async function lastRunFlags(ctx: FlowCtx, command: string, planPath: string): Promise<string[] | undefined> {
  const last = await ctx.store.lastRun(callIn(ctx, command, ctx.repo.mainRoot), { plan: planPath }).catch(() => null);
  return last?.run_flags;
}

/** Where the plan integrates, as recorded (docs/run.md §1.11); null when nothing is. Read-only. */
export async function integrationTarget(
  ctx: FlowCtx,
  planPath: string,
): Promise<import('../state/integration-target.js').IntegrationTarget | null> {
  return ctx.store.integrationTarget(callIn(ctx, 'merge', ctx.repo.mainRoot), { plan: planPath });
}
