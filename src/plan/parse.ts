/**
 * The tugplan parser (docs/plan-format.md §2) on markdown-it tokens. `parsePlan` never throws: anything it
 * cannot understand becomes a diagnostic. Hot state commands must reach this module through a dynamic
 * `import()` (it loads markdown-it).
 */
import { MAX_INPUT_BYTES } from '../contract/inputs/limits.js';
import { sha256Hex } from '../util/hash.js';
import { DepResolver, tokenizeDepends, type DepToken } from './deps.js';
import { commitLabel, readLabel } from './labels.js';
import { inlineChildren, MAX_NESTING, tokenize, type Token } from './markdown.js';
import { structureHash } from './structure.js';
import {
  deriveStepAnchor,
  isExecutionStepsHeading,
  isStepNearMiss,
  joinLines,
  knownLabel,
  labelHeading,
  matchCheckbox,
  matchDecision,
  matchStepHeading,
  planTitle,
  splitAnchor,
  type ChecklistSection,
} from './syntax.js';
import type { Diagnostic, ItemKind, ParsedPlan, PlanAnchor, PlanDecision, PlanStep } from './types.js';

interface OpenStep {
  step: PlanStep;
  level: number;
  section: ChecklistSection | null;
  deps: { tokens: DepToken[]; line: number }[];
  hasDependsLine: boolean;
  /** Items so far per kind: the next item's ordinal (a running count keeps the parse linear). */
  counts: Record<ItemKind, number>;
}

const FENCE_HEADING_RE = /^ {0,3}(#{2,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/;
/** A line of a paragraph's source that starts like a label: `**Tasks:**`, `__Depends on:__`. */
const GLUED_LABEL_RE = /^\s*(\*\*|__)([^*_\n]+?):\s*\1/;
const LINE_ANCHOR_RE = /\{#([^{}\s]*)\}\s*$/;

/**
 * Parses a plan. Never throws; `source` may be any bytes: invalid UTF-8 is an error (E005, on the first line
 * that has it), and the rest is still read (decoded with replacement) so the other diagnostics come too.
 */
export function parsePlan(source: string | Uint8Array): ParsedPlan {
  let plan_hash = sha256Hex('');
  try {
    plan_hash = sha256Hex(typeof source === 'string' ? Buffer.from(source, 'utf8') : source);
    const size = typeof source === 'string' ? Buffer.byteLength(source, 'utf8') : source.length;
    // Not read at all: no plan is this large, and a file that is would be stored whole in the state.
    if (size > MAX_INPUT_BYTES) return tooLarge(plan_hash, size);
    let text = typeof source === 'string' ? source : new TextDecoder('utf-8', { fatal: false }).decode(source);
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    const b = new PlanBuilder(plan_hash);
    const badLine = typeof source === 'string' ? null : firstNonUtf8Line(source);
    if (badLine !== null)
      b.diag(
        'E005',
        'error',
        `line ${badLine} is not valid UTF-8: the file is corrupt or in another encoding (save it as UTF-8)`,
        badLine,
      );
    return b.run(text);
  } catch (e) {
    // Defensive: a bug (or a stack overflow on a pathological input) must not escape as an exception.
    return {
      ...emptyPlan(plan_hash),
      diagnostics: [
        {
          code: 'E000',
          severity: 'error',
          message: `the plan could not be parsed: ${(e as Error)?.message ?? String(e)}`,
          line: 1,
        },
      ],
    };
  }
}

function tooLarge(plan_hash: string, size: number): ParsedPlan {
  const mib = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MiB`;
  const message = `the file is ${mib(size)}; a plan is at most ${mib(MAX_INPUT_BYTES)} (is it the right file?)`;
  return { ...emptyPlan(plan_hash), diagnostics: [{ code: 'E008', severity: 'error', message }] };
}

/** The 1-based line of the first byte sequence that is not UTF-8, or null when every byte decodes. */
function firstNonUtf8Line(bytes: Uint8Array): number | null {
  const strict = new TextDecoder('utf-8', { fatal: true });
  try {
    strict.decode(bytes);
    return null;
  } catch {
    // Only on a bad file: line by line (a newline byte never occurs inside a UTF-8 sequence).
    let line = 1;
    let start = 0;
    for (let i = 0; i <= bytes.length; i++) {
      if (i < bytes.length && bytes[i] !== 0x0a) continue;
      try {
        strict.decode(bytes.subarray(start, i));
      } catch {
        return line;
      }
      line++;
      start = i + 1;
    }
    return 1;
  }
}

function emptyPlan(plan_hash: string): ParsedPlan {
  const base = { steps: [] as PlanStep[], edges: [] as [string, string][] };
  return {
    title: null,
    purpose: null,
    metadata: {},
    steps: base.steps,
    decisions: [],
    anchors: [],
    implicit_sequential: false,
    diagnostics: [],
    edges: base.edges,
    structure_hash: structureHash(base),
    plan_hash,
  };
}

/** One parse. Holds the walk state; `run` returns the plan. */
class PlanBuilder {
  private title: string | null = null;
  private purpose: string | null = null;
  private metadata: Record<string, string> | null = null;
  private readonly steps: PlanStep[] = [];
  private readonly open: OpenStep[] = [];
  private readonly all: OpenStep[] = [];
  private readonly decisions: PlanDecision[] = [];
  private readonly anchors: PlanAnchor[] = [];
  private readonly diagnostics: Diagnostic[] = [];
  /** 'none' = no Execution Steps heading in the plan: every step heading counts. */
  private scope: 'none' | 'before' | 'in' | 'after' = 'none';
  private scopeLevel = 0;
  /** The line of the first Execution Steps heading (the one whose scope holds the steps). */
  private scopeLine = 0;
  private listDepth = 0;
  private itemDepth = 0;
  /** Labels found glued to the line above (P011), for the E010 a glued label under Depends on draws. */
  private readonly glued: { label: string; line: number; block: number }[] = [];

  constructor(private readonly plan_hash: string) {}

  run(text: string): ParsedPlan {
    const { tokens, nestingCutLine } = tokenize(text);
    if (nestingCutLine !== null) {
      this.diag(
        'E002',
        'error',
        `lists or block quotes are nested too deeply (at most ${MAX_NESTING} levels, a list counting two): line ${nestingCutLine} and everything after it in the enclosing block (usually the rest of the plan) cannot be read`,
        nestingCutLine,
      );
    }
    if (tokens.some((t, i) => t.type === 'heading_open' && isExecutionStepsHeading(tokens[i + 1]?.content ?? ''))) {
      this.scope = 'before';
    }
    for (let i = 0; i < tokens.length; i++) {
      const t = tokens[i]!;
      switch (t.type) {
        case 'heading_open':
          this.heading(t, tokens[i + 1]);
          break;
        case 'paragraph_open':
          this.paragraphAnchors(tokens[i + 1]);
          if (this.itemDepth === 0) this.paragraph(t, tokens[i + 1]);
          break;
        case 'bullet_list_open':
        case 'ordered_list_open':
          this.listDepth++;
          break;
        case 'bullet_list_close':
        case 'ordered_list_close':
          this.listDepth--;
          break;
        case 'list_item_open':
          this.itemDepth++;
          if (tokens[i + 1]?.type === 'paragraph_open' && tokens[i + 2]?.type === 'inline')
            this.listItem(t, tokens[i + 2]!);
          break;
        case 'list_item_close':
          this.itemDepth--;
          break;
        case 'fence':
          this.fence(t);
          break;
        case 'table_open':
          i = this.table(tokens, i);
          break;
        default:
          break;
      }
    }
    return this.finish();
  }

  private get current(): OpenStep | undefined {
    return this.open[this.open.length - 1];
  }

  private stepsCount(): boolean {
    return this.scope === 'none' || this.scope === 'in';
  }

  private heading(open: Token, inline: Token | undefined): void {
    const level = Number(open.tag.slice(1)) || 1;
    const line = lineOf(open);
    const raw = inline?.content ?? '';
    const { text, anchor } = splitAnchor(raw);
    if (this.title === null && level <= 2) this.title = planTitle(raw);

    if (this.scope === 'in' && level <= this.scopeLevel) this.scope = 'after';
    if (this.scope === 'before' && isExecutionStepsHeading(raw)) {
      this.scope = 'in';
      this.scopeLevel = level;
      this.scopeLine = line;
    } else if (this.scope !== 'none' && isExecutionStepsHeading(raw)) {
      // Only the first such heading scopes the steps: the step headings under this one would be silently
      // ordinary headings (docs/plan-format.md, P010).
      this.diag(
        'P010',
        'warning',
        `a second "Execution Steps" heading "${clip(text)}" (the first is on line ${this.scopeLine}): only step headings in the scope of the first are steps; merge the two sections or rename this heading`,
        line,
      );
    }
    while (this.open.length > 0 && this.current!.level >= level) this.open.pop();

    const decision = matchDecision(text);
    if (decision) this.decisions.push({ ...decision, anchor, line });

    const step = this.stepsCount() && level >= 2 ? matchStepHeading(text) : null;
    if (step) {
      const stepAnchor = anchor ?? deriveStepAnchor(step.id);
      this.anchors.push({ anchor: stepAnchor, line });
      const parent = this.current;
      const s: PlanStep = {
        anchor: stepAnchor,
        id: step.id,
        title: step.title,
        level,
        parent_anchor: parent ? parent.step.anchor : null,
        step_index: this.steps.length,
        depends_on: [],
        commit_message: null,
        references: null,
        items: [],
        refactors: [],
        touches: [],
        line,
      };
      const o: OpenStep = {
        step: s,
        level,
        section: null,
        deps: [],
        hasDependsLine: false,
        counts: { task: 0, test: 0, checkpoint: 0 },
      };
      this.steps.push(s);
      this.all.push(o);
      this.open.push(o);
      return;
    }
    if (anchor !== null) this.anchors.push({ anchor, line });
    if (this.stepsCount() && isStepNearMiss(text)) {
      this.diag(
        'P001',
        'warning',
        `heading "${clip(text)}" looks like a step but is not one (expected "Step <id>: <title>")`,
        line,
      );
    }
    const cur = this.current;
    if (cur) cur.section = labelHeading(text);
  }

  /** A `{#anchor}` at the end of a paragraph line (`**Spec S01: Title** {#s01-title}`), outside code spans. */
  private paragraphAnchors(inline: Token | undefined): void {
    if (!inline?.map || !inline.content.includes('{#')) return;
    const lines = inline.content.split('\n');
    let plain: string | null = null;
    for (let k = 0; k < lines.length; k++) {
      const m = LINE_ANCHOR_RE.exec(lines[k]!);
      if (!m) continue;
      plain ??= inlineChildren(inline)
        .map((c) => (c.type === 'text' || c.type === 'text_special' ? c.content : '\n'))
        .join('');
      if (!plain.includes(m[0].trim())) continue;
      this.anchors.push({ anchor: m[1]!, line: inline.map[0] + 1 + k });
    }
  }

  private paragraph(open: Token, inline: Token | undefined): void {
    if (!inline) return;
    const label = readLabel(inline);
    const cur = this.current;
    if (cur) this.gluedLabels(inline, label ? `the **${label.name}:** paragraph` : 'the paragraph above');
    if (!label) return;
    if (!cur) {
      if (this.purpose === null && label.name.toLowerCase() === 'purpose') this.purpose = joinLines(label.rest) || null;
      return;
    }
    const known = knownLabel(label.name);
    if (known === null) return;
    const line = lineOf(open);
    switch (known) {
      case 'depends':
        cur.section = null;
        cur.hasDependsLine = true;
        if (cur.step.depends_line === undefined) cur.step.depends_line = line;
        cur.deps.push({ tokens: tokenizeDepends(label.rest), line });
        break;
      case 'commit':
        cur.section = null;
        if (cur.step.commit_message === null && !cur.step.no_commit) {
          const commit = commitLabel(label);
          cur.step.commit_message = commit.message;
          if (commit.declined) cur.step.no_commit = true;
        }
        break;
      case 'references':
        cur.section = null;
        if (cur.step.references_line === undefined) {
          cur.step.references = joinLines(label.rest) || null;
          cur.step.references_line = line;
        }
        break;
      case 'touches':
        cur.section = null;
        if (cur.step.touches_line === undefined) {
          cur.step.touches = splitTouches(joinLines(label.rest));
          cur.step.touches_line = line;
        }
        break;
      default:
        cur.section = known;
    }
  }

  private listItem(open: Token, inline: Token): void {
    const cur = this.current;
    if (!cur) return;
    this.gluedLabels(inline, `the list item of line ${lineOf(open)}`);
    const box = matchCheckbox(inline.content);
    if (!box) return;
    const line = lineOf(open);
    const text = joinLines(inline.content).slice(3).trimStart();
    const step = cur.step;
    if (cur.section === 'refactor') {
      const spans = inlineChildren(inline).filter((c) => c.type === 'code_inline');
      const command = spans.length === 1 ? spans[0]!.content.trim() : null;
      step.refactors.push({ ordinal: step.refactors.length, text, command, line });
      return;
    }
    const kind = cur.section ?? 'task';
    if (cur.section === null) {
      this.diag(
        'P008',
        'warning',
        `checkbox in ${step.anchor} outside any Tasks/Tests/Checkpoint section (counted as a task)`,
        line,
        step.anchor,
      );
    }
    const ordinal = cur.counts[kind]++;
    step.items.push({ kind, ordinal, depth: Math.max(0, this.listDepth - 1), text, checked: box.checked, line });
  }

  /**
   * P011: a known label on a later line of a paragraph or list item, with no blank line before it. Markdown
   * reads it as that block's text (docs/plan-format.md §2.1), so its section, References or Depends on is
   * lost and W002–W004, P008 or E010 follow; the warning names the line that needs a blank line above it.
   */
  private gluedLabels(inline: Token, block: string): void {
    if (!inline.map || !/\n\s*(\*\*|__)/.test(inline.content)) return;
    const lines = inline.content.split('\n');
    for (let k = 1; k < lines.length; k++) {
      const m = GLUED_LABEL_RE.exec(lines[k]!);
      if (!m || knownLabel(m[2]!) === null) continue;
      const line = inline.map[0] + 1 + k;
      const label = `**${m[2]!.trim()}:**`;
      this.glued.push({ label, line, block: inline.map[0] + 1 });
      this.diag(
        'P011',
        'warning',
        `${label} on line ${line} is glued to the line above, so it is read as part of ${block}, not as a label: put a blank line before it (docs/plan-format.md §2.1)`,
        line,
        this.current!.step.anchor,
      );
    }
  }

  private fence(t: Token): void {
    if (!this.stepsCount() || !t.map) return;
    const lines = t.content.split('\n');
    for (let k = 0; k < lines.length; k++) {
      const m = FENCE_HEADING_RE.exec(lines[k]!);
      if (!m) continue;
      const { text } = splitAnchor(m[2] ?? '');
      if (matchStepHeading(text)) {
        this.diag('P009', 'warning', `step heading "${clip(text)}" inside a code fence is ignored`, t.map[0] + 2 + k);
      }
    }
  }

  /** Reads a table; the first `Field | Value` table becomes the metadata. Returns the table_close index. */
  private table(tokens: Token[], start: number): number {
    const rows: string[][] = [];
    let row: string[] | null = null;
    let i = start;
    for (; i < tokens.length; i++) {
      const t = tokens[i]!;
      if (t.type === 'table_close') break;
      if (t.type === 'tr_open') row = [];
      else if (t.type === 'tr_close' && row) rows.push(row);
      else if (t.type === 'inline' && row) row.push(t.content.trim());
    }
    const header = rows[0];
    if (
      this.metadata === null &&
      header?.length === 2 &&
      header[0]!.toLowerCase() === 'field' &&
      header[1]!.toLowerCase() === 'value'
    ) {
      const md: Record<string, string> = {};
      for (const r of rows.slice(1)) {
        const key = (r[0] ?? '').trim().toLowerCase();
        if (key !== '' && !(key in md)) md[key] = (r[1] ?? '').trim();
      }
      this.metadata = md;
    }
    return i;
  }

  private finish(): ParsedPlan {
    const resolver = new DepResolver(this.steps);
    let anyDepends = false;
    for (const o of this.all) {
      if (o.hasDependsLine) anyDepends = true;
      const deps: string[] = [];
      for (const { tokens, line } of o.deps) {
        for (const tok of tokens) {
          const target = resolver.resolve(tok);
          if (target === null) {
            // `**Tasks:**` glued to the Depends on line is read as one of its dependencies (P011).
            const g = /^(\*\*|__)/.test(tok.raw) ? this.glued.find((x) => x.block === line) : undefined;
            const why = g
              ? `: it is the label on line ${g.line}, glued to the Depends on line; put a blank line before it (docs/plan-format.md §2.1)`
              : '';
            this.diag(
              'E010',
              'error',
              `${o.step.anchor} depends on "${tok.raw}", which names no step${why}`,
              line,
              o.step.anchor,
            );
          } else if (!deps.includes(target)) {
            deps.push(target);
          }
        }
      }
      o.step.depends_on = deps;
    }
    const implicit_sequential = this.steps.length > 0 && !anyDepends;
    const edges: [string, string][] = [];
    for (const s of this.steps) for (const d of s.depends_on) edges.push([s.anchor, d]);
    if (implicit_sequential) {
      const tops = this.steps.filter((s) => s.parent_anchor === null);
      for (let k = 1; k < tops.length; k++) edges.push([tops[k]!.anchor, tops[k - 1]!.anchor]);
    }
    const diagnostics = this.diagnostics.slice().sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
    return {
      title: this.title,
      purpose: this.purpose,
      metadata: this.metadata ?? {},
      steps: this.steps,
      decisions: this.decisions,
      anchors: this.anchors,
      implicit_sequential,
      diagnostics,
      edges,
      structure_hash: structureHash({ steps: this.steps, edges }),
      plan_hash: this.plan_hash,
    };
  }

  diag(code: string, severity: Diagnostic['severity'], message: string, line: number, anchor?: string): void {
    this.diagnostics.push(
      anchor === undefined ? { code, severity, message, line } : { code, severity, message, line, anchor },
    );
  }
}

function lineOf(t: Token): number {
  return (t.map?.[0] ?? 0) + 1;
}

function clip(s: string, n = 80): string {
  return s.length > n ? s.slice(0, n - 1) + '…' : s;
}

/**
 * `**Touches:** src/db/**, \`docs/*.md\``: the globs, comma-separated, backticks dropped, empty ones kept
 * (E021). A comma inside `{…}`, `[…]` or a backticked span belongs to its glob (`src/*.{ts,tsx}`).
 */
function splitTouches(text: string): string[] {
  if (text.trim() === '') return [''];
  const parts: string[] = [];
  let depth = 0;
  let tick = false;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '\\') i++;
    else if (ch === '`') tick = !tick;
    else if (tick) continue;
    else if (ch === '{' || ch === '[') depth++;
    else if ((ch === '}' || ch === ']') && depth > 0) depth--;
    else if (ch === ',' && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts.map((g) =>
    g
      .trim()
      .replace(/^`(.*)`$/, '$1')
      .trim(),
  );
}
