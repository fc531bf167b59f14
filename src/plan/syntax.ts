/**
 * The textual patterns of the plan format (docs/plan-format.md §2), applied to the inline source text of
 * one heading or paragraph (never to raw lines: markdown-it has already handled fences, code and HTML).
 * Pure functions, no markdown-it.
 */

/** A step id: `1`, `2.1`, `4.1a`, `PRE-6`, `4.3.5`. */
export const STEP_ID_SOURCE = '[0-9A-Za-z]+(?:[.-][0-9A-Za-z]+)*';

/** `Step <id>` + separator (`:`, `—`, `–`, `-`) + title. Case-insensitive. */
const STEP_HEADING_RE = new RegExp(`^step\\s+(${STEP_ID_SOURCE})\\s*[:\\u2014\\u2013-]\\s*(.*)$`, 'is');
/** `Step <id> <words>` (e.g. `Step 2 Summary`, `Step 4.2 Tests`): an ordinary heading, no diagnostic. */
const STEP_ID_WORDS_RE = new RegExp(`^step\\s+(${STEP_ID_SOURCE})\\s+(\\S.*)$`, 'is');
/** Starts with the word Step followed by whitespace, punctuation or the end (P001 candidates). */
const STEP_WORD_RE = /^step(?=$|[\s\p{P}\p{S}])/iu;
/** A trailing `{#anchor}` (any content, validated separately). */
const TRAILING_ANCHOR_RE = /\s*\{#([^{}]*)\}\s*$/;
const DECISION_RE = /^\[([DQ]\d+[a-z]?)\]\s*(.*?)\s*$/s;
const DECISION_STATUS_RE = /^(.*?)\s*\(([A-Za-z][A-Za-z _-]*)\)$/s;
const PHASE_PREFIX_RE = /^phase\s+[^\s:]+\s*:\s*/i;

export interface AnchorSplit {
  /** The text with a trailing `{#anchor}` removed, trimmed. */
  text: string;
  /** The anchor name as written (may be invalid), or null. */
  anchor: string | null;
}

/** Splits a trailing `{#anchor}` off heading text. */
export function splitAnchor(text: string): AnchorSplit {
  const m = TRAILING_ANCHOR_RE.exec(text);
  if (!m) return { text: text.trim(), anchor: null };
  return { text: text.slice(0, m.index).trim(), anchor: (m[1] ?? '').trim() };
}

export interface StepHeading {
  id: string;
  title: string;
}

/** Matches a step heading (text without its anchor). `Step 2 Summary` is not one. */
export function matchStepHeading(text: string): StepHeading | null {
  const m = STEP_HEADING_RE.exec(text);
  if (!m) return null;
  const title = (m[2] ?? '').trim();
  if (title === '') return null;
  return { id: m[1] ?? '', title };
}

/** The derived anchor of a step id: `step-` + lowercased id, `.` → `-`. */
export function deriveStepAnchor(id: string): string {
  return 'step-' + id.toLowerCase().replace(/\./g, '-');
}

/**
 * True when heading text (without anchor) should draw P001: it starts with the word "Step", is not a step
 * heading, and is not of the form `Step <id> <words>`.
 */
export function isStepNearMiss(text: string): boolean {
  if (!STEP_WORD_RE.test(text)) return false;
  if (matchStepHeading(text)) return false;
  if (STEP_ID_WORDS_RE.test(text)) return false;
  return true;
}

export type ChecklistSection = 'task' | 'test' | 'checkpoint' | 'refactor';

const CHECKLIST_LABELS: Record<string, ChecklistSection> = {
  tasks: 'task',
  tests: 'test',
  checkpoint: 'checkpoint',
  checkpoints: 'checkpoint',
  refactors: 'refactor',
};

export type KnownLabel = ChecklistSection | 'depends' | 'commit' | 'references' | 'touches';

/** The known label named by bold label text (without the colon), or null for an unknown label. */
export function knownLabel(name: string): KnownLabel | null {
  const key = name.trim().replace(/\s+/g, ' ').toLowerCase();
  const section = CHECKLIST_LABELS[key];
  if (section) return section;
  if (key === 'depends on') return 'depends';
  if (key === 'commit') return 'commit';
  if (key === 'references') return 'references';
  if (key === 'touches') return 'touches';
  return null;
}

/**
 * Whether a plan's raw bytes may declare `**Touches:**` (docs/plan-format.md §2.5): true wherever a Touches
 * label could be (and where only prose says `touches:`), false only when none can. A cheap test before any
 * parse, for a claim deciding whether to take the plan's Touches lock (docs/state.md §3.12).
 */
export function mayDeclareTouches(source: Buffer): boolean {
  return /touches\s*:/i.test(source.toString('latin1'));
}

/**
 * The checklist section named by a label heading (text after removing the trailing anchor and a leading
 * `Step <id>`): `##### Tasks`, `###### Step 4.2 Tests`. Null when the heading is not a label heading.
 */
export function labelHeading(textWithoutAnchor: string): ChecklistSection | null {
  let t = textWithoutAnchor.trim();
  const m = new RegExp(`^step\\s+${STEP_ID_SOURCE}\\s+`, 'i').exec(t);
  if (m) t = t.slice(m[0].length);
  return CHECKLIST_LABELS[t.trim().toLowerCase()] ?? null;
}

/** True when the heading text mentions "Execution Steps" (the steps scope heading). */
export function isExecutionStepsHeading(text: string): boolean {
  return /execution steps/i.test(text);
}

/** The plan title from the first level-1/2 heading: `Phase <id>:` prefix and trailing anchor removed. */
export function planTitle(text: string): string {
  return splitAnchor(text).text.replace(PHASE_PREFIX_RE, '').trim();
}

export interface DecisionHeading {
  id: string;
  title: string;
  status: string | null;
}

/** `[D01] Title (STATUS)` / `[Q01] Title (STATUS)` (text without anchor). */
export function matchDecision(text: string): DecisionHeading | null {
  const m = DECISION_RE.exec(text.trim());
  if (!m) return null;
  const rest = m[2] ?? '';
  const s = DECISION_STATUS_RE.exec(rest);
  return s
    ? { id: m[1] ?? '', title: (s[1] ?? '').trim(), status: s[2] ?? null }
    : { id: m[1] ?? '', title: rest, status: null };
}

/** Joins source lines: CRLF → LF, each line trimmed, empty lines dropped, joined with one space. */
export function joinLines(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '')
    .join(' ');
}

/** A checkbox marker at the start of an item's first paragraph. */
export function matchCheckbox(content: string): { checked: boolean; rest: string } | null {
  if (content.length < 3 || content[0] !== '[' || content[2] !== ']') return null;
  const c = content[1];
  if (c !== ' ' && c !== 'x' && c !== 'X') return null;
  return { checked: c !== ' ', rest: content.slice(3) };
}
