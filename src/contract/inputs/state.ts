/**
 * Input tables of the `state` operations (docs/state.md §4). Descriptions are the CLI help and the MCP
 * tool argument descriptions alike.
 */
import { ARTIFACT_KINDS, ITEM_STATUSES, SHOW_ITEMS } from '../status.js';
import type { Field, InputTable } from './fields.js';
import {
  MAX_ANCHOR,
  MAX_CONTENT,
  MAX_COUNTER,
  MAX_EXPORT_DOCUMENT,
  MAX_LEASE_SECONDS,
  MAX_PATH,
  MAX_PLAN,
  MAX_REASON,
} from './limits.js';

const plan: Field = { type: 'string', arg: 0, required: true, max: MAX_PLAN, description: 'plan path or slug' };
const optPlan: Field = { ...plan, required: false, description: 'plan path or slug (default: every plan)' };
const step: Field = {
  type: 'string',
  arg: 1,
  required: true,
  max: MAX_ANCHOR,
  description: 'step anchor (step-2 or #step-2)',
};
const worktree: Field = {
  type: 'string',
  required: true,
  nonEmpty: true, // an unset $TUG_WORKTREE must not silently mean the current directory
  max: MAX_PATH,
  placeholder: '<path>',
  description: "the caller's worktree (main checkout or linked worktree root)",
  // The work tree the command runs in, like `tugcode commit` (the main checkout counts: it may own claims).
  cliDefault: 'the work tree of the current directory',
};
const attempt: Field = {
  type: 'int',
  min: 0,
  max: MAX_COUNTER,
  placeholder: '<n>',
  description: 'fencing token: refuse unless it is the current attempt',
};
const lease: Field = {
  type: 'int',
  min: 1,
  max: MAX_LEASE_SECONDS,
  flag: '--lease-duration',
  placeholder: '<seconds>',
  description: 'lease length (default: config state.lease_seconds)',
};
const owner = { plan, step, worktree, attempt };

const t = (
  command: string,
  description: string,
  fields: Record<string, Field>,
  toolDescription?: string,
): InputTable => ({
  command,
  description,
  fields,
  ...(toolDescription ? { toolDescription } : {}),
});

export const stateInit = t('state init', 'parse the plan and record its steps, items and refactors', {
  plan,
  force: {
    type: 'bool',
    description: 're-initialize after a structural change (completed steps and live claims are kept)',
  },
  release_claims: { type: 'bool', description: 'with --force: also reset steps with live claims' },
});

export const stateClaim = t('state claim', 'atomically claim the next ready step (or resume your own claim)', {
  plan,
  worktree: { ...worktree, description: "the claimer's worktree" },
  lease_seconds: lease,
  step: {
    type: 'string',
    max: MAX_ANCHOR,
    placeholder: '<anchor>',
    description: 'claim only this top-level step',
  },
});

export const stateStart = t('state start', 'claimed → in_progress (a substep: pending → in_progress)', owner);

export const stateHeartbeat = t('state heartbeat', 'renew the lease of your claim', { ...owner, lease_seconds: lease });

const itemFlag = (kind: string): Field => ({
  type: 'list',
  max: 256,
  maxItems: 10_000,
  cliOnly: true,
  placeholder: '<ord-status...>',
  description: `a ${kind}: ORD STATUS or ORD:STATUS (0-based ordinal)`,
});
const bulk = (what: string): Field => ({
  type: 'string',
  max: 64,
  oneOf: ITEM_STATUSES,
  placeholder: '<status>',
  description: what,
});
export const stateUpdate = t(
  'state update',
  'change checklist items (--task ORD STATUS or ORD:STATUS, repeatable)',
  {
    ...owner,
    task: { ...itemFlag('task'), description: 'a task: ORD STATUS or ORD:STATUS (0-based ordinal)' },
    test: itemFlag('test'),
    checkpoint: itemFlag('checkpoint'),
    items: {
      type: 'items',
      description: `items to change: [{kind: task|test|checkpoint, ordinal, status: ${ITEM_STATUSES.join('|')}, reason?}]`,
    },
    all_tasks: bulk('every task of the step'),
    all_tests: bulk('every test of the step'),
    all_checkpoints: bulk('every checkpoint of the step'),
    all: bulk('every item of the step'),
    reason: { type: 'string', max: MAX_REASON, placeholder: '<text>', description: 'reason for deferred items' },
    batch: {
      type: 'bool',
      cliOnly: true,
      description: 'read a JSON array [{kind, ordinal, status, reason?}] from stdin',
    },
    complete_remaining: {
      type: 'bool',
      description: 'then complete every item not yet completed or deferred (step and substeps)',
    },
  },
  'change checklist items (items, or all_tasks / all_tests / all_checkpoints / all with a status; complete_remaining)',
);

export const stateArtifact = t('state artifact', 'record an audit breadcrumb for the step', {
  ...owner,
  kind: {
    type: 'string',
    required: true,
    max: 64,
    oneOf: ARTIFACT_KINDS,
    placeholder: '<kind>',
    description: 'what the artifact is',
  },
  // Every artifact has a summary: the table says so for the CLI and the MCP tool alike.
  summary: {
    type: 'string',
    required: true,
    max: MAX_CONTENT,
    placeholder: '<text>',
    fileFlag: '--summary-file',
    description: 'short summary (at most 500 characters kept)',
  },
  content: {
    type: 'string',
    max: MAX_CONTENT,
    placeholder: '<text>',
    fileFlag: '--content-file',
    fileOnly: true,
    description: 'long content (at most 64 KiB kept)',
  },
});

export const stateComplete = t(
  'state complete',
  'complete the step (strict unless --force REASON)',
  {
    ...owner,
    commit: {
      type: 'string',
      max: MAX_PATH,
      placeholder: '<rev>',
      description: "the step's commit (stored as its full object name)",
    },
    force: {
      type: 'string',
      max: MAX_REASON,
      placeholder: '<reason>',
      description: 'complete anyway; the reason is recorded',
    },
  },
  'complete the step (strict unless force gives the reason to complete it anyway)',
);

export const stateRelease = t('state release', 'hand your claim back (the attempt is discarded)', owner);

export const stateFail = t('state fail', 'give up this attempt (failures + 1)', {
  ...owner,
  reason: {
    type: 'string',
    required: true,
    max: MAX_REASON,
    placeholder: '<text>',
    description: 'why the attempt failed',
  },
});

export const stateReset = t('state reset', 'admin: return a claimed, in-progress or failed step to pending', {
  plan,
  step,
  force: { type: 'bool', description: 'also reset a claim whose lease is still live' },
});

export const stateDecide = t(
  'state decide',
  'admin: answer a step that needs a human (its reviewer escalated): approve, revise or reject',
  {
    plan,
    step,
    approve: { type: 'bool', description: 'integrate the kept commit as it is on the next run' },
    revise: {
      type: 'string',
      max: MAX_REASON,
      placeholder: '<notes>',
      description: 'redo the step; the notes join its next brief',
    },
    reject: { type: 'string', max: MAX_REASON, placeholder: '<reason>', description: 'fail the step' },
  },
);

export const stateReconcile = t('state reconcile', 'complete steps from commits carrying Tug-Step/Tug-Plan trailers', {
  plan,
  ref: {
    type: 'list',
    max: MAX_PATH,
    maxItems: 1000,
    placeholder: '<ref>',
    description: 'scan commits reachable from this ref (repeatable)',
  },
  all_branches: { type: 'bool', description: 'scan every local branch and every worktree HEAD' },
  force: { type: 'bool', description: 'also change failed or live-claimed steps and overwrite differing hashes' },
});

export const statePrune = t('state prune', 'archive plans whose file is gone from every work tree', {
  dry_run: { type: 'bool', description: 'report only' },
  purge: { type: 'bool', description: 'delete their rows and events instead of archiving' },
});

export const stateShow = t('state show', 'progress of one plan, or of every active plan', {
  plan: optPlan,
  items: {
    type: 'string',
    max: 64,
    oneOf: SHOW_ITEMS,
    placeholder: '<mode>',
    description: 'which items to list; default active',
  },
  step: { type: 'string', max: MAX_ANCHOR, placeholder: '<anchor>', description: 'only this step and its substeps' },
});

export const stateReady = t('state ready', 'which steps are ready, claimed, blocked, completed or failed', { plan });

export const stateLog = t('state log', 'the audit trail of state changes', {
  plan: optPlan,
  step: { type: 'string', max: MAX_ANCHOR, placeholder: '<anchor>', description: 'only events of this step' },
  limit: { type: 'int', min: 1, max: 1000, placeholder: '<n>', description: 'at most N events (default 50, max 1000)' },
  after_id: {
    type: 'int',
    min: 0,
    max: MAX_COUNTER,
    placeholder: '<id>',
    description: 'the first events after this id (paging forward)',
  },
  since: { type: 'string', max: 64, placeholder: '<iso>', description: 'only events at or after this instant' },
});

export const stateList = t('state list', 'every plan in state.db with its progress', {});

export const stateGraph = t('state graph', 'the dependency graph with statuses', {
  plan,
  format: { type: 'string', max: 64, placeholder: '<format>', description: 'mermaid (default) or dot' },
});

export const stateExport = t(
  'state export',
  "a plan's rows and events as one JSON document (to move it to another backend)",
  {
    plan,
    output: {
      type: 'string',
      max: MAX_PATH,
      noDash: true,
      placeholder: '<file>',
      description: 'write the document to this file (default: stdout)',
    },
  },
);

export const stateImport = t('state import', 'load a state export document into this state store, in one transaction', {
  file: {
    type: 'string',
    arg: 0,
    max: MAX_PATH,
    description: 'the document to load (default, or -: stdin)',
  },
  replace: { type: 'bool', description: 'the plan already has state here: delete its rows and events first' },
  document: {
    type: 'string',
    max: MAX_EXPORT_DOCUMENT,
    placeholder: '<json>',
    description: 'the document itself, instead of a file',
  },
});
