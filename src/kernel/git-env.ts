/**
 * The one list of environment variables that make git act on another repository, index or object store
 * than the directory it is run in, and the one function that removes them. Every git child of tugcode and
 * of the kernel, and every child the driver runs in a worker worktree (implementer, checkpoints, setup),
 * gets its environment through `withoutGitRedirects` (docs/git.md).
 *
 * Why: git sets several of these for its hooks (`GIT_DIR`, `GIT_INDEX_FILE`, `GIT_PREFIX`, …), so a
 * `tugcode run` or `tugcode commit` started from a hook would otherwise stage, commit and reset in the
 * repository and index the hook belongs to instead of the worker worktree it names with `-C`: the user's
 * staged files unstaged, `main` moved (issue 22 item 13). tugcode always says where git works (`-C <dir>`),
 * so these variables can only misdirect it.
 *
 * Kept on purpose (they choose how git works, not where): identity (`GIT_AUTHOR_*`, `GIT_COMMITTER_*`),
 * transport (`GIT_SSH`, `GIT_SSH_COMMAND`, `GIT_ASKPASS`, proxies), `GIT_EDITOR`, `GIT_EXEC_PATH`, the
 * config files and `-c` values (`GIT_CONFIG_GLOBAL`, `GIT_CONFIG_SYSTEM`, `GIT_CONFIG_NOSYSTEM`,
 * `GIT_CONFIG_PARAMETERS`, `GIT_CONFIG_COUNT`/`KEY_n`/`VALUE_n`), and the discovery limits
 * (`GIT_CEILING_DIRECTORIES`, `GIT_DISCOVERY_ACROSS_FILESYSTEM`: they only stop git's upward search).
 */

/** Variables that point git at another git directory, work tree, index, object store or ref namespace. */
export const GIT_REDIRECTING_VARS: readonly string[] = [
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_COMMON_DIR',
  'GIT_INDEX_FILE',
  'GIT_OBJECT_DIRECTORY',
  'GIT_ALTERNATE_OBJECT_DIRECTORIES',
  'GIT_QUARANTINE_PATH',
  'GIT_NAMESPACE',
  'GIT_REPLACE_REF_BASE',
  'GIT_SHALLOW_FILE',
  'GIT_GRAFT_FILE',
  // Set by git for hooks and aliases run in a subdirectory (and for submodule recursion): a child of
  // tugcode is not that hook, and its paths would be taken relative to the wrong place.
  'GIT_PREFIX',
  'GIT_IMPLICIT_WORK_TREE',
  'GIT_INTERNAL_SUPER_PREFIX',
  // `git config` written through GIT_CONFIG (the old single-file override) would land in another file
  // than the repository's own config, where tugcode records its branch config (docs/git.md §3).
  'GIT_CONFIG',
];

const REDIRECTING = new Set(GIT_REDIRECTING_VARS);

/** Whether `name` is one of the redirecting variables. */
export function isGitRedirect(name: string): boolean {
  return REDIRECTING.has(name);
}

/** A copy of `env` without the redirecting variables (and without unset entries). */
export function withoutGitRedirects(env: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && !REDIRECTING.has(k)) out[k] = v;
  return out;
}

/** The redirecting variables that are set in `env` (for a warning or a doctor line). */
export function gitRedirectsIn(env: Record<string, string | undefined>): string[] {
  return GIT_REDIRECTING_VARS.filter((k) => env[k] !== undefined && env[k] !== '');
}
