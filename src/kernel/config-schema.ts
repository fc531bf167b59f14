/**
 * The zod schema of the `[kernel]` table (docs/kernel.md §3.1): types, defaults and the precise messages of
 * ConfigInvalid. Loaded lazily, only when a value fails the zod-free rules of ./config-keys.ts or a
 * `pyproject.toml [tool.tug]` table exists. A public entry of its own beside ./light.ts and ./index.ts,
 * because it loads zod: a host's config schema may embed it as its own `kernel` table.
 */
import { z } from 'zod';

const argv = z.array(z.string());
const posInt = z.number().int().positive();
const nonNegInt = z.number().int().nonnegative();

export const kernelSchema = z
  .object({
    verify: z
      .enum(['none', 'syntax', 'tests', 'typecheck'])
      .default('syntax')
      .describe('how a refactor is verified: none | syntax | tests | typecheck'),
    test_command: argv.default([]).describe('argv array; {python} placeholder allowed; empty = detect'),
    test_timeout: z.number().int().min(1).max(3600).default(300).describe('seconds the test command may run (1-3600)'),
    typecheck_command: argv.default([]).describe('argv array; empty = the built-in checkers'),
    typecheck_timeout: posInt.default(600).describe('seconds the typecheck may run'),
    safety: z.enum(['strict', 'safe', 'aggressive']).default('strict').describe('strict (= safe) | aggressive'),
    include: z.array(z.string()).default([]).describe('globs added to the source set'),
    exclude: z.array(z.string()).default([]).describe('globs removed from the source set'),
    python: z.string().default('').describe('Python interpreter path; empty = resolved (docs/kernel.md §6.3)'),
    rust_analyzer: z.string().default('').describe('rust-analyzer path; empty = resolved (docs/kernel.md §6.4)'),
    lock_timeout: nonNegInt.default(30).describe('seconds to wait for the session lock'),
    max_files_affected: posInt.default(50).describe('refactor gate: files one operation may touch'),
    max_edits: posInt.default(500).describe('refactor gate: edits one operation may make'),
    max_concurrent_sessions: posInt.default(2).describe('kernel slots shared by all worktrees'),
    max_workspace_files: posInt
      .default(100_000)
      .describe('files the refactor kernel lists in a workspace before it refuses it as too large'),
    max_sandbox_mb: posInt.default(2048).describe('MiB a full verification sandbox may copy from the workspace'),
  })
  .strict();
