/**
 * The `state` operations that change state (docs/state.md §4): each resolves what the command needs (the
 * worktree, the plan's integration branch and its tip, commits), then calls the state store. Git facts are
 * gathered before the store call, so no git runs inside a write transaction.
 */
import { TugError } from '../contract/errors.js';
import { shellArg } from '../util/shell-arg.js';
import type { BulkChange, ItemChange } from '../state/update-input.js';
import type { Call, OpsContext } from './context.js';
import { gitFacts } from './git-facts.js';
import { stateOf, worktreeOf } from './support.js';

export interface OwnerArgs {
  plan: string;
  step: string;
  /** As given: absolute, or relative to the context's directory; left out, the context's work tree. */
  worktree?: string | undefined;
  attempt?: number | undefined;
}

export async function stateInit(
  ctx: OpsContext,
  input: { plan: string; force?: boolean; release_claims?: boolean },
  call: Call,
) {
  if (input.release_claims && !input.force)
    throw new TugError('InvalidArgument', {
      reason: 'release_claims requires force',
      fields: ['release_claims', 'force'],
    });
  const { store, sc } = await stateOf(ctx, call);
  const r = await store.init(sc, {
    plan: input.plan,
    force: Boolean(input.force),
    release_claims: Boolean(input.release_claims),
  });
  // A forced re-init clears every kept commit (docs/state.md §4): their review refs go with them.
  if (input.force) await dropStaleReviewRefs(ctx, call, input.plan);
  return r;
}

/**
 * A reset or a forced re-init clears kept commits in the state, which stays git-free: their review refs go
 * too (gitflow/state-bridge.ts). Best effort: the state change is made; a ref left behind holds nothing
 * anyone will integrate.
 */
async function dropStaleReviewRefs(ctx: OpsContext, call: Call, plan: string): Promise<void> {
  try {
    const { store, sc } = await stateOf(ctx, call);
    const shown = (await store.show(sc, { plan, items: 'none' })).plans[0];
    if (!shown) return;
    const [{ dropStaleReviewRefs: drop }, { flowOf }] = await Promise.all([
      import('../gitflow/state-bridge.js'),
      import('./git.js'),
    ]);
    await drop(await flowOf(ctx, call), shown.plan_path, call.command);
  } catch {
    // Best effort, as above.
  }
}

/** The plan's integration branch `tugplan/<slug>` and its tip, when both exist (docs/run.md §1). */
async function integrationOf(ctx: OpsContext, call: Call, plan: string, workTree: string) {
  const { repo } = await ctx.load(call);
  const { resolvePlanArg, slugOfPlanPath } = await import('../plan/resolve.js');
  const { workTreeHolding } = await import('../git/repo.js');
  let planPath: string;
  try {
    planPath = resolvePlanArg(plan, {
      repoRoot: repo.mainRoot,
      workTree,
      cwd: ctx.cwd,
      workTreeHolding: (abs) => workTreeHolding(repo, abs),
    }).plan_path;
  } catch {
    return null; // the state store reports the plan argument's problem
  }
  const slug = slugOfPlanPath(planPath);
  if (!slug) return null;
  const { integrationBranch } = await import('../contract/layout.js');
  const branch = integrationBranch(slug);
  const tip = await (await gitFacts(ctx)).branchTip(repo, branch);
  return tip ? { branch, tip } : null;
}

export async function stateClaim(
  ctx: OpsContext,
  input: { plan: string; worktree?: string | undefined; lease_seconds?: number; step?: string },
  call: Call,
) {
  const { store, sc, repo } = await stateOf(ctx, call);
  const worktree = await worktreeOf(ctx, repo, input.worktree);
  return store.claim(sc, {
    plan: input.plan,
    worktree,
    lease_seconds: input.lease_seconds,
    step: input.step,
    integration: await integrationOf(ctx, call, input.plan, worktree),
  });
}

export async function stateStart(ctx: OpsContext, input: OwnerArgs, call: Call) {
  const { store, sc, repo } = await stateOf(ctx, call);
  return store.start(sc, { ...input, worktree: await worktreeOf(ctx, repo, input.worktree) });
}

export async function stateHeartbeat(ctx: OpsContext, input: OwnerArgs & { lease_seconds?: number }, call: Call) {
  const { store, sc, repo } = await stateOf(ctx, call);
  return store.heartbeat(sc, { ...input, worktree: await worktreeOf(ctx, repo, input.worktree) });
}

export interface UpdateArgs extends OwnerArgs {
  items?: ItemChange[];
  all_tasks?: string;
  all_tests?: string;
  all_checkpoints?: string;
  all?: string;
  reason?: string;
  /** The items came from one JSON document (`--batch`): its errors are InvalidBatch. */
  batch?: boolean;
  complete_remaining?: boolean;
}

export async function stateUpdate(ctx: OpsContext, input: UpdateArgs, call: Call) {
  const { checkStatus } = await import('../state/update-input.js');
  const bulk: BulkChange[] = [];
  for (const [key, kind] of [
    ['all_tasks', 'task'],
    ['all_tests', 'test'],
    ['all_checkpoints', 'checkpoint'],
    ['all', 'all'],
  ] as const) {
    const v = input[key];
    if (v !== undefined) bulk.push({ kind, status: checkStatus(v) });
  }
  const items = input.items ?? [];
  // The library's refusal names the command line's flags; a tool caller has these fields instead.
  if (call.naming === 'tool' && items.length === 0 && bulk.length === 0 && !input.complete_remaining)
    throw new TugError('InvalidArgument', {
      reason: 'nothing to update: give items, all_tasks, all_tests, all_checkpoints, all or complete_remaining',
    });
  if (input.batch && bulk.length > 0)
    throw new TugError('InvalidArgument', {
      reason: 'a batch of items cannot be combined with all_tasks, all_tests, all_checkpoints or all',
    });
  const { store, sc, repo } = await stateOf(ctx, call);
  return store.update(sc, {
    plan: input.plan,
    step: input.step,
    worktree: await worktreeOf(ctx, repo, input.worktree),
    attempt: input.attempt,
    items,
    bulk,
    reason: input.reason,
    batch: Boolean(input.batch),
    complete_remaining: Boolean(input.complete_remaining),
  });
}

export async function stateArtifact(
  ctx: OpsContext,
  input: OwnerArgs & { kind: string; summary: string; content?: string },
  call: Call,
) {
  const { store, sc, repo } = await stateOf(ctx, call);
  return store.artifact(sc, { ...input, worktree: await worktreeOf(ctx, repo, input.worktree) });
}

export async function stateComplete(
  ctx: OpsContext,
  input: OwnerArgs & { commit?: string; force?: string },
  call: Call,
) {
  const { store, sc, repo } = await stateOf(ctx, call);
  const worktree = await worktreeOf(ctx, repo, input.worktree);
  let commit: string | undefined;
  if (input.commit !== undefined) {
    const rev = input.commit;
    const full = rev.startsWith('-') ? null : await (await gitFacts(ctx)).resolveCommit(worktree, rev);
    if (!full)
      throw new TugError(
        'InvalidArgument',
        { reason: `commit ${JSON.stringify(rev)} does not name a commit in ${worktree}`, argument: 'commit' },
        {
          hint: `pass the step's commit, as its id or a ref (git -C ${shellArg(worktree)} log --oneline -5 lists the latest)`,
        },
      );
    commit = full;
    // A step completed by hand with a commit the plan's integration branch lacks would let `run` finish
    // "done" and `merge` ship without it (docs/git.md): refused, with the command that integrates it.
    const integ = await integrationOf(ctx, call, input.plan, worktree);
    if (integ && !(await (await gitFacts(ctx)).contains(repo, integ.tip, commit)))
      throw new TugError(
        'CommitNotIntegrated',
        { step_anchor: input.step, commit_hash: commit, branch: integ.branch, worktree },
        {
          hint:
            `integrate it and complete the step in one go: tugcode commit --worktree ${shellArg(worktree)} ` +
            `--plan ${shellArg(input.plan)} --step ${shellArg(input.step)}` +
            `${input.attempt !== undefined ? ` --attempt ${input.attempt}` : ''} --integrate` +
            ` (or pass --commit with the step's commit on ${integ.branch})`,
        },
      );
  }
  return store.complete(sc, {
    plan: input.plan,
    step: input.step,
    worktree,
    attempt: input.attempt,
    commit,
    force: input.force,
    ...(call.naming === 'tool' ? { force_field: 'force' } : {}),
  });
}

export async function stateRelease(ctx: OpsContext, input: OwnerArgs, call: Call) {
  const { store, sc, repo } = await stateOf(ctx, call);
  return store.release(sc, { ...input, worktree: await worktreeOf(ctx, repo, input.worktree) });
}

export async function stateFail(ctx: OpsContext, input: OwnerArgs & { reason: string }, call: Call) {
  const { store, sc, repo } = await stateOf(ctx, call);
  return store.fail(sc, { ...input, worktree: await worktreeOf(ctx, repo, input.worktree) });
}

export async function stateReset(ctx: OpsContext, input: { plan: string; step: string; force?: boolean }, call: Call) {
  const { store, sc } = await stateOf(ctx, call);
  const r = await store.reset(sc, input);
  // The reset cleared a kept commit or an approval (docs/run.md §6.3): its review ref goes too.
  await dropStaleReviewRefs(ctx, call, input.plan);
  return r;
}

/** `state decide`: exactly one of --approve, --revise, --reject (docs/state.md §3.11). */
export async function stateDecide(
  ctx: OpsContext,
  input: { plan: string; step: string; approve?: boolean; revise?: string; reject?: string },
  call: Call,
) {
  const given = [input.approve ? 'approve' : null, input.revise !== undefined ? 'revise' : null]
    .concat(input.reject !== undefined ? 'reject' : null)
    .filter((x): x is 'approve' | 'revise' | 'reject' => x !== null);
  if (given.length !== 1)
    throw new TugError('InvalidArgument', {
      reason:
        given.length === 0
          ? 'give one decision: --approve, --revise "<notes>" or --reject "<reason>"'
          : `give one decision, not ${given.map((g) => `--${g}`).join(' and ')}`,
    });
  const { store, sc, repo } = await stateOf(ctx, call);
  const r = await store.decide(sc, {
    plan: input.plan,
    step: input.step,
    decision: given[0]!,
    notes: input.revise,
    reason: input.reject,
  });
  // The kept commit's ref goes once it can no longer be integrated (revise, reject); approve keeps it for
  // the run that integrates it, which removes it then.
  if (r.decision !== 'approve') {
    const { reviewRefName } = await import('../contract/layout.js');
    const { slugOfPlanPath } = await import('../plan/resolve.js');
    const slug = slugOfPlanPath(r.plan_path);
    // Best effort: the decision is made; a ref left behind holds nothing anyone will integrate.
    if (slug)
      await (await gitFacts(ctx)).deleteRef(repo.mainRoot, reviewRefName(slug, r.step_anchor)).catch(() => undefined);
  }
  return r;
}

export async function stateReconcile(
  ctx: OpsContext,
  input: { plan: string; ref?: string[]; all_branches?: boolean; force?: boolean },
  call: Call,
) {
  const { store, sc, repo } = await stateOf(ctx, call);
  const git = await gitFacts(ctx);
  const refs = [...(input.ref ?? [])];
  if (input.all_branches) {
    refs.push(...(await git.localBranches(repo.worktreeRoot)).map((b) => `refs/heads/${b}`));
    for (const w of await git.worktrees(repo)) if (w.head) refs.push(w.head);
  }
  if (refs.length === 0) {
    const integration = await integrationOf(ctx, call, input.plan, repo.worktreeRoot);
    refs.push(integration ? `refs/heads/${integration.branch}` : 'HEAD');
  }
  for (const r of refs) {
    if (r.startsWith('-'))
      throw new TugError('InvalidArgument', { reason: `ref ${JSON.stringify(r)} is not a ref`, argument: 'ref' });
    if (!(await git.resolveCommit(repo.worktreeRoot, r)))
      throw new TugError(
        'InvalidArgument',
        { reason: `ref ${JSON.stringify(r)} does not name a commit`, argument: 'ref' },
        {
          hint: "pass a branch, tag or commit of this repository (git branch --list 'tugplan/*' lists the plans' branches)",
        },
      );
  }
  const { commits, scanned } = await git.trailerCommits(repo.worktreeRoot, [...new Set(refs)]);
  return store.reconcile(sc, {
    plan: input.plan,
    commits,
    scanned_commits: scanned,
    force: Boolean(input.force),
  });
}

export async function statePrune(ctx: OpsContext, input: { dry_run?: boolean; purge?: boolean }, call: Call) {
  const { store, sc, repo } = await stateOf(ctx, call);
  return store.prune(sc, {
    work_trees: (await (await gitFacts(ctx)).worktrees(repo)).map((w) => w.path),
    dry_run: Boolean(input.dry_run),
    purge: Boolean(input.purge),
  });
}
