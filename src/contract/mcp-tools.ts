/**
 * The MCP tools of `tugcode mcp` (docs/run.md §5), listed once: the server registers exactly these with
 * their annotations (src/mcp), and docs/AGENT_API.md lists them (agent-api.ts). A state tool takes the
 * input and gives the output of its command; a kernel tool answers with `tug --json`'s envelope.
 */

export interface McpAnnotations {
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

export interface McpToolSpec {
  tool: string;
  /** The command whose input and output it shares (a kernel tool: the `tug` command it runs). */
  command: string;
  kernel?: true;
  note: string;
  annotations: McpAnnotations;
}

/** A tool that changes something local (state.db, the work tree): never open-world. */
const writes = (idempotent: boolean, destructive = false): McpAnnotations => ({
  readOnlyHint: false,
  destructiveHint: destructive,
  idempotentHint: idempotent,
  openWorldHint: false,
});
const reads: McpAnnotations = { readOnlyHint: true, openWorldHint: false };

export const MCP_TOOLS = [
  {
    tool: 'tug_state_claim',
    command: 'state claim',
    note: 'claim the next ready step (or resume your own claim)',
    annotations: writes(false),
  },
  { tool: 'tug_state_start', command: 'state start', note: 'claimed → in_progress', annotations: writes(true) },
  { tool: 'tug_state_heartbeat', command: 'state heartbeat', note: 'renew the lease', annotations: writes(true) },
  {
    tool: 'tug_state_update',
    command: 'state update',
    note: 'change checklist items (`items`, `complete_remaining`)',
    annotations: writes(true),
  },
  {
    tool: 'tug_state_artifact',
    command: 'state artifact',
    note: 'record an audit breadcrumb',
    annotations: writes(false),
  },
  {
    tool: 'tug_state_complete',
    command: 'state complete',
    note: 'complete the step (strict unless `force`)',
    annotations: writes(true),
  },
  // Releasing and failing discard the attempt's work in progress.
  {
    tool: 'tug_state_release',
    command: 'state release',
    note: 'hand the claim back',
    annotations: writes(false, true),
  },
  { tool: 'tug_state_fail', command: 'state fail', note: 'give up this attempt', annotations: writes(false, true) },
  { tool: 'tug_state_show', command: 'state show', note: 'progress (read-only)', annotations: reads },
  {
    tool: 'tug_state_ready',
    command: 'state ready',
    note: 'ready / claimed / blocked steps (read-only)',
    annotations: reads,
  },
  {
    tool: 'tug_analyze_impact',
    command: 'tug analyze-impact',
    kernel: true,
    note: 'what a rename would touch (read-only)',
    annotations: reads,
  },
  {
    tool: 'tug_rename_symbol',
    command: 'tug run rename-symbol',
    kernel: true,
    note: 'dry run, or apply with verification',
    annotations: writes(false),
  },
  {
    tool: 'tug_verify',
    command: 'tug verify',
    kernel: true,
    note: 'verify the tree in a sandbox copy',
    annotations: reads,
  },
] as const satisfies readonly McpToolSpec[];

export type McpToolName = (typeof MCP_TOOLS)[number]['tool'];
/** The tools that are a state command. */
export type StateToolName = Exclude<(typeof MCP_TOOLS)[number], { kernel: true }>['tool'];
/** The tools a warm kernel serves. */
export type KernelToolName = Extract<(typeof MCP_TOOLS)[number], { kernel: true }>['tool'];

/** The list entry of a tool. */
export function mcpTool(name: McpToolName): McpToolSpec {
  return MCP_TOOLS.find((t) => t.tool === name)!;
}
