/**
 * A small Rust tokenizer for identifier lookup and declaration/reference kinds (05-kernel.md §6.5, Rust
 * column): identifiers (raw ones too), keywords, punctuation, with comments (nested block comments),
 * strings, raw strings, byte/char literals and lifetimes skipped. Offsets are UTF-16 indices.
 */
import type { ReferenceKind, SymbolKind } from '../types.js';

export interface RsToken {
  type: 'ident' | 'keyword' | 'punct' | 'literal' | 'lifetime';
  start: number;
  end: number;
  text: string;
  /** Brace depth before the token. */
  depth: number;
}

const KEYWORDS = new Set(
  (
    'as async await break const continue crate dyn else enum extern false fn for if impl in let loop match mod move mut ' +
    'pub ref return self Self static struct super trait true type unsafe use where while union macro_rules'
  ).split(' '),
);
const IDENT = /(?:r#)?[\p{XID_Start}_][\p{XID_Continue}]*/uy;

export class RsTokens {
  readonly tokens: RsToken[] = [];
  /** For each `{` token index: what it opens. */
  private readonly braceKind = new Map<number, 'impl' | 'trait' | 'struct' | 'enum' | 'other'>();
  /** The innermost enclosing brace (token index) of each token, or -1. */
  private readonly enclosing: number[] = [];

  constructor(readonly text: string) {
    this.lex();
    this.structure();
  }

  private lex(): void {
    const t = this.text;
    let i = 0;
    let depth = 0;
    const push = (type: RsToken['type'], start: number, end: number) =>
      this.tokens.push({ type, start, end, text: t.slice(start, end), depth });
    while (i < t.length) {
      const c = t[i]!;
      if (/\s/.test(c)) {
        i++;
        continue;
      }
      if (c === '/' && t[i + 1] === '/') {
        while (i < t.length && t[i] !== '\n') i++;
        continue;
      }
      if (c === '/' && t[i + 1] === '*') {
        let d = 1;
        i += 2;
        while (i < t.length && d > 0) {
          if (t[i] === '/' && t[i + 1] === '*') {
            d++;
            i += 2;
          } else if (t[i] === '*' && t[i + 1] === '/') {
            d--;
            i += 2;
          } else i++;
        }
        continue;
      }
      const raw = c === 'r' || c === 'b' ? /^(?:b?r)(#*)"/.exec(t.slice(i, i + 260)) : null;
      if (raw) {
        const close = '"' + raw[1]!;
        const e = t.indexOf(close, i + raw[0].length);
        const end = e === -1 ? t.length : e + close.length;
        push('literal', i, end);
        i = end;
        continue;
      }
      if (c === '"' || (c === 'b' && t[i + 1] === '"')) {
        let k = i + (c === 'b' ? 2 : 1);
        while (k < t.length && t[k] !== '"') k += t[k] === '\\' ? 2 : 1;
        push('literal', i, Math.min(k + 1, t.length));
        i = k + 1;
        continue;
      }
      if (c === "'" || (c === 'b' && t[i + 1] === "'")) {
        const s = c === 'b' ? i + 1 : i;
        const ch = /^'(?:\\(?:x[0-9a-fA-F]{2}|u\{[0-9a-fA-F]+\}|.)|[^\\'\n])'/u.exec(t.slice(s, s + 16));
        if (ch) {
          push('literal', i, s + ch[0].length);
          i = s + ch[0].length;
          continue;
        }
        IDENT.lastIndex = s + 1;
        const lt = IDENT.exec(t);
        const end = lt ? s + 1 + lt[0].length : s + 1;
        push('lifetime', i, end);
        i = end;
        continue;
      }
      IDENT.lastIndex = i;
      const m = IDENT.exec(t);
      if (m) {
        push(KEYWORDS.has(m[0]) ? 'keyword' : 'ident', i, i + m[0].length);
        i += m[0].length;
        continue;
      }
      if (/[0-9]/.test(c)) {
        let k = i + 1;
        while (
          k < t.length &&
          /[0-9A-Za-z_.]/.test(t[k]!) &&
          !(t[k] === '.' && (t[k + 1] === '.' || /[A-Za-z_]/.test(t[k + 1] ?? '')))
        )
          k++;
        push('literal', i, k);
        i = k;
        continue;
      }
      if (c === '}') depth = Math.max(0, depth - 1);
      const two = t.slice(i, i + 2);
      const len = ['::', '->', '=>', '..', '==', '!=', '<=', '>=', '&&', '||'].includes(two) ? 2 : 1;
      push('punct', i, i + len);
      if (c === '{') depth++;
      i += len;
    }
  }

  private structure(): void {
    const ts = this.tokens;
    const stack: number[] = [];
    let pending: 'impl' | 'trait' | 'struct' | 'enum' | null = null;
    for (let k = 0; k < ts.length; k++) {
      const tk = ts[k]!;
      this.enclosing[k] = stack.length ? stack[stack.length - 1]! : -1;
      if (
        tk.type === 'keyword' &&
        (tk.text === 'impl' || tk.text === 'trait' || tk.text === 'struct' || tk.text === 'enum' || tk.text === 'union')
      )
        pending = tk.text === 'union' ? 'struct' : tk.text;
      else if (tk.text === ';' && tk.type === 'punct') pending = null;
      else if (tk.text === '{' && tk.type === 'punct') {
        this.braceKind.set(k, pending ?? 'other');
        pending = null;
        stack.push(k);
      } else if (tk.text === '}' && tk.type === 'punct') stack.pop();
    }
  }

  private containerKind(k: number): 'impl' | 'trait' | 'struct' | 'enum' | 'other' | null {
    const b = this.enclosing[k] ?? -1;
    return b === -1 ? null : (this.braceKind.get(b) ?? 'other');
  }

  indexAt(offset: number): number {
    const ts = this.tokens;
    let lo = 0;
    let hi = ts.length - 1;
    let best = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (ts[mid]!.start <= offset) {
        best = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return best;
  }

  identifierAt(offset: number): RsToken | null {
    const k = this.indexAt(offset);
    if (k === -1) return null;
    const tk = this.tokens[k]!;
    if (tk.type === 'ident' && offset <= tk.end) return tk;
    const prev = this.tokens[k - 1];
    if (tk.start === offset && prev?.type === 'ident' && prev.end === offset && tk.type !== 'ident') return prev;
    return null;
  }

  declKind(start16: number): SymbolKind {
    const ts = this.tokens;
    const k = this.indexAt(start16);
    if (k === -1 || ts[k]!.start !== start16) return 'variable';
    const prev = ts[k - 1];
    const next = ts[k + 1];
    const ck = this.containerKind(k);
    switch (prev?.type === 'keyword' ? prev.text : '') {
      case 'fn':
        return ck === 'impl' || ck === 'trait' ? 'method' : 'function';
      case 'struct':
      case 'union':
        return 'class';
      case 'enum':
        return 'enum';
      case 'trait':
        return 'interface';
      case 'type':
        return 'type';
      case 'mod':
        return 'module';
      case 'as':
        return 'import';
      default:
        break;
    }
    if (prev?.text === '!' && ts[k - 2]?.text === 'macro_rules') return 'function';
    if (ck === 'enum' && (prev?.text === '{' || prev?.text === ',')) return 'enum_member';
    if (ck === 'struct' && next?.text === ':') return 'property';
    return 'variable';
  }

  refKind(start16: number): ReferenceKind {
    const ts = this.tokens;
    const k = this.indexAt(start16);
    if (k === -1 || ts[k]!.start !== start16) return 'reference';
    for (let j = k - 1; j >= 0; j--) {
      const x = ts[j]!;
      if (x.text === '{' && ts[j - 1]?.text === '::') continue;
      if (x.text === ';' || x.text === '{' || x.text === '}') break;
      if (x.type === 'keyword' && x.text === 'use') return 'import';
    }
    const next = ts[k + 1];
    if (next?.text === '(' || next?.text === '!') return 'call';
    if (ts[k - 1]?.text === '.') return 'attribute';
    return 'reference';
  }
}
