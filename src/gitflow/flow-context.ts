/**
 * What the git flows (worktree, commit, merge, status, doctor) need from the invocation: built by the CLI
 * (or the MCP server, or a test) and passed down. No output, no exit.
 */
import type { Clock } from '../clock.js';
import type { Config } from '../config/config.js';
import type { WarningSink } from '../contract/envelope.js';
import type { Repo } from '../git/repo.js';
import type { StateStore } from '../state/store.js';

export interface FlowCtx {
  repo: Repo;
  config: Config;
  clock: Clock;
  warnings: WarningSink;
  env: NodeJS.ProcessEnv;
  /** The process's state store (src/ops passes it): the flows' state calls share its connection. */
  store?: StateStore | undefined;
}
