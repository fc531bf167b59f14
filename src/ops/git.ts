/**
 * The git-flow operations (docs/git.md §3–§7): worktree create/list/remove, commit, merge, status, doctor.
 * Each builds the flow context from the process context and calls its flow.
 */
import type { FlowCtx } from '../gitflow/flow-context.js';
import type { Call, OpsContext } from './context.js';

/** The git flows' context of a call: the process's repository, config and state store, the call's warnings. */
export async function flowOf(ctx: OpsContext, call: Call): Promise<FlowCtx> {
  const { repo, config } = await ctx.load(call);
  return { repo, config, clock: ctx.clock, warnings: call.warnings, env: ctx.env, store: await ctx.store(call) };
}

export async function worktreeCreate(
  ctx: OpsContext,
  input: { plan: string; base?: string; name?: string; reuse?: boolean; new?: boolean },
  call: Call,
) {
  const { createWorktree } = await import('../gitflow/worktree.js');
  return createWorktree(await flowOf(ctx, call), {
    plan: input.plan,
    base: input.base,
    name: input.name,
    reuse: Boolean(input.reuse),
    new: Boolean(input.new),
  });
}

export async function worktreeList(ctx: OpsContext, _input: Record<string, never>, call: Call) {
  const { listTugWorktrees } = await import('../gitflow/worktree-admin.js');
  return listTugWorktrees(await flowOf(ctx, call));
}

export async function worktreeRemove(ctx: OpsContext, input: { worktree: string; force?: boolean }, call: Call) {
  const { removeWorktree } = await import('../gitflow/worktree-admin.js');
  return removeWorktree(await flowOf(ctx, call), input.worktree, { force: Boolean(input.force) });
}

export interface CommitArgs {
  worktree?: string;
  plan: string;
  step: string;
  message?: string;
  summary?: string;
  attempt?: number;
  integrate?: boolean;
  allow_main?: boolean;
  allow_empty?: boolean;
}

export async function commit(ctx: OpsContext, input: CommitArgs, call: Call) {
  const { commitStep } = await import('../gitflow/commit.js');
  return commitStep(await flowOf(ctx, call), {
    worktree: input.worktree,
    plan: input.plan,
    step: input.step,
    message: input.message,
    summary: input.summary,
    attempt: input.attempt,
    integrate: Boolean(input.integrate),
    allowMain: Boolean(input.allow_main),
    allowEmpty: Boolean(input.allow_empty),
  });
}

export async function merge(
  ctx: OpsContext,
  input: { plan: string; into?: string; branch?: string; dry_run?: boolean; force?: boolean },
  call: Call,
) {
  const { mergePlan } = await import('../gitflow/merge.js');
  return mergePlan(await flowOf(ctx, call), {
    plan: input.plan,
    into: input.into,
    branch: input.branch,
    dryRun: Boolean(input.dry_run),
    force: Boolean(input.force),
  });
}

export async function status(ctx: OpsContext, input: { plan?: string }, call: Call) {
  const { planStatus } = await import('../gitflow/status.js');
  return planStatus(await flowOf(ctx, call), input.plan);
}

/** Doctor resolves the repository itself: a broken repository or config is what it reports on. */
export async function doctor(ctx: OpsContext, _input: Record<string, never>, call: Call) {
  const { runDoctor } = await import('../gitflow/doctor.js');
  const { loadConfig } = await import('../config/config.js');
  return runDoctor({
    cwd: ctx.cwd,
    env: ctx.env,
    clock: ctx.clock,
    warnings: call.warnings,
    loadConfig: (repo) => loadConfig(repo.mainRoot, ctx.env, call.warnings),
    openStore: async (repo, config) => {
      const { openStateStore } = await import('./state-backend.js');
      return openStateStore({ repo, config, clock: ctx.clock, env: ctx.env, longLived: false });
    },
  });
}
