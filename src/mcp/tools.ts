/**
 * The MCP tools (docs/run.md §5): each state tool is an operation of src/ops with the CLI's input table and
 * output schema, so a tool call and the CLI command take the same arguments and give the same JSON. The
 * kernel tools build the `tug` argv and answer with `tug --json`'s envelope.
 */
import { TugError } from '../contract/errors.js';
import type { InputTable } from '../contract/inputs/fields.js';
import * as S from '../contract/inputs/state.js';
import type { Call, OpsContext } from '../ops/context.js';

export interface Annotations {
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

export interface StateTool {
  name: string;
  table: InputTable;
  annotations: Annotations;
  op: () => Promise<(ctx: OpsContext, input: never, call: Call) => Promise<object>>;
  /** CLI-only rules the table cannot say (e.g. an artifact needs a summary). */
  check?: (input: Record<string, unknown>) => void;
}

const write = (name: keyof typeof import('../ops/state-write.js')) => async () =>
  (await import('../ops/state-write.js'))[name] as never;
const read = (name: keyof typeof import('../ops/state-read.js')) => async () =>
  (await import('../ops/state-read.js'))[name] as never;

/** Every state tool writes state.db (a local database): `openWorldHint` is false for all of them. */
export const STATE_TOOLS: StateTool[] = [
  {
    name: 'tug_state_claim',
    table: S.stateClaim,
    op: write('stateClaim'),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  },
  {
    name: 'tug_state_start',
    table: S.stateStart,
    op: write('stateStart'),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  {
    name: 'tug_state_heartbeat',
    table: S.stateHeartbeat,
    op: write('stateHeartbeat'),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  {
    name: 'tug_state_update',
    table: S.stateUpdate,
    op: write('stateUpdate'),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  {
    name: 'tug_state_artifact',
    table: S.stateArtifact,
    op: write('stateArtifact'),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    check: (i) => {
      if (i.summary === undefined)
        throw new TugError('InvalidArgument', { reason: 'state artifact needs summary', argument: 'summary' });
    },
  },
  {
    name: 'tug_state_complete',
    table: S.stateComplete,
    op: write('stateComplete'),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  {
    // Releasing discards the attempt's work in progress.
    name: 'tug_state_release',
    table: S.stateRelease,
    op: write('stateRelease'),
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  },
  {
    name: 'tug_state_fail',
    table: S.stateFail,
    op: write('stateFail'),
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  },
  {
    name: 'tug_state_show',
    table: S.stateShow,
    op: read('stateShow'),
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  {
    name: 'tug_state_ready',
    table: S.stateReady,
    op: read('stateReady'),
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
];
