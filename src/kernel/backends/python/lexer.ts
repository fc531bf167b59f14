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

  private push(t: Omit<Token, 'line' | 'depth'> & { depth?: number }): Token {
    if (this.atLineStart && t.type !== 'comment') {
      this.atLineStart = false;
      this.lineFirst = this.tokens.length;
      this.lineIndent = this.indentAt(t.start);
    }
    const tok: Token = { ...t, line: this.lineIndex, depth: t.depth ?? this.depth };
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
    while (this.i < t.length) {
      const c = t[this.i]!;
      if (c === '\n' || c === '\r') {
        this.i += c === '\r' && t[this.i + 1] === '\n' ? 2 : 1;
        if (this.depth === 0) this.endLine();
        continue;
      }
      if (c === ' ' || c === '\t' || c === '\f') {
        this.i++;
        continue;
      }
      if (c === '\\' && (t[this.i + 1] === '\n' || t[this.i + 1] === '\r')) {
        this.i += t[this.i + 1] === '\r' && t[this.i + 2] === '\n' ? 3 : 2;
        continue;
      }
      this.token(false);
    }
    this.endLine();
    // Comments are dropped from logical-line token ranges by construction below.
  }

  /** Lex one token at this.i. In an f-string field, `}` at depth 0 is not consumed (returns false). */
  private token(inField: boolean): boolean {
    const t = this.text;
    const c = t[this.i]!;
    if (c === '#') {
      let e = this.i;
      while (e < t.length && t[e] !== '\n' && t[e] !== '\r') e++;
      // Comments are kept out of the token list so that neighbours are the real ones.
      this.i = e;
      return true;
    }
    NAME.lastIndex = this.i;
    const nm = NAME.exec(t);
    if (nm) {
      const word = nm[0];
      const after = this.i + word.length;
      if (STRING_PREFIX.test(word) && (t[after] === '"' || t[after] === "'")) {
        this.string(this.i, word, inField);
        return true;
      }
      this.push({
        type: KEYWORDS.has(word) ? 'keyword' : 'name',
        start: this.i,
        end: after,
        text: word,
        inFString: inField || undefined,
      });
      this.i = after;
      return true;
    }
    if (c === '"' || c === "'") {
      this.string(this.i, '', inField);
      return true;
    }
    if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(t[this.i + 1] ?? ''))) {
      NUMBER.lastIndex = this.i;
      const m = NUMBER.exec(t);
      const len = m ? m[0].length : 1;
      this.push({
        type: 'number',
        start: this.i,
        end: this.i + len,
        text: t.slice(this.i, this.i + len),
        inFString: inField || undefined,
      });
      this.i += len;
      return true;
    }
    const three = t.slice(this.i, this.i + 3);
    const two = t.slice(this.i, this.i + 2);
    const op = OPS3.has(three) ? three : OPS2.has(two) ? two : c;
    if (op === '(' || op === '[' || op === '{') {
      this.push({ type: 'op', start: this.i, end: this.i + 1, text: op, inFString: inField || undefined });
      this.depth++;
    } else if (op === ')' || op === ']' || op === '}') {
      // A closing bracket carries the depth of its contents, like the commas inside it.
      this.push({ type: 'op', start: this.i, end: this.i + 1, text: op, inFString: inField || undefined });
      this.depth = Math.max(0, this.depth - 1);
    } else {
      this.push({ type: 'op', start: this.i, end: this.i + op.length, text: op, inFString: inField || undefined });
    }
    this.i += op.length;
    return true;
  }

  private string(start: number, prefix: string, inField: boolean): void {
    const t = this.text;
    const p = prefix.toLowerCase();
    const raw = p.includes('r');
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
    void raw;
    const tok = this.push({
      type: 'string',
      start,
      end: i,
      text: t.slice(start, i),
      content: { start: contentStart, end: contentEnd },
      fstring: f || undefined,
      bytes: p.includes('b') || undefined,
      inFString: inField || undefined,
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
