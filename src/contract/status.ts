/**
 * The status and kind vocabularies of the state database (docs/state.md §2–§3), shared by the state library
 * and the output schemas, and the one rule of item progress: data and pure functions only, so the contract
 * can name them without importing the state library.
 */

export const STEP_STATUSES = ['pending', 'claimed', 'in_progress', 'completed', 'failed', 'needs_human'] as const;
export type StepStatus = (typeof STEP_STATUSES)[number];

export const ITEM_STATUSES = ['open', 'in_progress', 'completed', 'deferred'] as const;
export type ItemStatus = (typeof ITEM_STATUSES)[number];

/**
 * Item progress as every view shows it (docs/state.md §5): an item is done only when completed. A deferred
 * item is closed (it does not hold back a strict completion, src/state/status.ts TERMINAL) but not done: it
 * counts in the total, not in `done`, and views name it apart.
 */
export function itemProgress(c: { open: number; in_progress: number; completed: number; deferred: number }): {
  done: number;
  deferred: number;
  total: number;
} {
  return { done: c.completed, deferred: c.deferred, total: c.open + c.in_progress + c.completed + c.deferred };
}

/** `12/13`, with ` (1 deferred)` when some are: how a view writes item progress. */
export function itemProgressText(p: { done: number; deferred: number; total: number }): string {
  return `${p.done}/${p.total}${deferredNote(p)}`;
}

/**
 * A person's notes on one line (status, state show; docs/state.md §3.11): the first line, cut to `max`
 * characters, quoted, `…` inside the quotes when anything was left out.
 */
export function noteLine(notes: string, max = 60): string {
  const lines = notes.trim().split('\n');
  const first = [...(lines[0] ?? '').trimEnd()];
  const cut = first.length > max || lines.length > 1;
  return JSON.stringify(cut ? `${first.slice(0, max).join('')} …` : first.join(''));
}

/** ` (1 deferred)`, or '' when none is. */
export function deferredNote(p: { deferred: number }): string {
  return p.deferred > 0 ? ` (${p.deferred} deferred)` : '';
}

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
/** `state show --items`: which checklist items are listed (src/state/show.ts ItemsMode). */
export const SHOW_ITEMS = ['active', 'all', 'none'] as const;

export type ArtifactKind = (typeof ARTIFACT_KINDS)[number];
