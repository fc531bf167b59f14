/**
 * The kernel's light entry: the parts a host needs on its start-up path — the op grammar, the `[kernel]`
 * config keys and file reader, the repository layout, the environment that redirects git, the error class,
 * the signal handlers — and every public type. It loads no npm package, no backend and not node:crypto
 * (~10 ms of a cold start; the hashes are ./ids.ts, an entry of their own), so a command that never
 * refactors or hashes pays for none of it (tests/kernel/layering.test.ts checks). ./index.ts, the whole
 * library, re-exports all of it. Outside src/kernel, import the kernel only through these entries
 * (tests/layering.test.ts checks).
 */
export { KernelError, EXIT_BY_CODE, exitCodeOf, type KernelErrorCode, type KernelLocation } from './errors.js';
export {
  tokenizeShell,
  parseOpText,
  type ParsedOp,
  type SafetyMode,
  type OpParseResult,
  type TokenizeResult,
} from './opspec.js';
export { parseOp } from './cli/args.js';
export { newNameProblem } from './names.js';
export {
  KERNEL_FILE_DEFAULTS,
  KERNEL_TUG_ENV,
  KERNEL_RULES,
  satisfies,
  envValue,
  setsNoValue,
  type KernelKey,
  type Rule,
} from './config-keys.js';
export { readConfigFile } from './config-file.js';
export { tomlErrorReport, type TomlErrorReport } from './toml-error.js';
export { canonicalPath, gitLayout, readGitdirFile, type GitLayout } from './repo-layout.js';
export { GIT_REDIRECTING_VARS, withoutGitRedirects } from './git-env.js';
export { installSignalHandlers, SIGNAL_EXIT } from './cli/signals.js';
export type * from './types.js';
