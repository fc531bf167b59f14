/**
 * The parser's output (docs/plan-format.md §2): plain data, no methods, JSON-serializable.
 */

export type ItemKind = 'task' | 'test' | 'checkpoint';
export const ITEM_KINDS: readonly ItemKind[] = ['task', 'test', 'checkpoint'];

export type Severity = 'error' | 'warning' | 'info';

export interface Diagnostic {
  code: string;
  severity: Severity;
  message: string;
  /** 1-based line in the plan file; absent only when the issue has no location. */
  line?: number;
  anchor?: string;
}

export interface PlanItem {
  kind: ItemKind;
  /** 0-based position among the step's items of this kind, in document order. */
  ordinal: number;
  /** List nesting depth (0 = top). */
  depth: number;
  text: string;
  checked: boolean;
  line: number;
}

export interface PlanRefactor {
  ordinal: number;
  /** The item's full text. */
  text: string;
  /** The trimmed content of the single backticked span (`op_text`), or null when there is not exactly one. */
  command: string | null;
  line: number;
}

export interface PlanStep {
  anchor: string;
  /** The label after "Step": `1`, `2.1`, `4.1a`, `PRE-6`. */
  id: string;
  title: string;
  /** Heading level (2–6). */
  level: number;
  parent_anchor: string | null;
  step_index: number;
  /** Declared dependencies (bare anchors, resolved), before implicit order and lifting. */
  depends_on: string[];
  /** Line of the step's first `**Depends on:**` paragraph (for diagnostics); absent when it has none. */
  depends_line?: number;
  commit_message: string | null;
  /** `**Commit:** N/A`: the driver makes no commit for this step (a step with no message gets a default one). */
  no_commit?: true;
  references: string | null;
  /** Line of the step's `**References:**` paragraph (for diagnostics); absent when it has none. */
  references_line?: number;
  items: PlanItem[];
  refactors: PlanRefactor[];
  /**
   * `**Touches:**` globs (docs/plan-format.md §2.5): the files the step expects to change; [] when it has
   * none. A step does not run while another whose globs overlap runs (docs/state.md §3.12).
   */
  touches: string[];
  /** Line of the step's first `**Touches:**` paragraph; absent when it has none. */
  touches_line?: number;
  line: number;
}

export interface PlanDecision {
  /** `D01`, `Q03`. */
  id: string;
  title: string;
  status: string | null;
  anchor: string | null;
  line: number;
}

export interface PlanAnchor {
  anchor: string;
  line: number;
}

export interface ParsedPlan {
  title: string | null;
  purpose: string | null;
  /** Metadata table rows, keys lowercased (`owner`, `status`, `last updated`, …). */
  metadata: Record<string, string>;
  steps: PlanStep[];
  decisions: PlanDecision[];
  /** Every explicit `{#anchor}` and derived step anchor in the document, in order (duplicates kept). */
  anchors: PlanAnchor[];
  implicit_sequential: boolean;
  diagnostics: Diagnostic[];
  /**
   * Effective dependency edges used for scheduling: after implicit order; `[from, to]` = from depends on to.
   * Not lifted (lifting is a state concern, docs/state.md §3), but W007 marks cross-subtree substep targets.
   */
  edges: [string, string][];
  /** SHA-256 hex of the canonical structure (docs/plan-format.md §2). */
  structure_hash: string;
  /** SHA-256 hex of the file bytes. */
  plan_hash: string;
}
