/**
 * The status and kind vocabularies of the state database (docs/state.md §2–§3), shared by the state library
 * and the output schemas: data only, so the contract can name them without importing the state library.
 */

export const STEP_STATUSES = ['pending', 'claimed', 'in_progress', 'completed', 'failed', 'needs_human'] as const;
export type StepStatus = (typeof STEP_STATUSES)[number];

export const ITEM_STATUSES = ['open', 'in_progress', 'completed', 'deferred'] as const;
export type ItemStatus = (typeof ITEM_STATUSES)[number];

export const ITEM_KINDS = ['task', 'test', 'checkpoint'] as const;
export type ItemKind = (typeof ITEM_KINDS)[number];

export const REFACTOR_STATUSES = ['open', 'applied', 'failed', 'skipped'] as const;
export type RefactorStatus = (typeof REFACTOR_STATUSES)[number];

export const PLAN_STATUSES = ['active', 'done', 'archived'] as const;
export type PlanStatus = (typeof PLAN_STATUSES)[number];

export const ARTIFACT_KINDS = [
  'architect_strategy',
  'reviewer_verdict',
  'auditor_summary',
  'coder_report',
  'refactor_report',
  'verification_report',
  'conflict_resolution',
  'note',
] as const;
export type ArtifactKind = (typeof ARTIFACT_KINDS)[number];
