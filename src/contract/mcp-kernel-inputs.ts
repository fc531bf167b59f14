/**
 * The arguments of the kernel's MCP tools (docs/run.md §5), defined once: the server (src/mcp) checks calls
 * with them and advertises them, and docs/AGENT_API.md lists them (agent-api.ts). Each is a `tug` command's
 * flags as fields (docs/kernel.md §5).
 */
import { z } from 'zod';
import type { KernelToolName } from './mcp-tools.js';

const workspace = z
  .string()
  .max(4096)
  .optional()
  .describe("the workspace: the server's repository or one of its worktrees (default: the server's directory)");
const op = z
  .string()
  .max(4096)
  .describe('an operation as in a **Refactors:** row, e.g. `rename-symbol --symbol src/a.ts::old --to new`');

export const KERNEL_TOOL_INPUTS: Record<KernelToolName, Record<string, z.ZodTypeAny>> = {
  tug_analyze_impact: { op, workspace },
  tug_rename_symbol: {
    at: z.string().max(4096).optional().describe('FILE:LINE:COL of the symbol (or use symbol)'),
    symbol: z.string().max(4096).optional().describe('FILE::Qualified.Name of the symbol (or use at)'),
    to: z.string().max(1024).describe('the new name'),
    expect: z.string().max(1024).optional().describe('the name expected at `at` (refuses otherwise)'),
    apply: z.boolean().optional().describe('write the files (default: dry run)'),
    verify: z
      .enum(['none', 'syntax', 'tests', 'typecheck'])
      .optional()
      .describe('verification of the result in a sandbox, before apply writes it (default: syntax)'),
    snapshot_id: z
      .string()
      .max(128)
      .optional()
      .describe("an analysis's snapshot_id: refuse the run if anything changed since (SnapshotMismatch)"),
    workspace,
  },
  tug_verify: { mode: z.enum(['syntax', 'tests', 'typecheck']).describe('what to verify'), workspace },
};
