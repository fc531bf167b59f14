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

/** Block nesting (lists, list items, block quotes each count one) beyond which markdown-it stops reading. */
export const MAX_NESTING = 100;

/** The parse environment: where markdown-it stopped reading because of `MAX_NESTING` (0-based line). */
type Env = { nestingCut?: number };

interface BlockState {
  level: number;
  blkIndent: number;
  sCount: number[];
  env: Env;
  skipEmptyLines(from: number): number;
}

function markdown(): MarkdownItType {
  if (!instance) {
    const md = new MarkdownIt('default', { html: true, linkify: false, typographer: false, maxNesting: MAX_NESTING });
    // Inline content is parsed lazily (inlineChildren); the remaining core rules only post-process it.
    md.core.ruler.disable(['inline', 'linkify', 'replacements', 'smartquotes', 'text_join']);
    // At the nesting limit markdown-it's block tokenizer skips the rest of its range without a trace (a
    // list item then swallows every later line of the document). Record the first line skipped so the
    // parser can report it instead of losing it.
    const block = md.block as unknown as { tokenize(state: BlockState, start: number, end: number): void };
    const tokenizeBlocks = block.tokenize.bind(block);
    block.tokenize = (state, start, end) => {
      if (state.level >= MAX_NESTING && state.env.nestingCut === undefined) {
        const line = state.skipEmptyLines(start);
        if (line < end && state.sCount[line]! >= state.blkIndent) state.env.nestingCut = line;
      }
      tokenizeBlocks(state, start, end);
    };
    instance = md;
  }
  return instance;
}

export interface Tokenized {
  /** Block tokens (CRLF and NUL normalized by markdown-it); inline tokens have no children yet. */
  tokens: Token[];
  /**
   * 1-based line from which markdown-it read nothing more because blocks were nested deeper than
   * `MAX_NESTING`, or null.
   */
  nestingCutLine: number | null;
}

export function tokenize(src: string): Tokenized {
  const env: Env = {};
  const tokens = markdown().parse(src, env);
  return { tokens, nestingCutLine: env.nestingCut === undefined ? null : env.nestingCut + 1 };
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
