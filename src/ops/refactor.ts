/**
 * `refactor run-step` and `refactor skip` (docs/kernel.md §7.3–§7.4) as operations over the process's state
 * store: the CLI front door (src/commands/refactor-step.ts) and the driver (src/run/step.ts) call these.
 * run-step is the one flow that holds a state-library context across its own steps (kernel calls between
 * short transactions), so it is the one caller of `StateStore.withContext`.
 */
import type { RunStepOptions } from '../refactor/run-step.js';
import type { RunStepResult } from '../refactor/result.js';
import type { VerifyMode } from '../kernel/light.js';
import type { SkipResult } from '../state/refactors.js';
import type { Call, OpsContext } from './context.js';
import { gitFacts } from './git-facts.js';

export interface RefactorStepArgs {
  plan: string;
  step: string;
  /** Canonical root of the worktree W that holds the step (the store names its owner). */
  worktree: string;
  attempt?: number | undefined;
  /** Where a relative plan path resolves (default: the worktree; the CLI passes the caller's directory). */
  cwd?: string | undefined;
}

export async function refactorRunStep(
  ctx: OpsContext,
  input: RefactorStepArgs & { retry_failed?: boolean | undefined; verify?: VerifyMode | undefined },
  call: Call,
  o: RunStepOptions,
): Promise<RunStepResult> {
  const store = await ctx.store(call);
  const sc = await ctx.stateCall(call, input.worktree, input.cwd ?? input.worktree);
  const { runStep } = await import('../refactor/run-step.js');
  const { cwd: _cwd, ...args } = input;
  return store.withContext(sc, 'write', (sctx) => runStep(sctx, { ...args, worktree: store.owner(input.worktree) }, o));
}

export async function refactorSkip(
  ctx: OpsContext,
  input: RefactorStepArgs & { ordinal: number; reason: string },
  call: Call,
): Promise<SkipResult> {
  const store = await ctx.store(call);
  const sc = await ctx.stateCall(call, input.worktree, input.cwd ?? input.worktree);
  const { cwd: _cwd, ...args } = input;
  return store.skipRefactor(sc, args);
}

/**
 * The workspace a kernel tool may work in (docs/run.md §5): inside the server's repository, its main
 * checkout or one of its worktrees. A caller (an agent) names any path; the kernel would refactor there.
 * Returns the canonical path, or throws InvalidArgument naming `workspace`. The repository only, not its
 * config.toml: the kernel reads its own `[kernel]` table, so a bad value in another table stops the state
 * tools but not the kernel tools, as it stops tugcode's commands but not `tug` (docs/git.md §8).
 */
export async function confinedWorkspace(ctx: OpsContext, arg: string): Promise<string> {
  const { realpath } = await import('node:fs/promises');
  const { resolve, sep } = await import('node:path');
  const { TugError } = await import('../contract/errors.js');
  const refuse = (why: string) =>
    new TugError('InvalidArgument', { reason: `workspace ${JSON.stringify(arg)} ${why}`, argument: 'workspace' });
  const path = await realpath(resolve(ctx.cwd, arg)).catch(() => {
    throw refuse('does not exist');
  });
  const { resolveRepo } = await import('../git/repo.js');
  const repo = resolveRepo(ctx.cwd, ctx.env);
  const roots = [repo.mainRoot, ...(await (await gitFacts(ctx)).worktrees(repo)).map((w) => w.path)];
  if (roots.some((r) => path === r || path.startsWith(r + sep))) return path;
  throw refuse(`is outside this repository (${repo.mainRoot}) and its worktrees`);
}
