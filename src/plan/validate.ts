/**
 * The plan validator (docs/plan-format.md §3). Pure: takes a `ParsedPlan` (with the parser's own
 * diagnostics: E000, E005, E008, E010, P001, P008, P009, P010, P011) and returns every issue, filtered by level
 * and sorted by line, the file's own errors first.
 *
 * Levels: `lenient` reports errors only; `normal` errors and warnings; `strict` adds info and treats
 * warnings as errors (`valid: false` when there is any warning).
 */
import { touchesGlobProblem } from './touches.js';
import { newNameProblem, parseOpText } from '../kernel/light.js';
import { MAX_ANCHOR } from '../contract/inputs/limits.js';
import { isAnchor } from './anchors.js';
import { buildGraph, findCycles } from './graph.js';
import { liftEdges, topLevelMap } from './lift.js';
import type { Diagnostic, ParsedPlan, PlanStep, Severity } from './types.js';
import { planNameDiagnostic } from './resolve.js';

export type ValidationLevel = 'lenient' | 'normal' | 'strict';
export const VALIDATION_LEVELS: readonly ValidationLevel[] = ['lenient', 'normal', 'strict'];

export interface ValidationResult {
  valid: boolean;
  diagnostics: Diagnostic[];
}

/**
 * Errors about the file itself (not UTF-8, too large to read): they explain the others, so they come first
 * (docs/plan-format.md §3.1). A file too large is not read, so nothing else is said of it.
 */
const FILE_ERRORS = ['E008', 'E005'];

export function validatePlan(plan: ParsedPlan, level: ValidationLevel = 'normal'): ValidationResult {
  const unread = plan.diagnostics.some((d) => d.code === 'E008');
  const all = [...plan.diagnostics, ...(unread ? [] : checkPlan(plan))];
  const shown = all.filter(
    (d) =>
      d.severity === 'error' ||
      (d.severity === 'warning' && level !== 'lenient') ||
      (d.severity === 'info' && level === 'strict'),
  );
  const first = (d: Diagnostic) => (FILE_ERRORS.includes(d.code) ? 0 : 1);
  shown.sort((a, b) => first(a) - first(b) || (a.line ?? 0) - (b.line ?? 0));
  const valid = !shown.some((d) => d.severity === 'error' || (level === 'strict' && d.severity === 'warning'));
  return { valid, diagnostics: shown };
}

/**
 * A plan file's findings: E004 first when the file is not named by a valid slug (docs/plan-format.md §1),
 * then the validator's. What `validate`, `state init` and `status` each report of a file.
 */
export function validatePlanFile(plan: ParsedPlan, planPath: string, level: ValidationLevel): ValidationResult {
  const checked = validatePlan(plan, level);
  const badName = planNameDiagnostic(planPath);
  if (!badName) return checked;
  return { valid: false, diagnostics: [badName, ...checked.diagnostics] };
}

/** Every validator finding (all severities), unsorted, excluding the parser's own diagnostics. */
function checkPlan(plan: ParsedPlan): Diagnostic[] {
  const out: Diagnostic[] = [];
  const add = (code: string, severity: Severity, message: string, line?: number, anchor?: string): void => {
    const d: Diagnostic = { code, severity, message };
    if (line !== undefined) d.line = line;
    if (anchor !== undefined) d.anchor = anchor;
    out.push(d);
  };

  if (plan.steps.length === 0) add('E001', 'error', 'no steps found (expected headings like "#### Step 1: Title")');
  checkAnchors(plan, add);
  checkDependencies(plan, add);
  const known = {
    decisions: new Set(plan.decisions.map((d) => d.id)),
    anchors: new Set(plan.anchors.map((a) => a.anchor)),
  };
  for (const s of plan.steps) checkStep(known, s, add);
  checkMetadata(plan, add);
  if (plan.implicit_sequential) {
    add(
      'I001',
      'info',
      'the plan has no Depends-on lines: top-level steps run in document order (implicit sequential order)',
    );
  }
  return out;
}

type Add = (code: string, severity: Severity, message: string, line?: number, anchor?: string) => void;

function checkAnchors(plan: ParsedPlan, add: Add): void {
  // A step anchor is a state command's step argument: one longer than those take could never be claimed.
  for (const s of plan.steps) {
    if ([...s.anchor].length > MAX_ANCHOR)
      add(
        'E007',
        'error',
        `step anchor "${s.anchor.slice(0, 40)}…" is ${[...s.anchor].length} characters long; a step anchor has at most ${MAX_ANCHOR} (the longest step argument state commands take)`,
        s.line,
        s.anchor,
      );
  }
  const first = new Map<string, number>();
  for (const { anchor, line } of plan.anchors) {
    if (!isAnchor(anchor)) {
      add(
        'E007',
        'error',
        `anchor "${anchor}" has an invalid form (expected lowercase letters, digits and "-", e.g. {#step-1})`,
        line,
        anchor,
      );
    }
    const prev = first.get(anchor);
    if (prev === undefined) first.set(anchor, line);
    else
      add(
        'E006',
        'error',
        `duplicate anchor "${anchor}" on line ${line} (first defined on line ${prev})`,
        line,
        anchor,
      );
  }
}

function checkDependencies(plan: ParsedPlan, add: Add): void {
  const byAnchor = new Map<string, PlanStep>();
  for (const s of plan.steps) if (!byAnchor.has(s.anchor)) byAnchor.set(s.anchor, s);
  const top = topLevelMap(plan);
  const ancestors = (a: string): Set<string> => {
    const set = new Set<string>();
    let cur = byAnchor.get(a)?.parent_anchor ?? null;
    while (cur !== null && !set.has(cur)) {
      set.add(cur);
      cur = byAnchor.get(cur)?.parent_anchor ?? null;
    }
    return set;
  };
  for (const s of plan.steps) {
    const line = s.depends_line ?? s.line;
    const mine = ancestors(s.anchor);
    for (const d of s.depends_on) {
      if (mine.has(d)) {
        add('E012', 'error', `${s.anchor} depends on its own ancestor ${d}`, line, s.anchor);
        continue;
      }
      if (ancestors(d).has(s.anchor)) {
        add('E012', 'error', `${s.anchor} depends on its own descendant ${d}`, line, s.anchor);
        continue;
      }
      const target = byAnchor.get(d);
      if (target && target.parent_anchor !== null && top.get(d) !== top.get(s.anchor)) {
        add(
          'W007',
          'warning',
          `${s.anchor} depends on ${d}, a substep of ${top.get(d)}; it is scheduled as a dependency on ${top.get(d)}`,
          line,
          s.anchor,
        );
      }
    }
  }

  const order = (a: string): number => byAnchor.get(a)?.step_index ?? Number.MAX_SAFE_INTEGER;
  const lineOf = (a: string): number => {
    const s = byAnchor.get(a);
    return s?.depends_line ?? s?.line ?? 1;
  };
  // A step whose anchor an earlier step already has is reported as E006; its edges would join the two
  // steps into one node and show a cycle that is only the duplicate (two steps `step-1` in implicit order
  // give `step-1 -> step-1`). Cycles are looked for among the first step of each anchor only.
  const graphPlan = plan.steps.length === byAnchor.size ? plan : withoutDuplicateSteps(plan, byAnchor);
  // Declared (and implicit) edges.
  const declared = findCycles(buildGraph(byAnchor.keys(), graphPlan.edges), order);
  const covered: Set<string>[] = [];
  for (const { members, cycle } of declared) {
    add('E011', 'error', `dependency cycle: ${cycleText(cycle)}`, lineOf(cycle[0]!), cycle[0]);
    covered.push(new Set(members.map((m) => top.get(m) ?? m)));
  }
  // After lifting: only cycles that are not the image of a declared cycle.
  const tops = graphPlan.steps.filter((s) => s.parent_anchor === null).map((s) => s.anchor);
  const lifted = findCycles(buildGraph(tops, liftEdges(graphPlan).cross), order);
  for (const { members, cycle } of lifted) {
    const same = covered.some((c) => c.size === members.length && members.every((m) => c.has(m)));
    if (same) continue;
    add(
      'E011',
      'error',
      `dependency cycle after lifting substep dependencies to their top-level steps: ${cycleText(cycle)}`,
      lineOf(cycle[0]!),
      cycle[0],
    );
  }
}

/** The most steps of a cycle a message names: a cycle through thousands of steps would be a line of megabytes. */
const CYCLE_SHOWN = 12;

/** `a -> b -> c -> a`, or, for a longer cycle, its first and last steps around `… (N more) …`. */
function cycleText(cycle: readonly string[]): string {
  if (cycle.length <= CYCLE_SHOWN + 1) return cycle.join(' -> ');
  const head = cycle.slice(0, CYCLE_SHOWN - 2);
  const tail = cycle.slice(-3);
  return `${head.join(' -> ')} -> … (${cycle.length - 1 - head.length - 2} more) … -> ${tail.join(' -> ')}`;
}
/**
 * The plan with only the first step of each anchor: its declared dependencies, and the implicit order
 * of its top-level steps when the plan has no Depends-on line (as the parser builds `edges`).
 */
function withoutDuplicateSteps(
  plan: ParsedPlan,
  first: ReadonlyMap<string, PlanStep>,
): Pick<ParsedPlan, 'steps' | 'edges'> {
  const steps = plan.steps.filter((s) => first.get(s.anchor) === s);
  const edges: [string, string][] = [];
  for (const s of steps) for (const d of s.depends_on) edges.push([s.anchor, d]);
  if (plan.implicit_sequential) {
    const tops = steps.filter((s) => s.parent_anchor === null);
    for (let k = 1; k < tops.length; k++) edges.push([tops[k]!.anchor, tops[k - 1]!.anchor]);
  }
  return { steps, edges };
}

interface Known {
  decisions: ReadonlySet<string>;
  anchors: ReadonlySet<string>;
}

function checkStep(known: Known, s: PlanStep, add: Add): void {
  const counts = { task: 0, test: 0, checkpoint: 0 };
  for (const it of s.items) counts[it.kind]++;
  if (counts.task === 0) add('W001', 'warning', `${s.anchor} has no tasks`, s.line, s.anchor);
  if (counts.test === 0) add('W002', 'warning', `${s.anchor} has no tests`, s.line, s.anchor);
  if (counts.checkpoint === 0) add('W003', 'warning', `${s.anchor} has no checkpoints`, s.line, s.anchor);
  if (s.references === null) add('W004', 'warning', `${s.anchor} has no References line`, s.line, s.anchor);
  else checkCitations(known, s, add);

  for (const g of s.touches) {
    const problem = touchesGlobProblem(g);
    if (problem)
      add('E021', 'error', `${s.anchor} Touches ${JSON.stringify(g)}: ${problem}`, s.touches_line ?? s.line, s.anchor);
  }

  for (const r of s.refactors) {
    const where = `${s.anchor} Refactors item ${r.ordinal}`;
    if (r.command === null) {
      add('E020', 'error', `${where} must contain exactly one backticked kernel command`, r.line, s.anchor);
      continue;
    }
    const parsed = parseOpText(r.command);
    if (!parsed.ok) {
      add('E020', 'error', `${where}: ${parsed.reason} (in \`${r.command}\`)`, r.line, s.anchor);
    } else if (parsed.op === 'rename-symbol') {
      const file = (parsed.args.symbol ?? parsed.args.at)?.file;
      const problem = file === undefined ? null : newNameProblem(file, parsed.args.to);
      if (problem) add('E020', 'error', `${where}: ${problem} (in \`${r.command}\`)`, r.line, s.anchor);
      if (parsed.args.at)
        add('W008', 'warning', `${where} uses --at; positions drift, prefer --symbol FILE::Name`, r.line, s.anchor);
    }
  }
}

const DECISION_CITE_RE = /\[([DQ]\d+[a-z]?)\]/g;
const ANCHOR_CITE_RE = /(?:^|[\s(,;[])#([a-z0-9][a-z0-9-]*)/g;

function checkCitations({ decisions, anchors }: Known, s: PlanStep, add: Add): void {
  const refs = s.references ?? '';
  const line = s.references_line ?? s.line;
  const seen = new Set<string>();
  for (const m of refs.matchAll(DECISION_CITE_RE)) {
    const id = m[1]!;
    if (decisions.has(id) || seen.has(id)) continue;
    seen.add(id);
    add('W005', 'warning', `${s.anchor} cites [${id}], which is never defined`, line, s.anchor);
  }
  for (const m of refs.matchAll(ANCHOR_CITE_RE)) {
    const a = m[1]!;
    // `#123` is an issue or PR number, not an anchor.
    if (/^[0-9]+$/.test(a) || anchors.has(a) || seen.has('#' + a)) continue;
    seen.add('#' + a);
    add('W005', 'warning', `${s.anchor} cites #${a}, which is not defined`, line, s.anchor);
  }
}

const REQUIRED_METADATA = ['owner', 'status', 'last updated'];

function checkMetadata(plan: ParsedPlan, add: Add): void {
  for (const key of REQUIRED_METADATA) {
    const v = (plan.metadata[key] ?? '').trim();
    const label = key[0]!.toUpperCase() + key.slice(1);
    if (v === '') add('W006', 'warning', `metadata ${label} is missing`);
    else if (/<[^<>]*>/.test(v)) add('W006', 'warning', `metadata ${label} is a placeholder (${v})`);
  }
}
