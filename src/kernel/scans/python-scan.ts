/**
 * The Python scans of docs/kernel.md §6.6 on tree-sitter trees: dynamic patterns (getattr-family calls,
 * `globals()[…]`-style lookups, eval/exec/imports chosen at run time), custom attribute protocols and star
 * imports, and the getattr-family string arguments that `aggressive` safety edits (the name scans are in
 * python-names.ts). A file is parsed only when its text holds a site word (a cheap, conservative test).
 * Also the text-only reference kind used before any tree.
 */
import type { ReferenceKind } from '../backends/types.js';
import { stringParts } from './python-names.js';
import { ancestorOf, isField, spanOf, type Span, type SyntaxNode } from './tree-sitter.js';

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
