/** Row shapes of state.db (migrations/0001_init.sql) as the queries return them. */
import type { ItemKind, ItemStatus, PlanStatus, RefactorStatus, StepStatus } from './status.js';

export interface PlanRow {
  plan_path: string;
  plan_hash: string;
  structure_hash: string;
  phase_title: string | null;
  status: PlanStatus;
  implicit_sequential: number;
  steps_total: number;
  steps_completed: number;
  created_at: string;
  updated_at: string;
}

export interface StepRow {
  plan_path: string;
  anchor: string;
  parent_anchor: string | null;
  top_anchor: string;
  step_id: string;
  step_index: number;
  depth: number;
  title: string;
  status: StepStatus;
  claimed_by: string | null;
  claimed_at: string | null;
  lease_expires_at: string | null;
  heartbeat_at: string | null;
  started_at: string | null;
  completed_at: string | null;
  commit_hash: string | null;
  complete_reason: string | null;
  attempt: number;
  failures: number;
  previous_owner: string | null;
  fail_reason: string | null;
  completed_via: 'complete' | 'force' | 'reconcile' | null;
  commit_message: string | null;
  unmet_deps: number;
  /** needs_human, or pending after `decide --approve`: the commit the review gate kept (docs/state.md §3.11). */
  review_commit: string | null;
  human_decision: 'approved' | null;
  /** `decide --revise`: the notes for the next brief. */
  human_notes: string | null;
  /** The step's `**Touches:**` globs as a JSON array, or null (docs/state.md §3.12). */
  touches: string | null;
}

export interface ItemRow {
  id: number;
  plan_path: string;
  step_anchor: string;
  kind: ItemKind;
  ordinal: number;
  depth: number;
  text: string;
  status: ItemStatus;
  reason: string | null;
  updated_at: string | null;
}

export interface RefactorRow {
  plan_path: string;
  step_anchor: string;
  ordinal: number;
  op_text: string;
  status: RefactorStatus;
  snapshot_before: string | null;
  snapshot_after: string | null;
  exit_code: number | null;
  result_json: string | null;
  updated_at: string;
}

export interface EventRow {
  id: number;
  at: string;
  plan_path: string | null;
  step_anchor: string | null;
  command: string;
  actor: string;
  attempt: number | null;
  details_json: string;
}

export interface ArtifactRow {
  id: number;
  plan_path: string;
  step_anchor: string;
  kind: string;
  summary: string;
  content: string | null;
  recorded_at: string;
}

/** Per-status counts of one kind of item. */
export interface Counts {
  open: number;
  in_progress: number;
  completed: number;
  deferred: number;
}

export function emptyCounts(): Counts {
  return { open: 0, in_progress: 0, completed: 0, deferred: 0 };
}

/** One run's usage (migrations/0002_usage.sql). */
export interface UsageRow {
  id: number;
  plan_path: string;
  step_anchor: string;
  attempt: number;
  role: string;
  input_tokens: number | null;
  output_tokens: number | null;
  cache_read_tokens: number | null;
  cache_write_tokens: number | null;
  cost_usd: number | null;
  recorded_at: string;
}
