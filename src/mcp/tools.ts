/**
 * The MCP tools (docs/run.md §5): each state tool is an operation of src/ops with the CLI's input table and
 * output schema, so a tool call and the CLI command take the same arguments and give the same JSON. The
 * kernel tools build the `tug` argv and answer with `tug --json`'s envelope. Which tools exist, and their
 * annotations, is contract/mcp-tools.ts's list.
 */
import { MCP_TOOLS, type McpAnnotations, type StateToolName } from '../contract/mcp-tools.js';
import type { InputTable } from '../contract/inputs/fields.js';
import { inputTableFor } from '../contract/inputs/index.js';
import type { Call, OpsContext } from '../ops/context.js';

export type Annotations = McpAnnotations;

export interface StateTool {
  name: string;
  table: InputTable;
  annotations: Annotations;
  op: () => Promise<(ctx: OpsContext, input: never, call: Call) => Promise<object>>;
}

const write = (name: keyof typeof import('../ops/state-write.js')) => async () =>
  (await import('../ops/state-write.js'))[name] as never;
const read = (name: keyof typeof import('../ops/state-read.js')) => async () =>
  (await import('../ops/state-read.js'))[name] as never;

/** The operation of each state tool (a tool added to the list without one does not compile). */
const OPS: Record<StateToolName, StateTool['op']> = {
  tug_state_claim: write('stateClaim'),
  tug_state_start: write('stateStart'),
  tug_state_heartbeat: write('stateHeartbeat'),
  tug_state_update: write('stateUpdate'),
  tug_state_artifact: write('stateArtifact'),
  tug_state_complete: write('stateComplete'),
  tug_state_release: write('stateRelease'),
  tug_state_fail: write('stateFail'),
  tug_state_show: read('stateShow'),
  tug_state_ready: read('stateReady'),
};

export const STATE_TOOLS: StateTool[] = MCP_TOOLS.flatMap((t) =>
  'kernel' in t ? [] : [{ name: t.tool, table: inputTableFor(t.command), op: OPS[t.tool], annotations: t.annotations }],
);
