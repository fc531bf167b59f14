/**
 * What the git flows (worktree, commit, merge, status, doctor) need from the invocation: built by the CLI
 * (or the MCP server, the driver, or a test) and passed down. No output, no exit.
 */
import type { Clock } from '../clock.js';
import type { Config } from '../config/config.js';
import type { WarningSink } from '../contract/envelope.js';
import type { Repo } from '../git/repo.js';
import type { StateStore } from '../state/store.js';

/** The repository and its configuration, the clock, the warnings sink and the environment. */
export interface RepoCtx {
  repo: Repo;
  config: Config;
  clock: Clock;
  warnings: WarningSink;
  env: NodeJS.ProcessEnv;
}

/**
 * A RepoCtx with the process's state store: every state call of a flow goes through it (state-bridge.ts).
 * Only `doctor` works without one: it opens state.db itself, to diagnose a store that would not open.
 */
export interface FlowCtx extends RepoCtx {
  store: StateStore;
}
