/**
 * The environment of every git child, for both runners (exec.ts and fast.ts): the environment the caller
 * passes (its FlowCtx / CLI env, never this process's own) without the variables that redirect git
 * (kernel/git-env.ts, the one list: a tugcode started from a git hook must not act on the hook's
 * repository or index), plus `GIT_TERMINAL_PROMPT=0` (git never waits for a password on a terminal) and
 * `LC_ALL=C` (messages parsed here stay in English). `extra` is the caller's own per-call setting (a
 * temporary index, a quarantine object directory) and is kept.
 */
import { withoutGitRedirects } from '../kernel/light.js';

export type GitEnv = Record<string, string>;

export interface GitResult {
  status: number;
  stdout: string;
  stderr: string;
}

export function gitChildEnv(env: NodeJS.ProcessEnv, extra: GitEnv = {}): GitEnv {
  return { ...withoutGitRedirects(env), GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C', ...extra };
}
