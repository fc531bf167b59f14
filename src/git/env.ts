/**
 * The environment of every git child, for both runners (exec.ts and fast.ts): exactly the environment the
 * caller passes (its FlowCtx / CLI env, never this process's own), plus `GIT_TERMINAL_PROMPT=0` (git never
 * waits for a password on a terminal) and `LC_ALL=C` (messages parsed here stay in English).
 */
export type GitEnv = Record<string, string>;

export interface GitResult {
  status: number;
  stdout: string;
  stderr: string;
}

export function gitChildEnv(env: NodeJS.ProcessEnv, extra: GitEnv = {}): GitEnv {
  const out: GitEnv = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) out[k] = v;
  return { ...out, GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C', ...extra };
}
