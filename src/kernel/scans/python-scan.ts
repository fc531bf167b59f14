/**
 * The Python scans of 05-kernel.md §6.6 on tree-sitter trees: dynamic patterns (getattr-family calls,
 * `globals()[…]`-style lookups, eval/exec/imports chosen at run time), custom attribute protocols, star
 * imports, string literals equal to a name, `.name` accesses and the getattr-family string arguments that
 * `aggressive` safety edits.
 *
 * Speed comes from the text: a file is parsed only when its text holds a candidate (a cheap, conservative
 * test), and candidates that the edit set already covers are dropped first. When a file has no construct
 * that spans lines lexically (triple-quoted strings, backslash continuations, f-string fields left open at
 * a line end), every physical line lexes on its own, so only the candidates' lines are parsed (tree-sitter
 * included ranges); a line that does not parse cleanly alone falls back to the whole file.
 */
import type { ReferenceKind } from '../backends/types.js';
import type { PyFile } from './python.js';
import {
  ancestorOf,
  identifierStartingAt,
  isField,
  spanOf,
  type Span,
  type Syntax,
  type SyntaxNode,
} from './tree-sitter.js';

export interface ScanSite extends Span {
  code:
    'DynamicAttributeAccess' | 'DynamicNameLookup' | 'DynamicCodeExecution' | 'CustomAttributeProtocol' | 'StarImport';
  message: string;
  pattern: string;
}

const ATTR_FNS = new Set(['getattr', 'setattr', 'hasattr', 'delattr']);
const NAME_FNS = new Set(['globals', 'locals', 'vars']);
const EXEC_FNS = new Set(['eval', 'exec', '__import__', 'import_module']);
const CUSTOM_ATTR = new Set(['__getattr__', '__getattribute__', '__setattr__']);
const SCOPES = new Set(['function_definition', 'class_definition']);

/** The nearest enclosing def or class of a node (its own def excluded), or null at module level. */
export function scopeOf(n: SyntaxNode): SyntaxNode | null {
  return ancestorOf(n, SCOPES);
}

/** Text that any scan site needs (a superset: a match only means the file is worth parsing). */
const SITE_HINT =
  /\b(?:getattr|setattr|hasattr|delattr|globals|locals|vars|eval|exec|__import__|import_module)[\s\\]*\(|import[\s\\(]*\*|__(?:getattr|getattribute|setattr)__/;

/** Whether `scanSites` can find anything in this text (a cheap test before parsing). */
export function mayHaveSites(text: string): boolean {
  return SITE_HINT.test(text);
}

export function scanSites(root: SyntaxNode): ScanSite[] {
  const out: ScanSite[] = [];
  const site = (n: SyntaxNode, code: ScanSite['code'], pattern: string, message: string) =>
    out.push({ ...spanOf(n), code, pattern, message });
  for (const n of root.descendantsOfType(['import_from_statement', 'function_definition', 'call'])) {
    if (!n) continue;
    if (n.type === 'import_from_statement') {
      if (!n.namedChildren.some((c) => c?.type === 'wildcard_import')) continue;
      const mod = (n.childForFieldName('module_name')?.text ?? '').replace(/\s+/g, '');
      site(n, 'StarImport', `from ${mod} import *`, `star import from ${mod}: names it provides are not tracked`);
      continue;
    }
    if (n.type === 'function_definition') {
      const name = n.childForFieldName('name');
      if (name && CUSTOM_ATTR.has(name.text) && scopeOf(n)?.type === 'class_definition')
        site(
          name,
          'CustomAttributeProtocol',
          `def ${name.text}`,
          `class defines ${name.text}: attribute access may be computed at run time`,
        );
      continue;
    }
    const fn = n.childForFieldName('function');
    if (fn?.type === 'identifier') {
      const name = fn.text;
      if (ATTR_FNS.has(name))
        site(fn, 'DynamicAttributeAccess', `${name}(`, `${name}() call: attribute names may be computed at run time`);
      else if (NAME_FNS.has(name)) {
        const noArgs = (n.childForFieldName('arguments')?.namedChildCount ?? 1) === 0;
        if (noArgs && n.parent?.type === 'subscript' && isField(n.parent, 'value', n))
          site(fn, 'DynamicNameLookup', `${name}()[`, `${name}()[…] looks names up at run time`);
      } else if (EXEC_FNS.has(name))
        site(fn, 'DynamicCodeExecution', `${name}(`, `${name}() executes or imports code chosen at run time`);
    } else if (fn?.type === 'attribute') {
      const obj = fn.childForFieldName('object');
      if (
        obj?.type === 'identifier' &&
        obj.text === 'importlib' &&
        fn.childForFieldName('attribute')?.text === 'import_module'
      )
        site(
          obj,
          'DynamicCodeExecution',
          'importlib.import_module(',
          'importlib.import_module() executes or imports code chosen at run time',
        );
    }
  }
  return out.sort((a, b) => a.start16 - b.start16);
}

/** A string node's content span (between prefix+quote and quote) and its prefix. */
function stringParts(s: SyntaxNode): { content: Span; prefix: string } | null {
  const open = s.firstChild;
  const close = s.lastChild;
  if (open?.type !== 'string_start' || close?.type !== 'string_end') return null;
  return { content: { start16: open.endIndex, end16: close.startIndex }, prefix: open.text.replace(/["']+$/, '') };
}

/** String arguments equal to `name` in the attribute position of getattr-family calls (not bytes or f-strings). */
export function attrStringArgs(root: SyntaxNode, name: string): Span[] {
  const out: Span[] = [];
  for (const call of root.descendantsOfType('call')) {
    const fn = call?.childForFieldName('function');
    if (!call || fn?.type !== 'identifier' || !ATTR_FNS.has(fn.text)) continue;
    const args = (call.childForFieldName('arguments')?.namedChildren ?? []).filter((a) => a && a.type !== 'comment');
    const s = args[1];
    if (args[0]?.type === 'keyword_argument' || s?.type !== 'string') continue;
    const parts = stringParts(s);
    if (!parts || /[bBfFtT]/.test(parts.prefix)) continue;
    if (s.text.slice(parts.content.start16 - s.startIndex, parts.content.end16 - s.startIndex) === name)
      out.push(parts.content);
  }
  return out;
}

// --- candidates from the text, confirmed on the tree ----------------------------------------------------

const MULTILINE_LEXEME = /"""|'''|\\(?:\r|\n)/;
const OPEN_FSTRING_FIELD = /(?:^|[^\p{L}\p{N}_])(?:[fFtT][rR]?|[rR][fFtT])["'][^\r\n]*\{[^}\r\n]*$/mu;

/** Whether every physical line of `text` starts outside any string, so a line parses alone as it lexes. */
export function linesLexIndependently(text: string): boolean {
  return !MULTILINE_LEXEME.test(text) && !OPEN_FSTRING_FIELD.test(text);
}

/** The spans of the lines holding `offsets` (from the first non-blank character, line end included). */
function lineSpans(text: string, offsets: number[]): Span[] {
  const out: Span[] = [];
  for (const o of [...offsets].sort((a, b) => a - b)) {
    let s = o;
    while (s > 0 && text[s - 1] !== '\n' && text[s - 1] !== '\r') s--;
    while (text[s] === ' ' || text[s] === '\t' || text[s] === '\f') s++;
    let e = o;
    while (e < text.length && text[e] !== '\n' && text[e] !== '\r') e++;
    e += text.startsWith('\r\n', e) ? 2 : e < text.length ? 1 : 0;
    const last = out[out.length - 1];
    if (last && last.end16 >= s) last.end16 = Math.max(last.end16, e);
    else out.push({ start16: s, end16: e });
  }
  return out;
}

/**
 * Run `check` over the tree of only the candidates' lines when that is exact (see the file comment and
 * `linesLexIndependently`) and the lines parse cleanly, else over the whole file's tree.
 */
function confirm<T>(
  syntax: Syntax,
  file: PyFile,
  offsets: number[],
  lineLocal: boolean,
  check: (root: SyntaxNode) => T,
): T {
  if (lineLocal && linesLexIndependently(file.text)) {
    const r = syntax.withRanges(file.text, lineSpans(file.text, offsets), (root) =>
      root.hasError ? null : { value: check(root) },
    );
    if (r) return r.value;
  }
  return file.tree(check);
}

function indexesOf(text: string, needle: string): number[] {
  const out: number[] = [];
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + 1)) out.push(i);
  return out;
}

/** String literals (bytes excluded) whose whole content is `name`, as content spans. */
export function stringLiterals(
  syntax: Syntax,
  file: PyFile,
  name: string,
  covered?: (start16: number) => boolean,
): Span[] {
  const text = file.text;
  const starts = [...indexesOf(text, `"${name}"`), ...indexesOf(text, `'${name}'`)]
    .map((i) => i + 1)
    .filter((s) => !covered?.(s))
    .sort((a, b) => a - b);
  if (starts.length === 0) return [];
  return confirm(syntax, file, starts, true, (root) => {
    const out: Span[] = [];
    for (const s of starts) {
      const n = root.descendantForIndex(s, s + name.length);
      const str = n?.type === 'string_content' ? n.parent : null;
      const parts = str?.type === 'string' ? stringParts(str) : null;
      if (!parts || /[bB]/.test(parts.prefix)) continue;
      if (parts.content.start16 === s && parts.content.end16 === s + name.length) out.push(parts.content);
    }
    return out;
  });
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** `.name` attribute accesses, as name spans. */
export function memberAccesses(
  syntax: Syntax,
  file: PyFile,
  name: string,
  covered?: (start16: number) => boolean,
): Span[] {
  const text = file.text;
  if (!text.includes(name)) return [];
  const re = new RegExp(`\\.[\\s\\\\]*${escapeRe(name)}(?![\\p{L}\\p{N}_])`, 'gu');
  let lineLocal = true;
  const starts: number[] = [];
  for (const m of text.matchAll(re)) {
    const s = m.index + m[0].length - name.length;
    if (covered?.(s)) continue;
    if (/[\r\n]/.test(m[0])) lineLocal = false;
    starts.push(s);
  }
  if (starts.length === 0) return [];
  return confirm(syntax, file, starts, lineLocal, (root) => {
    const out: Span[] = [];
    for (const s of starts) {
      const n = identifierStartingAt(root, s, (x) => x.type === 'identifier');
      if (n && n.endIndex === s + name.length && n.parent?.type === 'attribute' && isField(n.parent, 'attribute', n))
        out.push(spanOf(n));
    }
    return out;
  });
}

// --- reference kinds from the text ----------------------------------------------------------------------

const TRIPLE_QUOTED_FSTRING = /(?:[fFtT][rR]?|[rR][fFtT])(?:"""|''')/;

/** Whether `quickRefKind` may be used on this file (no triple-quoted f-string can hide a line start). */
export function quickRefKindSafe(text: string): boolean {
  return !TRIPLE_QUOTED_FSTRING.test(text);
}

const isBlank = (c: string | undefined) => c === ' ' || c === '\t';

/**
 * The reference kind of an edit span read from the text around it, without parsing; null when only the
 * tree can tell (continuation lines inside brackets, string contents other than `__all__` entries). Where
 * it answers, it agrees with the tree (tests/kernel/python/syntax.test.ts checks this on every fixture).
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
