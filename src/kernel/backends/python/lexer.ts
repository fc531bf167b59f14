/**
 * A Python tokenizer for the kernel's syntactic work (05-kernel.md §6.5–6.6): identifiers at a position,
 * declaration kinds, reference kinds, class/method structure for the override closure, and the scans
 * (dynamic patterns, star imports, string literals, member accesses). Offsets are UTF-16 indices into the
 * BOM-stripped text, the unit backends speak. It does not validate syntax (py-compile does); on malformed
 * input it still yields a best-effort token stream. Replacement fields of f-strings are tokenized too,
 * because pyright renames names inside them.
 */

export type TokenType = 'name' | 'keyword' | 'number' | 'string' | 'op' | 'comment';

export interface Token {
  type: TokenType;
  start: number;
  end: number;
  text: string;
  /** Index of the logical line the token belongs to. */
  line: number;
  /** Bracket depth at the token: an opening bracket is outside its brackets, a closing one inside. */
  depth: number;
  /** For strings: the content span between the quotes (prefix and quotes excluded). */
  content?: { start: number; end: number };
  /** For strings: f-string (has replacement fields), bytes. */
  fstring?: boolean;
  bytes?: boolean;
  /** A token inside an f-string replacement field. */
  inFString?: boolean;
}

export interface LogicalLine {
  /** Index of the first and one past the last token (comments excluded). */
  first: number;
  end: number;
  /** Indentation width of the line (tabs to multiples of 8). */
  indent: number;
}

export const KEYWORDS = new Set(
  (
    'False None True and as assert async await break class continue def del elif else except finally for from global ' +
    'if import in is lambda nonlocal not or pass raise return try while with yield'
  ).split(' '),
);

const NAME = /[\p{L}\p{Nl}_][\p{L}\p{Nl}\p{Mn}\p{Mc}\p{Nd}\p{Pc}]*/uy;
const NUMBER = /(?:0[xXoObB][0-9a-fA-F_]+|(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][+-]?\d[\d_]*)?[jJ]?)/y;
const STRING_PREFIX = /^(?:[rRuUbBfFtT]|[rR][bBfFtT]|[bBfFtT][rR])$/;
const OPS3 = new Set(['**=', '//=', '>>=', '<<=', '...', '!=']);
const OPS2 = new Set([
  '**',
  '//',
  '>>',
  '<<',
  '<=',
  '>=',
  '==',
  '!=',
  '->',
  ':=',
  '+=',
  '-=',
  '*=',
  '/=',
  '%=',
  '&=',
  '|=',
  '^=',
  '@=',
]);

export class PyTokens {
  readonly tokens: Token[] = [];
  readonly lines: LogicalLine[] = [];
  private i = 0;
  private depth = 0;
  private lineIndex = 0;
  private lineFirst = 0;
  private lineIndent = 0;
  private atLineStart = true;

  constructor(readonly text: string) {
    this.run();
  }

  private push(
    type: TokenType,
    start: number,
    end: number,
    inField: boolean,
    extra?: { content: { start: number; end: number }; fstring?: boolean; bytes?: boolean },
  ): Token {
    if (this.atLineStart) {
      this.atLineStart = false;
      this.lineFirst = this.tokens.length;
      this.lineIndent = this.indentAt(start);
    }
    // One object shape for every token keeps property access monomorphic.
    const tok: Token = {
      type,
      start,
      end,
      text: this.text.slice(start, end),
      line: this.lineIndex,
      depth: this.depth,
      content: extra?.content,
      fstring: extra?.fstring,
      bytes: extra?.bytes,
      inFString: inField || undefined,
    };
    this.tokens.push(tok);
    return tok;
  }

  private indentAt(pos: number): number {
    let s = pos;
    while (s > 0 && this.text[s - 1] !== '\n' && this.text[s - 1] !== '\r') s--;
    let w = 0;
    for (let k = s; k < pos; k++) w = this.text[k] === '\t' ? (Math.floor(w / 8) + 1) * 8 : w + 1;
    return w;
  }

  private endLine(): void {
    if (this.atLineStart) return;
    this.lines.push({ first: this.lineFirst, end: this.tokens.length, indent: this.lineIndent });
    this.lineIndex++;
    this.atLineStart = true;
  }

  private run(): void {
    const t = this.text;
    const n = t.length;
    while (this.i < n) {
      const c = t.charCodeAt(this.i);
      if (c === 0x0a || c === 0x0d) {
        this.i += c === 0x0d && t.charCodeAt(this.i + 1) === 0x0a ? 2 : 1;
        if (this.depth === 0) this.endLine();
        continue;
      }
      if (c === 0x20 || c === 0x09 || c === 0x0c) {
        this.i++;
        continue;
      }
      if (c === 0x5c /* \ */) {
        const d = t.charCodeAt(this.i + 1);
        if (d === 0x0a || d === 0x0d) {
          this.i += d === 0x0d && t.charCodeAt(this.i + 2) === 0x0a ? 3 : 2;
          continue;
        }
      }
      this.token(false);
    }
    this.endLine();
  }

  /** Lex one token at this.i (inside an f-string replacement field when `inField`). */
  private token(inField: boolean): void {
    const t = this.text;
    const start = this.i;
    const c = t.charCodeAt(start);
    if (c === 0x23 /* # */) {
      // Comments are kept out of the token list so that neighbours are the real ones.
      let e = start;
      while (e < t.length && t.charCodeAt(e) !== 0x0a && t.charCodeAt(e) !== 0x0d) e++;
      this.i = e;
      return;
    }
    let end = -1;
    if ((c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || c === 0x5f) {
      // ASCII fast path; a non-ASCII continuation falls back to the Unicode pattern.
      end = start + 1;
      for (;;) {
        const d = t.charCodeAt(end);
        if ((d >= 0x61 && d <= 0x7a) || (d >= 0x41 && d <= 0x5a) || (d >= 0x30 && d <= 0x39) || d === 0x5f) end++;
        else if (d >= 0x80) {
          end = -1;
          break;
        } else break;
      }
    }
    if (end === -1 && (c >= 0x80 || (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || c === 0x5f)) {
      NAME.lastIndex = start;
      const nm = NAME.exec(t);
      if (nm) end = start + nm[0].length;
    }
    if (end !== -1) {
      const q = t.charCodeAt(end);
      const word = t.slice(start, end);
      if ((q === 0x22 || q === 0x27) && end - start <= 2 && STRING_PREFIX.test(word)) {
        this.string(start, word, inField);
        return;
      }
      this.push(KEYWORDS.has(word) ? 'keyword' : 'name', start, end, inField);
      this.i = end;
      return;
    }
    if (c === 0x22 || c === 0x27) {
      this.string(start, '', inField);
      return;
    }
    const next = t.charCodeAt(start + 1);
    if ((c >= 0x30 && c <= 0x39) || (c === 0x2e && next >= 0x30 && next <= 0x39)) {
      NUMBER.lastIndex = start;
      const m = NUMBER.exec(t);
      const len = m ? m[0].length : 1;
      this.push('number', start, start + len, inField);
      this.i = start + len;
      return;
    }
    const ch = t[start]!;
    if (ch === '(' || ch === '[' || ch === '{') {
      this.push('op', start, start + 1, inField);
      this.depth++;
      this.i = start + 1;
      return;
    }
    if (ch === ')' || ch === ']' || ch === '}') {
      // A closing bracket carries the depth of its contents, like the commas inside it.
      this.push('op', start, start + 1, inField);
      this.depth = Math.max(0, this.depth - 1);
      this.i = start + 1;
      return;
    }
    let len = 1;
    if (next === 0x3d /* = */ || next === 0x3e || next === 0x2a || next === 0x2f || next === 0x3c || next === 0x2e) {
      const three = t.slice(start, start + 3);
      len = OPS3.has(three) ? 3 : OPS2.has(three.slice(0, 2)) ? 2 : 1;
    }
    this.push('op', start, start + len, inField);
    this.i = start + len;
  }

  private string(start: number, prefix: string, inField: boolean): void {
    const t = this.text;
    if (this.atLineStart) {
      // Field tokens are lexed before the string token is pushed: the line starts at the string.
      this.atLineStart = false;
      this.lineFirst = this.tokens.length;
      this.lineIndent = this.indentAt(start);
    }
    const p = prefix.toLowerCase();
    const f = p.includes('f') || p.includes('t');
    let i = start + prefix.length;
    const q = t[i]!;
    const triple = t[i + 1] === q && t[i + 2] === q;
    const ql = triple ? 3 : 1;
    i += ql;
    const contentStart = i;
    let contentEnd = -1;
    const fieldTokens: [number, number][] = [];
    while (i < t.length) {
      const ch = t[i]!;
      if (ch === '\\') {
        i += 2;
        continue;
      }
      if (!triple && (ch === '\n' || ch === '\r')) break; // unterminated
      if (ch === q && (!triple || (t[i + 1] === q && t[i + 2] === q))) {
        contentEnd = i;
        i += ql;
        break;
      }
      if (f && ch === '{') {
        if (t[i + 1] === '{') {
          i += 2;
          continue;
        }
        i = this.field(i + 1, fieldTokens);
        continue;
      }
      i++;
    }
    if (contentEnd === -1) contentEnd = i;
    const tok = this.push('string', start, i, inField, {
      content: { start: contentStart, end: contentEnd },
      fstring: f || undefined,
      bytes: p.includes('b') || undefined,
    });
    // Field tokens were lexed into a side list; move them after the string token so order stays by start.
    if (fieldTokens.length) {
      const [from, to] = [fieldTokens[0]![0], fieldTokens[fieldTokens.length - 1]![1]];
      const moved = this.tokens.splice(from, to - from);
      const idx = this.tokens.indexOf(tok);
      this.tokens.splice(idx + 1, 0, ...moved.map((m) => ({ ...m, line: tok.line })));
    }
    this.i = i;
  }

  /** Tokenize an f-string replacement field starting after `{`; returns the index after its `}`. */
  private field(i: number, spans: [number, number][]): number {
    const t = this.text;
    const saveDepth = this.depth;
    const saveI = this.i;
    this.depth = 0;
    this.i = i;
    const from = this.tokens.length;
    while (this.i < t.length) {
      const c = t[this.i]!;
      if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
        this.i++;
        continue;
      }
      if (this.depth === 0 && c === '}') break;
      if (this.depth === 0 && (c === ':' || (c === '!' && t[this.i + 1] !== '='))) {
        // Format spec / conversion: skip to the matching brace, nested fields included.
        let d = 0;
        while (this.i < t.length) {
          const ch = t[this.i]!;
          if (ch === '{') d++;
          else if (ch === '}') {
            if (d === 0) break;
            d--;
          }
          this.i++;
        }
        break;
      }
      this.token(true);
    }
    const end = this.tokens.length;
    if (end > from) spans.push([from, end]);
    const after = this.i < t.length ? this.i + 1 : this.i;
    this.depth = saveDepth;
    this.i = saveI;
    return after;
  }

  /** Index of the token whose [start, end] contains offset (a token starting there wins), or -1. */
  tokenAt(offset: number): number {
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
    if (best === -1) return -1;
    // Tokens inside f-strings nest in the string's span; prefer the innermost one that contains offset.
    let str = -1;
    for (let k = best; k >= 0 && k >= best - 256; k--) {
      const tk = ts[k]!;
      if (tk.start <= offset && offset <= tk.end) {
        if (tk.type !== 'string') return k;
        if (str === -1) str = k;
      }
      if (tk.end < offset && tk.type !== 'string' && !tk.inFString) break;
    }
    return str;
  }

  /** The identifier (non-keyword name) at offset, per §3.2: [start, end] contains it, one starting there wins. */
  identifierAt(offset: number): Token | null {
    const ts = this.tokens;
    const k = this.tokenAt(offset);
    if (k === -1) return null;
    const tok = ts[k]!;
    if (tok.type === 'name' && tok.start === offset) return tok;
    const next = ts[k + 1];
    if (next && next.type === 'name' && next.start === offset) return next;
    if (tok.type === 'name') return tok;
    // An offset right after an identifier that touches an operator: the identifier ending there.
    const prev = ts[k - 1];
    if (prev && prev.type === 'name' && prev.end === offset) return prev;
    return null;
  }

  /** Index of the token starting exactly at offset, or -1. */
  indexAtStart(offset: number): number {
    const k = this.tokenAt(offset);
    if (k !== -1 && this.tokens[k]!.start === offset) return k;
    const n = this.tokens[k + 1];
    return n && n.start === offset ? k + 1 : -1;
  }

  lineOf(k: number): LogicalLine {
    return this.lines[this.tokens[k]!.line]!;
  }
}
