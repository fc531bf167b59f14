/**
 * The one markdown-it instance of the plan parser (CommonMark + tables, raw HTML recognised as HTML so
 * `<details>` blocks are not read as prose). Created on first use. Only the plan parser imports this file;
 * hot state commands reach the parser through a dynamic import.
 *
 * Speed: the block grammar runs on the whole document, but inline parsing (most of markdown-it's time) is
 * deferred: `inlineChildren` parses one inline token on demand, and the parser asks only for the few it
 * needs (label candidates, refactor items, lines with `{#`).
 */
import MarkdownIt from 'markdown-it';
import type { MarkdownIt as MarkdownItType, Token } from 'markdown-it';

export type { Token };

let instance: MarkdownItType | null = null;

export function markdown(): MarkdownItType {
  if (!instance) {
    const md = new MarkdownIt('default', { html: true, linkify: false, typographer: false });
    // Inline content is parsed lazily (inlineChildren); the remaining core rules only post-process it.
    md.core.ruler.disable(['inline', 'linkify', 'replacements', 'smartquotes', 'text_join']);
    instance = md;
  }
  return instance;
}

/** Block tokens of `src` (CRLF and NUL normalized by markdown-it); inline tokens have no children yet. */
export function tokenize(src: string): Token[] {
  return markdown().parse(src, {});
}

/**
 * The inline children of an `inline` token, parsed on first use and cached on the token. Escapes and
 * entities come out as `text_special` tokens (no text_join pass): read `.content` of both kinds.
 */
export function inlineChildren(token: Token): Token[] {
  if (token.children && token.children.length > 0) return token.children;
  const children: Token[] = [];
  if (token.content !== '') {
    const md = markdown();
    md.inline.parse(token.content, md, {}, children);
  }
  token.children = children;
  return children;
}
