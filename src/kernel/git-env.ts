/**
 * The one list of environment variables that make git act on another repository, index or object store
 * than the directory it is run in, and the one function that removes them. Every git child of the kernel
 * gets its environment through `withoutGitRedirects`, and so does every git child of its host, which
 * imports it through ./light.ts (docs/git.md).
 *
 * Why: git sets several of these for its hooks (`GIT_DIR`, `GIT_INDEX_FILE`, `GIT_PREFIX`, …), so a
 * program started from a hook would otherwise stage, commit and reset in the repository and index the hook
 * belongs to instead of the worktree it names with `-C`: the user's staged files unstaged, `main` moved.
 * A caller that always says where git works (`-C <dir>`, `cwd`) can only be misdirected by them.
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
  // our child is not that hook, and its paths would be taken relative to the wrong place.
  'GIT_PREFIX',
  'GIT_IMPLICIT_WORK_TREE',
  'GIT_INTERNAL_SUPER_PREFIX',
  // `git config` written through GIT_CONFIG (the old single-file override) would land in another file
  // than the repository's own config, where a caller records its settings.
  'GIT_CONFIG',
];

const REDIRECTING = new Set(GIT_REDIRECTING_VARS);

/** A copy of `env` without the redirecting variables (and without unset entries). */
export function withoutGitRedirects(env: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && !REDIRECTING.has(k)) out[k] = v;
  return out;
}
