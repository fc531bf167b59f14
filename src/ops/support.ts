/** Small helpers every operation shares: the state store of a call and the `worktree` argument. */
import type { Repo } from '../git/repo.js';
import type { StateCall, StateStore } from '../state/store.js';
import type { Call, OpsContext } from './context.js';

/** The store, the state call in the current work tree, and the repository. */
export async function stateOf(ctx: OpsContext, call: Call): Promise<{ store: StateStore; sc: StateCall; repo: Repo }> {
  const { repo } = await ctx.load(call);
  const store = await ctx.store(call);
  return { store, sc: await ctx.stateCall(call), repo };
}

/**
 * A `worktree` argument → the canonical root of that work tree (main checkout or linked worktree). Left
 * out (the CLI's default), it is the work tree of the context's directory, from any subdirectory.
 */
export async function worktreeOf(ctx: OpsContext, repo: Repo, arg: string | undefined): Promise<string> {
  if (arg === undefined) return repo.worktreeRoot;
  const { resolveWorktreeArg } = await import('../git/repo.js');
  return resolveWorktreeArg(repo, arg, ctx.cwd, ctx.env);
}
