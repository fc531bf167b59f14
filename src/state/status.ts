/**
 * Statuses and the rules every query and display shares (docs/state.md §2–§3): TERMINAL is defined once
 * here, and so is the one lease-expiry comparison (`lease_expires_at < now`; at equality a lease is live).
 */
import {
  ITEM_KINDS,
  ITEM_STATUSES,
  type ItemKind,
  type ItemStatus,
  type RefactorStatus,
  type StepStatus,
} from '../contract/status.js';
export {
  STEP_STATUSES,
  ITEM_STATUSES,
  ITEM_KINDS,
  REFACTOR_STATUSES,
  PLAN_STATUSES,
  ARTIFACT_KINDS,
} from '../contract/status.js';
export type { StepStatus, ItemStatus, ItemKind, RefactorStatus, PlanStatus, ArtifactKind } from '../contract/status.js';

/** JSON/plural names of the kinds, in display order. */
export const KIND_PLURAL: Record<ItemKind, 'tasks' | 'tests' | 'checkpoints'> = {
  task: 'tasks',
  test: 'tests',
  checkpoint: 'checkpoints',
};

/**
 * An item is closed (terminal) when completed or deferred: a strict completion asks nothing more of it.
 * Progress counts only completed items (itemProgress, src/contract/status.ts).
 */
export const TERMINAL: ReadonlySet<ItemStatus> = new Set<ItemStatus>(['completed', 'deferred']);
/** The same set as a SQL list, for `status IN ${TERMINAL_SQL}`. */
export const TERMINAL_SQL = "('completed', 'deferred')";

export function isTerminal(status: string): boolean {
  return TERMINAL.has(status as ItemStatus);
}

/** A refactor row is done when applied or skipped. */
export const REFACTOR_DONE: ReadonlySet<RefactorStatus> = new Set<RefactorStatus>(['applied', 'skipped']);
export const REFACTOR_DONE_SQL = "('applied', 'skipped')";

/** A top-level step holding a claim (live or expired). */
export const HELD: ReadonlySet<StepStatus> = new Set<StepStatus>(['claimed', 'in_progress']);
export const HELD_SQL = "('claimed', 'in_progress')";

export function isHeld(status: string): boolean {
  return HELD.has(status as StepStatus);
}

/**
 * The rows of a subtree that a discarded attempt takes back (docs/state.md "Substeps of a discarded
 * attempt"): every step not completed, and every substep completed without a recorded commit. Such a
 * substep was completed inside the attempt (auto-complete) and its commit, if any, never reached the
 * integration branch: kept completed, it would refuse the next attempt's `start`. A step row in SQL (`s`).
 */
export function discardedSql(s = ''): string {
  const p = s ? `${s}.` : '';
  return `(${p}status <> 'completed' OR (${p}parent_anchor IS NOT NULL AND ${p}commit_hash IS NULL))`;
}

/** THE lease-expiry comparison (timestamps are fixed-width UTC, so string order is time order). */
export function isExpired(leaseExpiresAt: string | null, now: string): boolean {
  return leaseExpiresAt !== null && leaseExpiresAt < now;
}

/** The same comparison in SQL, against the named parameter `@now`. */
export function expiredSql(column = 'lease_expires_at'): string {
  return `${column} < @now`;
}

export function isItemStatus(s: string): s is ItemStatus {
  return (ITEM_STATUSES as readonly string[]).includes(s);
}

function isItemKind(s: string): s is ItemKind {
  return (ITEM_KINDS as readonly string[]).includes(s);
}

/** Plural kind name (`tasks`) or singular (`task`) → kind. */
export function kindFromName(s: string): ItemKind | null {
  const k = s.endsWith('s') ? s.slice(0, -1) : s;
  return isItemKind(k) ? k : null;
}

/**
 * Caps of the text the state library stores (docs/state.md). Short texts — artifact summaries and
 * every reason (a deferred item's, `fail`'s, a forced completion's, a skipped refactor's) — keep at most
 * 500 code points; long texts (artifact contents) at most 64 Ki code points. Longer input is cut by code
 * points, never inside a character: artifacts say `truncated: true`, reasons add a `TextTruncated` warning.
 */
export const SUMMARY_MAX_CODE_POINTS = 500;
export const REASON_MAX_CODE_POINTS = SUMMARY_MAX_CODE_POINTS;
export const CONTENT_MAX_CODE_POINTS = 64 * 1024;

/** Cut to at most `max` code points (util/quoted.ts): the text and whether it was cut. */
export { truncateCodePoints } from '../util/quoted.js';
