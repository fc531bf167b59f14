import { AppError } from '../core';
import type { Token } from './ast';

export class QuerySyntaxError extends AppError {
  constructor(message: string, readonly offset: number) {
    super(`${message} at offset ${offset}`, 'query-syntax');
  }
}

const OPERATORS = ['>=', '<=', '!=', '=', '<', '>', '~'];

/** Split a query into tokens; strings use double quotes with backslash escapes. */
export function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < source.length) {
    const c = source[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    const single: Record<string, Token['kind']> = { '(': 'lparen', ')': 'rparen', ',': 'comma', '[': 'lbracket', ']': 'rbracket' };
    if (single[c]) {
      tokens.push({ kind: single[c]!, text: c, offset: i });
      i++;
      continue;
    }
    const op = OPERATORS.find((o) => source.startsWith(o, i));
    if (op) {
      tokens.push({ kind: 'op', text: op, offset: i });
      i += op.length;
      continue;
    }
    if (c === '"') {
      let text = '';
      let j = i + 1;
      for (; j < source.length && source[j] !== '"'; j++) {
        if (source[j] === '\\' && j + 1 < source.length) j++;
        text += source[j];
      }
      if (j >= source.length) throw new QuerySyntaxError('unterminated string', i);
      tokens.push({ kind: 'string', text, offset: i });
      i = j + 1;
      continue;
    }
    const num = /^-?\d+(\.\d+)?/.exec(source.slice(i));
    if (num) {
      tokens.push({ kind: 'number', text: num[0], offset: i });
      i += num[0].length;
      continue;
    }
    const id = /^[A-Za-z_][\w.]*/.exec(source.slice(i));
    if (id) {
      tokens.push({ kind: 'ident', text: id[0], offset: i });
      i += id[0].length;
      continue;
    }
    throw new QuerySyntaxError(`unexpected character ${JSON.stringify(c)}`, i);
  }
  tokens.push({ kind: 'eof', text: '', offset: source.length });
  return tokens;
}
