/**
 * The state library (docs/state.md §7): every `tugcode state` command as a function `(ctx, input) → result`
 * that returns plain data or throws TugError. The CLI (src/cli/commands/state.ts), the driver and an MCP
 * server call these in-process; git facts (commits, branch tips, worktree lists) are gathered by the
 * caller before the call, so no git runs inside a write transaction.
 *
 * Typical use:
 *   const ctx = openStateContext({ repoRoot, workTree, clock, config, warnings, command: 'run', mode: 'write' });
 *   try { const r = await claim(ctx, { plan, worktree }); … } finally { await closeStateContext(ctx); }
 */
export { closeStateContext, ensureWriter, stateDbPath, type StateContext, type StateConfig } from './context.js';
export { openStateContext, type OpenMode } from './sqlite-open.js';
export { busyTimeoutMs, type OpenedDb } from './db.js';
export { LATEST_SCHEMA_VERSION, migrationsDir } from './migrate.js';
export { TERMINAL, isTerminal, isExpired, STEP_STATUSES, ITEM_STATUSES, ITEM_KINDS, ARTIFACT_KINDS } from './status.js';
export { init, type InitInput, type InitResult } from './init.js';
export { claim, type ClaimInput, type ClaimResult, type ClaimedResult, type NotClaimedResult } from './claim.js';
export { start, type OwnerInput, type StartResult } from './start.js';
export { heartbeat, type HeartbeatInput, type HeartbeatResult } from './heartbeat.js';
export { update, type UpdateInput, type UpdateResult } from './update.js';
export { parseBatch, type ItemChange, type BulkChange } from './update-input.js';
export { artifact, truncateCodePoints, type ArtifactInput, type ArtifactResult } from './artifact.js';
export { complete, type CompleteInput, type CompleteResult } from './complete.js';
export { release, fail, type ReleaseResult, type FailInput, type FailResult } from './release.js';
export { reset, type ResetInput, type ResetResult } from './reset.js';
export { ready, categorize, type Categories, type ReadyInput } from './ready.js';
export { show, type ShowInput, type ShowResult, type ShowPlan, type ShowStep, type ItemsMode } from './show.js';
export { renderShow, renderPlan, type TextOptions } from './show-text.js';
export {
  reconcile,
  winningCommits,
  type ReconcileInput,
  type ReconcileResult,
  type TrailerCommit,
} from './reconcile.js';
export { prune, type PruneInput } from './prune.js';
export { log, type LogInput, type LogEvent, type LogResult } from './log.js';
export { list, type ListedPlan } from './list.js';
export { graph, type GraphFormat, type GraphResult } from './graph.js';
export {
  claimsHeldBy,
  adminRelease,
  completionBlocker,
  previousFailures,
  type FailedAttempt,
  type HeldClaim,
} from './bridge.js';
