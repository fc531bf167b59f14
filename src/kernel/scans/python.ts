/**
 * Syntactic facts of one Python file from its tree-sitter tree (docs/kernel.md §6.5–6.6): the identifier at
 * a position, declaration kinds (the §6.5 table, Python column), reference kinds (rules 2–5), classes with
 * their base lists and methods (the override closure's candidates), and the scans of python-scan.ts and
 * python-names.ts.
 * Offsets are UTF-16 indices into the BOM-stripped text. A file is parsed only when a question needs its
 * tree; the scans first look for candidates in the text.
 */
import type { ReferenceKind, SymbolKind } from '../backends/types.js';
import {
  confirmNames,
  confirmNamesBatch,
  linesLexIndependently,
  mergeSites,
  nameCandidates,
  quickNames,
  type NameCandidates,
  type NameSites,
} from './python-names.js';
import {
  attrStringArgs,
  mayHaveSites,
  quickRefKind,
  quickRefKindSafe,
  scanSites,
  scopeOf,
  type ScanSite,
} from './python-scan.js';
import {
  ancestorOf,
  identifierStartingAt,
  isField,
  nodeAt,
  type Span,
  spanOf,
  type Syntax,
  SyntaxFile,
  type SyntaxNode,
} from './tree-sitter.js';

export type { NameSites, ScanSite, Span };

export interface PyClass {
  name: string;
  name16: Span;
  /** The name of each base expression (`pkg.Base` → `Base`, `Generic[T]` → `Generic`); keywords skipped. */
  bases: (Span & { text: string })[];
  /** Methods defined in the class's own scope (every definition of each name). */
  methods: Map<string, Span[]>;
}

const IMPORTS = new Set(['import_statement', 'import_from_statement', 'future_import_statement']);
const PARAMETER_LISTS = new Set(['parameters', 'lambda_parameters']);
const SPLATS = new Set(['list_splat_pattern', 'dictionary_splat_pattern']);
const DEFAULTS = new Set(['default_parameter', 'typed_default_parameter']);

/** A name scan's memo: candidates the text decided, the rest for a tree, and all sites once confirmed. */
interface NameEntry {
  known: NameSites;
  rest: NameCandidates;
  sites: NameSites | null;
  /** Whether the text holds `def NAME` (override-closure candidates), once asked. */
  defines?: boolean;
}

/** A class header with something after its name (a base list or type parameters): text worth parsing. */
const BASED_CLASS = /(?<![\p{L}\p{N}_])class\s+[\p{L}\p{N}_]+\s*[[(]/u;

export const isPyIdentifier = (n: SyntaxNode): boolean => n.type === 'identifier';

/** Whether an identifier is a parameter name (def and lambda parameter lists, defaults, splats, annotations). */
function isParameter(n: SyntaxNode): boolean {
  let p = n.parent;
  if (p && SPLATS.has(p.type)) p = p.parent;
  if (p && p.type === 'typed_parameter') p = p.parent;
  else if (p && DEFAULTS.has(p.type)) {
    if (!isField(p, 'name', n)) return false;
    p = p.parent;
  }
  return !!p && PARAMETER_LISTS.has(p.type);
}

/** The statement holding a node: its ancestor whose parent is a block or the module. */
function statementOf(n: SyntaxNode): SyntaxNode {
  let s = n;
  while (s.parent && s.parent.type !== 'block' && s.parent.type !== 'module') s = s.parent;
  return s;
}

/** The name of a base-list expression: the last name before any subscript or call. */
function baseName(e: SyntaxNode): SyntaxNode | null {
  let x: SyntaxNode | null = e;
  while (x && (x.type === 'subscript' || x.type === 'call' || x.type === 'generic_type'))
    x = x.childForFieldName(x.type === 'call' ? 'function' : 'value') ?? x.namedChild(0);
  if (x?.type === 'attribute') return x.childForFieldName('attribute');
  return x?.type === 'identifier' ? x : null;
}

function classesOf(root: SyntaxNode): PyClass[] {
  const out: PyClass[] = [];
  const byStart = new Map<number, PyClass>();
  for (const c of root.descendantsOfType('class_definition')) {
    const name = c.childForFieldName('name');
    if (!name) continue;
    const bases: PyClass['bases'] = [];
    for (const arg of c.childForFieldName('superclasses')?.namedChildren ?? []) {
      if (!arg || arg.type === 'keyword_argument' || arg.type === 'comment') continue;
      if (arg.type === 'list_splat' || arg.type === 'dictionary_splat') continue;
      const b = baseName(arg);
      if (b) bases.push({ ...spanOf(b), text: b.text });
    }
    const cls: PyClass = { name: name.text, name16: spanOf(name), bases, methods: new Map() };
    out.push(cls);
    byStart.set(c.startIndex, cls);
  }
  if (out.length === 0) return out;
  for (const f of root.descendantsOfType('function_definition')) {
    const scope = f ? scopeOf(f) : null;
    const name = f?.childForFieldName('name');
    if (!scope || scope.type !== 'class_definition' || !name) continue;
    const cls = byStart.get(scope.startIndex);
    if (!cls) continue;
    const list = cls.methods.get(name.text) ?? [];
    list.push(spanOf(name));
    cls.methods.set(name.text, list);
  }
  return out;
}

/** The kind of the declaration whose name starts at `start16` (§6.5 table, Python column). */
function declKindAt(root: SyntaxNode, start16: number): SymbolKind {
  const n = identifierStartingAt(root, start16, isPyIdentifier);
  if (!n) return 'variable';
  const p = n.parent;
  if (p?.type === 'function_definition' && isField(p, 'name', n))
    return scopeOf(p)?.type === 'class_definition' ? 'method' : 'function';
  if (p?.type === 'class_definition' && isField(p, 'name', n)) return 'class';
  if (ancestorOf(n, IMPORTS)) return 'import';
  if (isParameter(n)) return 'parameter';
  if (p?.type === 'attribute' && isField(p, 'attribute', n)) return 'property';
  // A class-body assignment target (`limit: int = 3`, `count = 0`), not a chained or nested one.
  if (p?.type === 'assignment' && isField(p, 'left', n) && p.parent?.type === 'expression_statement')
    if (scopeOf(p)?.type === 'class_definition') return 'property';
  return 'variable';
}

/** Reference kind of a span that is not a declaration, from the tree (§6.5 rules 2–5). */
function refKindAt(root: SyntaxNode, text: string, start16: number): ReferenceKind {
  const n = nodeAt(root, start16);
  if (n.type !== 'identifier' || n.startIndex !== start16) {
    // A span inside a string: an `__all__` entry is an import.
    const inString = n.type === 'string' || n.type === 'string_content' || n.parent?.type === 'string';
    if (
      inString &&
      /^__all__(?![\p{L}\p{N}_])/u.test(text.slice(statementOf(n).startIndex, statementOf(n).startIndex + 8))
    )
      return 'import';
    return 'reference';
  }
  if (ancestorOf(n, IMPORTS)) return 'import';
  const p = n.parent;
  if (p?.type === 'decorator') return 'call';
  if (p?.type === 'call' && isField(p, 'function', n)) return 'call';
  if (p?.type === 'attribute' && isField(p, 'attribute', n)) {
    const g = p.parent;
    if (g?.type === 'decorator' || (g?.type === 'call' && isField(g, 'function', p))) return 'call';
    return 'attribute';
  }
  return 'reference';
}

/** One Python file's syntax; derived facts are memoized, the tree itself lives in the shared cache. */
export class PyFile extends SyntaxFile {
  private classList: PyClass[] | null = null;
  private sites: ScanSite[] | null = null;
  private siteHints: boolean | null = null;
  private quickSafe: boolean | null = null;
  private independent: boolean | null = null;
  private based: boolean | null = null;
  /** Name scans of the last few names: text candidates, and the sites once confirmed on a tree. */
  private readonly names = new Map<string, NameEntry>();

  /** f-string replacement fields hold identifiers too; string text, comments and keywords do not. */
  protected isIdentifier(n: SyntaxNode): boolean {
    return isPyIdentifier(n);
  }

  declKind(start16: number): SymbolKind {
    return this.tree((root) => declKindAt(root, start16));
  }

  /**
   * Whether the identifier at `start16` names a def or class that is the only binding of its name in the
   * text of its scope: no other def or class of that name, no assignment, import, `as`, `global`, loop or
   * walrus binding of it, no `@overload`. pyright's definition of such a name is the name itself, so the
   * kernel need not ask (a conservative text check: any doubt means ask).
   */
  soleDeclaration(start16: number): boolean {
    return this.tree((root) => {
      const n = identifierStartingAt(root, start16, isPyIdentifier);
      const d = n?.parent;
      if (!n || !d || (d.type !== 'function_definition' && d.type !== 'class_definition')) return false;
      if (!isField(d, 'name', n)) return false;
      const def = d.parent?.type === 'decorated_definition' ? d.parent : d;
      if (def !== d && /overload/.test(this.text.slice(def.startIndex, d.startIndex))) return false;
      const scope = def.parent;
      if (!scope) return false;
      const body = this.text.slice(scope.startIndex, scope.endIndex);
      const id = `(?<![\\p{L}\\p{N}_])${n.text}(?![\\p{L}\\p{N}_])`;
      const decls = body.match(new RegExp(`\\b(?:def|class)\\s+${id}`, 'gu'))?.length ?? 0;
      const other = new RegExp(
        `${id}\\s*(?::[^=\\n]*)?(?<![=!<>])=(?!=)|${id}\\s*:=|\\b(?:import|global|nonlocal|as|for)\\b[^\\n]*${id}`,
        'u',
      );
      return decls === 1 && !other.test(body);
    });
  }

  /** The `as NAME` of the one import alias binding `name` in this file (`import m as NAME`, `from m import x as NAME`). */
  aliasDeclaration(name: string): { start16: number; end16: number } | null {
    if (!this.text.includes(name)) return null;
    return this.tree((root) => {
      const found = root
        .descendantsOfType('aliased_import')
        .map((n) => n?.childForFieldName('alias'))
        .filter((a): a is SyntaxNode => !!a && a.text === name);
      return found.length === 1 ? spanOf(found[0]!) : null;
    });
  }

  /** Reference kind of an edit span: the text answers single-line cases; the tree answers the rest. */
  refKind(start16: number, end16: number): ReferenceKind {
    this.quickSafe ??= quickRefKindSafe(this.text);
    return (this.quickSafe ? quickRefKind(this.text, start16, end16) : null) ?? this.treeRefKind(start16);
  }

  /** Reference kind from the tree alone. */
  treeRefKind(start16: number): ReferenceKind {
    return this.tree((root) => refKindAt(root, this.text, start16));
  }

  get classes(): PyClass[] {
    this.classList ??= this.tree(classesOf);
    return this.classList;
  }

  /** The class whose name starts at offset. */
  classAt(start16: number): PyClass | null {
    return this.classes.find((c) => c.name16.start16 === start16) ?? null;
  }

  /** The class whose own scope defines a method named at offset. */
  classOfMethod(start16: number): PyClass | null {
    for (const c of this.classes)
      for (const spans of c.methods.values()) if (spans.some((s) => s.start16 === start16)) return c;
    return null;
  }

  /** Whether the text may hold a scan site at all (`mayHaveSites`, memoized: it does not depend on a name). */
  get mayHaveSites(): boolean {
    this.siteHints ??= mayHaveSites(this.text);
    return this.siteHints;
  }

  /** Dynamic patterns, custom attribute protocols and star imports (§5.3), sorted by offset. */
  scanSites(): ScanSite[] {
    this.sites ??= this.tree(scanSites);
    return this.sites;
  }

  /** Whether every physical line lexes on its own (python-names.ts `linesLexIndependently`). */
  get linesLexIndependently(): boolean {
    this.independent ??= linesLexIndependently(this.text);
    return this.independent;
  }

  /** String literals whose whole content is `name` (content spans, bytes excluded), except at `covered` starts. */
  stringLiterals(name: string, covered?: (start16: number) => boolean): Span[] {
    return this.nameSites(name, 'strings', covered);
  }

  /** `.name` attribute accesses (the name spans), except at `covered` starts. */
  memberAccesses(name: string, covered?: (start16: number) => boolean): Span[] {
    return this.nameSites(name, 'members', covered);
  }

  /**
   * Text-only work for a rename of `name` (name candidates, the quick reference-kind and scan checks), done
   * ahead while the backend computes the rename: nothing here depends on the edit set.
   */
  warmFor(name: string, o: { method?: boolean } = {}): void {
    this.quickSafe ??= quickRefKindSafe(this.text);
    void this.mayHaveSites;
    this.nameEntry(name);
    if (o.method && this.definesDef(name)) void this.hasBasedClass;
  }

  /** Whether the text holds `def NAME` anywhere (a text check; the override closure's candidate filter). */
  definesDef(name: string): boolean {
    if (!this.text.includes(name)) return false;
    const e = this.nameEntry(name);
    e.defines ??= new RegExp(`(?<![\\p{L}\\p{N}_])def\\s+${name}(?![\\p{L}\\p{N}_])`, 'u').test(this.text);
    return e.defines;
  }

  /** Whether a class header here has a base list or type parameters (text only). */
  get hasBasedClass(): boolean {
    this.based ??= BASED_CLASS.test(this.text);
    return this.based;
  }

  /** The name-scan memo of `name` (the last few names are kept). */
  private nameEntry(name: string): NameEntry {
    let e = this.names.get(name);
    if (!e) {
      if (this.names.size >= 4) this.names.delete(this.names.keys().next().value!);
      const cand = nameCandidates(this.text, name);
      const q =
        cand.lineLocal && this.linesLexIndependently
          ? quickNames(this.text, name, cand)
          : { known: { strings: [], members: [] }, rest: cand };
      e = { ...q, sites: null };
      this.names.set(name, e);
    }
    return e;
  }

  /** Whether scanning `kinds` of `name` would parse: an uncovered candidate that the text cannot decide. */
  needsNameSites(name: string, kinds: (keyof NameSites)[], covered?: (start16: number) => boolean): boolean {
    const e = this.nameEntry(name);
    return !e.sites && kinds.some((k) => e.rest[k].some((s) => !covered?.(s)));
  }

  /**
   * One kind of name site. Nothing is parsed unless an undecided candidate of that kind is uncovered;
   * then every undecided candidate of both kinds is confirmed on one tree, so the other scan of the same
   * name parses nothing.
   */
  private nameSites(name: string, kind: keyof NameSites, covered?: (start16: number) => boolean): Span[] {
    const e = this.nameEntry(name);
    if (!e.sites && e.rest[kind].some((s) => !covered?.(s)))
      e.sites = mergeSites(e.known, confirmNames(this.syntax, this, name, e.rest));
    return (e.sites ?? e.known)[kind].filter((s) => !covered?.(s.start16));
  }

  /** Confirm the name sites of many files in as few parses as possible (python-names.ts). */
  static prefetchNameSites(
    syntax: Syntax,
    files: { file: PyFile; covered?: (start16: number) => boolean }[],
    name: string,
    kinds: (keyof NameSites)[],
  ): void {
    const todo = files.filter(({ file, covered }) => file.needsNameSites(name, kinds, covered)).map((x) => x.file);
    if (todo.length < 2) return;
    const entries = todo.map((file) => file.nameEntry(name));
    const items = todo.map((file, i) => ({ file, cand: entries[i]!.rest }));
    confirmNamesBatch(syntax, items, name).forEach(
      (sites, i) => (entries[i]!.sites = mergeSites(entries[i]!.known, sites)),
    );
  }

  /** String arguments equal to `name` in the attribute position of getattr/setattr/hasattr/delattr calls. */
  attrStringArgs(name: string): Span[] {
    return this.tree((root) => attrStringArgs(root, name));
  }
}
