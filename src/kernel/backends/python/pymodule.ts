/**
 * Syntactic facts of one Python file, from its tokens (05-kernel.md §6.5–6.6): block structure (which
 * class or def encloses a line), classes with their base lists and methods, declaration and reference
 * kinds, and the scans — dynamic patterns, star imports, string literals and `.name` member accesses.
 */
import type { ReferenceKind, SymbolKind } from '../types.js';
import { PyTokens, type Token } from './lexer.js';

export interface Span {
  start16: number;
  end16: number;
}

export interface PyClass {
  name: string;
  name16: Span;
  /** The name token of each base expression (`pkg.Base` → `Base`, `Generic[T]` → `Generic`). */
  bases: (Span & { text: string })[];
  /** Methods defined directly in the class body (every definition of each name). */
  methods: Map<string, Span[]>;
}

export interface ScanSite extends Span {
  code:
    'DynamicAttributeAccess' | 'DynamicNameLookup' | 'DynamicCodeExecution' | 'CustomAttributeProtocol' | 'StarImport';
  message: string;
  pattern: string;
}

interface Block {
  indent: number;
  kind: 'class' | 'def';
  cls: PyClass | null;
}

const ATTR_FNS = new Set(['getattr', 'setattr', 'hasattr', 'delattr']);
const NAME_FNS = new Set(['globals', 'locals', 'vars']);
const EXEC_FNS = new Set(['eval', 'exec', '__import__', 'import_module']);
const CUSTOM_ATTR = new Set(['__getattr__', '__getattribute__', '__setattr__']);

export class PyModule {
  readonly tok: PyTokens;
  readonly classes: PyClass[] = [];
  /** Enclosing block of each logical line (null: module level). */
  private readonly lineBlock: (Block | null)[] = [];
  private readonly defLines = new Set<number>();

  constructor(readonly text: string) {
    this.tok = new PyTokens(text);
    this.analyze();
  }

  private get t(): Token[] {
    return this.tok.tokens;
  }

  private analyze(): void {
    const stack: Block[] = [];
    const ts = this.t;
    this.tok.lines.forEach((ln, li) => {
      while (stack.length && stack[stack.length - 1]!.indent >= ln.indent) stack.pop();
      const top = stack[stack.length - 1] ?? null;
      this.lineBlock[li] = top;
      let k = ln.first;
      if (ts[k]?.text === 'async' && ts[k]!.type === 'name') k++;
      const head = ts[k];
      const name = ts[k + 1];
      if (!head || head.type !== 'keyword' || !name || name.type !== 'name') return;
      if (head.text === 'class') {
        const cls: PyClass = {
          name: name.text,
          name16: { start16: name.start, end16: name.end },
          bases: this.bases(k + 2, ln.end),
          methods: new Map(),
        };
        this.classes.push(cls);
        stack.push({ indent: ln.indent, kind: 'class', cls });
      } else if (head.text === 'def') {
        this.defLines.add(li);
        if (top?.kind === 'class' && top.cls) {
          const list = top.cls.methods.get(name.text) ?? [];
          list.push({ start16: name.start, end16: name.end });
          top.cls.methods.set(name.text, list);
        }
        stack.push({ indent: ln.indent, kind: 'def', cls: null });
      }
    });
  }

  /** Base expressions of a class header starting at token k (expected `(`), keyword arguments skipped. */
  private bases(k: number, end: number): (Span & { text: string })[] {
    const ts = this.t;
    const out: (Span & { text: string })[] = [];
    if (ts[k]?.text !== '(') return out;
    const d = ts[k]!.depth + 1;
    let exprStart = k + 1;
    for (let i = k + 1; i < end; i++) {
      const tk = ts[i]!;
      if (tk.depth === d && (tk.text === ',' || tk.text === ')')) {
        const expr = ts.slice(exprStart, i).filter((x) => x.depth === d);
        const kw = expr.length >= 2 && expr[1]!.text === '=';
        const star = expr[0]?.text === '*' || expr[0]?.text === '**';
        if (!kw && !star && expr.length) {
          // the name before the first subscript/call, after any dots
          let last: Token | null = null;
          for (const x of expr) {
            if (x.text === '[' || x.text === '(') break;
            if (x.type === 'name') last = x;
          }
          if (last) out.push({ start16: last.start, end16: last.end, text: last.text });
        }
        exprStart = i + 1;
        if (tk.text === ')') break;
      }
    }
    return out;
  }

  private blockOf(k: number): Block | null {
    return this.lineBlock[this.t[k]!.line] ?? null;
  }

  private firstOfLine(k: number): Token {
    return this.t[this.tok.lineOf(k).first]!;
  }

  /** The kind of the declaration whose name starts at offset (§6.5 table, Python column). */
  declKind(start16: number): SymbolKind {
    const ts = this.t;
    const k = this.tok.indexAtStart(start16);
    if (k === -1 || ts[k]!.type !== 'name') return 'variable';
    const prev = ts[k - 1];
    const next = ts[k + 1];
    const block = this.blockOf(k);
    const ln = this.tok.lineOf(k);
    if (prev?.text === 'def' && prev.type === 'keyword') return block?.kind === 'class' ? 'method' : 'function';
    if (prev?.text === 'class' && prev.type === 'keyword') return 'class';
    const first = ts[ln.first]!;
    if (first.type === 'keyword' && (first.text === 'import' || first.text === 'from')) return 'import';
    if (
      this.defLines.has(ts[k]!.line) &&
      ts[k]!.depth >= 1 &&
      prev &&
      ['(', ',', '*', '**', '/'].includes(prev.text) &&
      next &&
      [',', ')', ':', '='].includes(next.text)
    )
      return 'parameter';
    if (prev?.text === '.') return 'property';
    if (block?.kind === 'class' && k === ln.first && next && (next.text === '=' || next.text === ':'))
      return 'property';
    return 'variable';
  }

  /** Reference kind of an edit span that is not a declaration (§6.5 rules 2–5). */
  refKind(start16: number): ReferenceKind {
    const ts = this.t;
    const k = this.tok.indexAtStart(start16);
    if (k === -1) {
      const s = this.tok.tokenAt(start16);
      if (s !== -1 && ts[s]!.type === 'string' && this.firstOfLine(s).text === '__all__') return 'import';
      return 'reference';
    }
    const first = this.firstOfLine(k);
    if (first.type === 'keyword' && (first.text === 'import' || first.text === 'from')) return 'import';
    const next = ts[k + 1];
    const prev = ts[k - 1];
    const sameLine = (x: Token | undefined) => !!x && x.line === ts[k]!.line;
    if (sameLine(next) && next!.text === '(') return 'call';
    if (first.text === '@' && (!sameLine(next) || next!.text === '(')) return 'call';
    if (prev?.text === '.' && sameLine(prev)) return 'attribute';
    return 'reference';
  }

  private sites: ScanSite[] | null = null;

  /** Dynamic patterns, custom attribute protocols and star imports (§5.3); computed once per module. */
  scanSites(): ScanSite[] {
    this.sites ??= this.findSites();
    return this.sites;
  }

  private findSites(): ScanSite[] {
    const ts = this.t;
    const out: ScanSite[] = [];
    const site = (tk: Token, code: ScanSite['code'], pattern: string, message: string) =>
      out.push({ start16: tk.start, end16: tk.end, code, pattern, message });
    for (let k = 0; k < ts.length; k++) {
      const tk = ts[k]!;
      const prev = ts[k - 1];
      const next = ts[k + 1];
      if (tk.type === 'keyword' && tk.text === 'from' && k === this.tok.lineOf(k).first) {
        const ln = this.tok.lineOf(k);
        const imp = ts.slice(k, ln.end).findIndex((x) => x.type === 'keyword' && x.text === 'import');
        if (imp !== -1 && ts[k + imp + 1]?.text === '*') {
          const mod = ts
            .slice(k + 1, k + imp)
            .map((x) => x.text)
            .join('');
          site(tk, 'StarImport', `from ${mod} import *`, `star import from ${mod}: names it provides are not tracked`);
        }
        continue;
      }
      if (tk.type !== 'name' || next?.text !== '(') continue;
      if (prev?.type === 'keyword' && prev.text === 'def') {
        if (CUSTOM_ATTR.has(tk.text) && this.blockOf(k)?.kind === 'class') {
          site(
            tk,
            'CustomAttributeProtocol',
            `def ${tk.text}`,
            `class defines ${tk.text}: attribute access may be computed at run time`,
          );
        }
        continue;
      }
      const dotted = prev?.text === '.';
      if (!dotted && ATTR_FNS.has(tk.text))
        site(
          tk,
          'DynamicAttributeAccess',
          `${tk.text}(`,
          `${tk.text}() call: attribute names may be computed at run time`,
        );
      else if (!dotted && NAME_FNS.has(tk.text) && ts[k + 2]?.text === ')' && ts[k + 3]?.text === '[')
        site(tk, 'DynamicNameLookup', `${tk.text}()[`, `${tk.text}()[…] looks names up at run time`);
      else if (EXEC_FNS.has(tk.text) && (!dotted || (tk.text === 'import_module' && ts[k - 2]?.text === 'importlib'))) {
        const at = dotted ? ts[k - 2]! : tk;
        const pattern = dotted ? 'importlib.import_module(' : `${tk.text}(`;
        site(
          at,
          'DynamicCodeExecution',
          pattern,
          `${pattern.slice(0, -1)}() executes or imports code chosen at run time`,
        );
      }
    }
    return out;
  }

  /** String literals whose whole content is `name` (content spans). */
  stringLiterals(name: string): Span[] {
    const out: Span[] = [];
    for (const tk of this.t) {
      if (tk.type !== 'string' || tk.bytes || !tk.content) continue;
      if (this.text.slice(tk.content.start, tk.content.end) === name)
        out.push({ start16: tk.content.start, end16: tk.content.end });
    }
    return out;
  }

  /** `.name` accesses (the name spans). */
  memberAccesses(name: string): Span[] {
    const ts = this.t;
    const out: Span[] = [];
    for (let k = 1; k < ts.length; k++) {
      const tk = ts[k]!;
      if (tk.type === 'name' && tk.text === name && ts[k - 1]!.text === '.')
        out.push({ start16: tk.start, end16: tk.end });
    }
    return out;
  }

  /** String arguments equal to `name` in the attribute position of getattr/setattr/hasattr/delattr calls. */
  attrStringArgs(name: string): Span[] {
    const ts = this.t;
    const out: Span[] = [];
    for (let k = 0; k + 1 < ts.length; k++) {
      const tk = ts[k]!;
      if (
        tk.type !== 'name' ||
        !ATTR_FNS.has(tk.text) ||
        ts[k + 1]!.text !== '(' ||
        ts[k - 1]?.text === '.' ||
        ts[k - 1]?.text === 'def'
      )
        continue;
      const d = ts[k + 1]!.depth + 1;
      let i = k + 2;
      while (i < ts.length && !(ts[i]!.depth === d && (ts[i]!.text === ',' || ts[i]!.text === ')'))) i++;
      if (ts[i]?.text !== ',') continue;
      const s = ts[i + 1];
      const after = ts[i + 2];
      if (
        s?.type === 'string' &&
        !s.bytes &&
        !s.fstring &&
        s.content &&
        this.text.slice(s.content.start, s.content.end) === name &&
        (after?.text === ',' || after?.text === ')')
      ) {
        out.push({ start16: s.content.start, end16: s.content.end });
      }
    }
    return out;
  }

  /** The class whose name starts at offset. */
  classAt(start16: number): PyClass | null {
    return this.classes.find((c) => c.name16.start16 === start16) ?? null;
  }

  /** The class whose body directly defines a method named at offset. */
  classOfMethod(start16: number): PyClass | null {
    for (const c of this.classes)
      for (const spans of c.methods.values()) if (spans.some((s) => s.start16 === start16)) return c;
    return null;
  }
}

/** Words whose presence makes a file worth tokenizing for the §5.3 scan sites. */
const SITE_HINT = /getattr|setattr|hasattr|delattr|globals|locals|vars|eval|exec|__import__|import_module|import\s*\*/;

/** Whether `scanSites` can find anything in this text (a cheap test before tokenizing). */
export function mayHaveSites(text: string): boolean {
  return SITE_HINT.test(text);
}

/** Whether a string literal whose whole content is `name` can occur (a quote right before the name). */
export function mayHaveStringLiteral(text: string, name: string): boolean {
  return text.includes(`"${name}`) || text.includes(`'${name}`);
}

const isBlank = (c: string | undefined) => c === ' ' || c === '\t';

/**
 * The reference kind of an edit span from the text around it, without tokenizing the file; null when only
 * the tokenizer can tell (continuation lines inside brackets, string contents other than `__all__`).
 */
export function quickRefKind(text: string, start: number, end: number): ReferenceKind | null {
  let ls = start;
  while (ls > 0 && text[ls - 1] !== '\n' && text[ls - 1] !== '\r') ls--;
  // A line continuing an open bracket or a backslash belongs to an earlier logical line.
  let p = ls - 1;
  while (p >= 0 && (text[p] === '\n' || text[p] === '\r' || isBlank(text[p]))) p--;
  if (p >= 0 && '([{,\\'.includes(text[p]!)) return null;
  let i = ls;
  while (i < start && isBlank(text[i])) i++;
  if (i < start && (text[i] === ')' || text[i] === ']' || text[i] === '}')) return null;
  const head = text.slice(i, i + 8);
  if (/^(?:from|import)\b/.test(head)) return 'import';
  const prev = text[start - 1];
  if (prev === '"' || prev === "'") return /^__all__\b/.test(head) ? 'import' : null;
  let a = end;
  while (isBlank(text[a])) a++;
  if (text[a] === '(') return 'call';
  if (text[i] === '@' && (a >= text.length || text[a] === '\n' || text[a] === '\r' || text[a] === '#')) return 'call';
  let b = start - 1;
  while (b >= ls && isBlank(text[b])) b--;
  if (text[b] === '.') return 'attribute';
  return 'reference';
}
