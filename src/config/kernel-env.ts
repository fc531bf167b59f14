/**
 * How tugcode embeds the refactor kernel: the names the kernel must not know (it is a library that names
 * no host) and that every tugcode front door to it passes in — `tugcode refactor`, `refactor run-step`, the
 * MCP server's warm kernels.
 */
import type { FrontDoor, HostOptions } from '../kernel/light.js';
import { STATE_DB_FILES, TUGTREE_DIR } from '../contract/layout.js';

/** tugcode's environment names for the `[kernel]` table: `TUGCODE_KERNEL_<KEY>` (docs/git.md §8). */
export const KERNEL_ENV_PREFIX = 'TUGCODE_KERNEL_';

/**
 * What tugcode tells every kernel it opens: its `[kernel]` variables win over the `TUG_*` ones, and its
 * runtime files in a checkout — the state database with its journals, the worktrees under `.tugtree/` —
 * are never listed, snapshotted or copied into a sandbox.
 */
export const TUGCODE_HOST: HostOptions = {
  settingsEnvPrefix: KERNEL_ENV_PREFIX,
  hostDirs: [TUGTREE_DIR],
  hostFiles: STATE_DB_FILES,
};

/** `tugcode refactor …`: the kernel's command table, with tugcode's name on stderr and in `--version`. */
export const TUGCODE_REFACTOR: FrontDoor = { ...TUGCODE_HOST, prog: 'tugcode', invokedAs: 'tugcode refactor' };

/**
 * The environment the kernel sees from tugcode: TUGCODE_KERNEL_X is honoured as TUG_X when TUG_X is unset
 * (docs/git.md §8; the kernel also reads the `[kernel]` keys under the prefix itself, stronger than TUG_X),
 * and tugcode's clock, TUGCODE_NOW, is the kernel's TUG_NOW unless that is set.
 */
export function kernelEnv(env: NodeJS.ProcessEnv): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = { ...env };
  for (const [k, v] of Object.entries(env)) {
    if (k.startsWith(KERNEL_ENV_PREFIX)) {
      const name = 'TUG_' + k.slice(KERNEL_ENV_PREFIX.length);
      if (out[name] === undefined) out[name] = v;
    }
  }
  if (out.TUG_NOW === undefined && env.TUGCODE_NOW !== undefined) out.TUG_NOW = env.TUGCODE_NOW;
  return out;
}
