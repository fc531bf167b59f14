/**
 * `**Depends on:**` values (docs/plan-format.md §2 rule 7): tokenizing the text and resolving tokens to step
 * anchors. Pure, no markdown-it.
 */

export type DepToken = { kind: 'anchor'; name: string; raw: string } | { kind: 'step'; id: string; raw: string };

/** Surrounding backticks, brackets and quotes, and trailing sentence punctuation, are not part of a token. */
function clean(word: string): string {
  return word.replace(/^[`'"([{<]+/, '').replace(/[`'")\]}>.;:!?]+$/, '');
}

/**
 * Tokens of a Depends-on value: `#anchor`, `anchor`, `Step <id>` or a link `[…](#anchor)`, separated by commas
 * and/or whitespace.
 * A leading `none` means no dependencies (the rest is commentary); a `none` token elsewhere is skipped.
 */
export function tokenizeDepends(text: string): DepToken[] {
  // A link to a step's anchor, `[Step 2](#step-2)`, names that anchor (its words are the reader's).
  const words = text
    .replace(/\[[^\]]*\]\(\s*(#[^)\s]+)\s*\)/g, ' $1 ')
    .split(/[\s,]+/)
    .map(clean)
    .filter((w) => w !== '');
  if (words.length === 0 || words[0]!.toLowerCase() === 'none') return [];
  const out: DepToken[] = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    const lower = w.toLowerCase();
    if (lower === 'none') continue;
    const next = words[i + 1];
    if (lower === 'step' && next !== undefined) {
      out.push({ kind: 'step', id: next, raw: `${w} ${next}` });
      i++;
      continue;
    }
    const name = w.startsWith('#') ? w.slice(1) : w;
    out.push({ kind: 'anchor', name, raw: w });
  }
  return out;
}

export interface StepRef {
  anchor: string;
  id: string;
}

/** Resolves dependency tokens against the plan's steps (first occurrence wins for duplicates). */
export class DepResolver {
  private readonly byAnchor = new Map<string, string>();
  private readonly byId = new Map<string, string>();

  constructor(steps: readonly StepRef[]) {
    for (const s of steps) {
      if (!this.byAnchor.has(s.anchor)) this.byAnchor.set(s.anchor, s.anchor);
      const lower = s.anchor.toLowerCase();
      if (!this.byAnchor.has(lower)) this.byAnchor.set(lower, s.anchor);
      const id = s.id.toLowerCase();
      if (!this.byId.has(id)) this.byId.set(id, s.anchor);
    }
  }

  /** The step anchor a token names, or null. */
  resolve(token: DepToken): string | null {
    if (token.kind === 'step') return this.byId.get(token.id.toLowerCase()) ?? null;
    return this.byAnchor.get(token.name) ?? this.byAnchor.get(token.name.toLowerCase()) ?? null;
  }
}
