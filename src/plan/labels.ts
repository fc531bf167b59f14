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
 * A label paragraph: inline content that starts with bold text which, trimmed, ends with `:`. Returns the
 * label name (without the colon) and what follows it, or null.
 */
export function readLabel(inline: Token): Label | null {
  const content = inline.content;
  if (!(content.startsWith('**') || content.startsWith('__'))) return null;
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

/**
 * `**Commit:** \`msg\`` (backticks optional): the message, null when empty or `N/A…`; `declined` for `N/A…`,
 * a step that wants no commit at all (docs/run.md §1 item 4.5), unlike one with no message.
 */
export function commitLabel(label: Label): { message: string | null; declined: boolean } {
  const code = label.after.find((c) => c.type === 'code_inline');
  const msg = (code ? code.content : joinLines(label.rest)).trim();
  const declined = /^n\/a\b/i.test(msg);
  return { message: msg === '' || declined ? null : msg, declined };
}
