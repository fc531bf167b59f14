/**
 * Label paragraphs (docs/plan-format.md §2 rule 5): a paragraph whose inline content starts with bold text
 * that, trimmed, ends with `:` (`**Tasks:**`, `**Depends on:** #step-1`), and the Commit value (rule 9).
 */
import { inlineChildren, type Token } from './markdown.js';
import { joinLines } from './syntax.js';

export interface Label {
  /** Bold text without the colon, trimmed. */
  name: string;
  /** Raw source after the bold label. */
  rest: string;
  /** Inline children after the bold label. */
  after: Token[];
}

const LABEL_RAW_RE = /^(\*\*|__)([\s\S]*?:\s*)\1/;

/**
 * The common label, `**Name:**` then a space, a newline or the end, with a name of plain characters (none
 * that an inline rule reads: escapes, entities, code, emphasis, strikethrough, links, images, HTML, line
 * breaks). For it CommonMark's emphasis rules (docs/plan-format.md §2 rule 5) give one answer: the opening
 * `**` is followed by a non-space, the closing one follows `:` and precedes a space or the end, and no other
 * delimiter lies between them, so the two pair as the label's bold text. Anything else takes markdown-it's
 * inline parse.
 */
const PLAIN_LABEL_RE = /^\*\*([^\s\\&`*_~[\]!<][^\n\\&`*_~[\]!<]*?):\*\*(?=[ \t\n]|$)/;

/** Inline parses the label paths started (tests: a plan's labels must not each cost one). */
let slowLabels = 0;
export function labelInlineParses(): number {
  return slowLabels;
}

/**
 * A label paragraph: inline content that starts with bold text which, trimmed, ends with `:`. Returns the
 * label name (without the colon) and what follows it, or null. A plain label (`PLAIN_LABEL_RE`) is read
 * without markdown-it's inline parse: a 1,000-step plan has thousands of labels and that parse was most of
 * its cost (`tugcode status` parses every plan on each call, docs/git.md §6); `after`, which only a Commit
 * value in another shape reads, is parsed when first asked for.
 */
export function readLabel(inline: Token): Label | null {
  const content = inline.content;
  const plain = PLAIN_LABEL_RE.exec(content);
  if (plain) {
    let after: Token[] | null = null;
    return {
      name: plain[1]!.trim(),
      rest: content.slice(plain[0].length),
      get after(): Token[] {
        after ??= parsedLabel(inline)?.after ?? [];
        return after;
      },
    };
  }
  return parsedLabel(inline);
}

/** `readLabel` through markdown-it's inline parse (exported for the test that both paths agree). */
export function parsedLabel(inline: Token): Label | null {
  const content = inline.content;
  if (!(content.startsWith('**') || content.startsWith('__'))) return null;
  slowLabels++;
  const children = inlineChildren(inline);
  let k = 0;
  while (k < children.length && children[k]!.type === 'text' && children[k]!.content === '') k++;
  if (children[k]?.type !== 'strong_open') return null;
  let depth = 0;
  let bold = '';
  let end = -1;
  for (let j = k; j < children.length; j++) {
    const c = children[j]!;
    if (c.type === 'strong_open') depth++;
    else if (c.type === 'strong_close') {
      depth--;
      if (depth === 0) {
        end = j;
        break;
      }
    } else bold += c.content;
  }
  const name = bold.trim();
  if (end < 0 || !name.endsWith(':')) return null;
  const raw = LABEL_RAW_RE.exec(content);
  return {
    name: name.slice(0, -1).trim(),
    rest: raw ? content.slice(raw[0].length) : '',
    after: children.slice(end + 1),
  };
}

/** A value that is one code span on its line(s) and nothing else: markdown-it would read the same text. */
const ONE_CODE_SPAN_RE = /^\s*`([^`\n]*)`\s*$/;

/**
 * `**Commit:** \`msg\`` (backticks optional): the message, null when empty or `N/A…`; `declined` for `N/A…`,
 * a step that wants no commit at all (docs/run.md §1 item 4.5), unlike one with no message.
 */
export function commitLabel(label: Label): { message: string | null; declined: boolean } {
  const span = ONE_CODE_SPAN_RE.exec(label.rest);
  const code = span ? null : label.after.find((c) => c.type === 'code_inline');
  const msg = (span ? span[1]! : code ? code.content : joinLines(label.rest)).trim();
  const declined = /^n\/a\b/i.test(msg);
  return { message: msg === '' || declined ? null : msg, declined };
}
