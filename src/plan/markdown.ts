/**
 * The one markdown-it instance of the plan parser (CommonMark + tables, raw HTML recognised as HTML so
 * `<details>` blocks are not read as prose). Created on first use. Only the plan parser imports this file;
 * hot state commands reach the parser through a dynamic import.
 */
import MarkdownIt from 'markdown-it';
import type { MarkdownIt as MarkdownItType, Token } from 'markdown-it';

export type { Token };

let instance: MarkdownItType | null = null;

export function markdown(): MarkdownItType {
  if (!instance) {
    instance = new MarkdownIt('default', { html: true, linkify: false, typographer: false });
  }
  return instance;
}

/** Block tokens with inline children of `src` (CRLF and NUL normalized by markdown-it). */
export function tokenize(src: string): Token[] {
  return markdown().parse(src, {});
}
