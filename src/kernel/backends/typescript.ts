/**
 * The in-process TypeScript/JavaScript backend (05-kernel.md §6.2, §6.5): rename via the LanguageService
 * with prefix/suffix text and the re-export closure, outlines from the navigation tree, organize-imports.
 */
import type * as TS from 'typescript';
import { createRequire } from 'node:module';
import { KernelError } from '../errors.js';
import type { KernelWarning } from '../envelope.js';
import { compareUtf8 } from '../ids.js';
import { loadWithCodeCache } from './ts-load.js';
import { identifiersAt, isJsxTag, prefixSensitive, symbolKindOf } from './ts-nodes.js';
import { tsMemberAccesses, tsStringLiterals } from '../scans/ts-scan.js';
import { ProjectHost, configFiles, toAbs, toRel, type TsModule, type TsProject } from './ts-project.js';
import type {
  BackendSession,
  LanguageBackend,
  OutlineItem,
  RawEdit,
  ReferenceKind,
  ResolvedTarget,
  Span16,
  WorkspaceView,
} from './types.js';

let tsPromise: Promise<TsModule> | null = null;
let tsLoaded: { saveCache(): void } | null = null;

/** Load the bundled typescript lazily (never at CLI start), through the V8 code cache of ./ts-load.ts. */
export function loadTs(): Promise<TsModule> {
  tsPromise ??= Promise.resolve().then(() => {
    const l = loadWithCodeCache<TsModule>(createRequire(import.meta.url).resolve('typescript'));
    tsLoaded = l;
    return l.module;
  });
  return tsPromise;
}

/** Persist the code cache once TypeScript has done a whole operation's work (first run only). */
export function saveTsCodeCache(): void {
  tsLoaded?.saveCache();
}

function isLibrary(fileName: string): boolean {
  return fileName.includes('/node_modules/') || /\/typescript\/lib\/lib\.[^/]*\.d\.ts$/.test(fileName);
}

export class TypeScriptSession implements BackendSession {
  private host: ProjectHost;
  private current: TsProject | null = null;

  constructor(
    readonly ts: TsModule,
    private view: WorkspaceView,
  ) {
    this.host = new ProjectHost(ts, view);
    const K = ts.SyntaxKind;
    DECLARATION_KINDS = new Set([
      K.MethodDeclaration,
      K.PropertyDeclaration,
      K.MethodSignature,
      K.PropertySignature,
      K.FunctionDeclaration,
      K.ClassDeclaration,
      K.InterfaceDeclaration,
      K.TypeAliasDeclaration,
      K.EnumDeclaration,
      K.EnumMember,
      K.VariableDeclaration,
      K.Parameter,
      K.GetAccessor,
      K.SetAccessor,
      K.ModuleDeclaration,
    ]);
  }

  private program: TS.Program | null = null;

  project(fileRel: string): TsProject {
    if (this.current?.fileNames.has(toAbs(this.view.root, fileRel))) return this.current;
    this.current = this.host.projectFor(fileRel);
    this.program = null;
    this.outlines.clear();
    return this.current;
  }

  /** The current project's program, cached until the next sync or project switch. */
  private programFor(fileRel: string): TS.Program | undefined {
    const p = this.project(fileRel);
    this.program ??= p.ls.getProgram() ?? null;
    return this.program ?? undefined;
  }

  /** Other tsconfig projects than the one used (ProjectBoundary). */
  otherProjects(): string[] {
    const used = this.current?.configPath ?? null;
    return configFiles(this.view).filter((c) => c !== used && /tsconfig[^/]*\.json$/.test(c));
  }

  sourceFile(fileRel: string): TS.SourceFile {
    const abs = toAbs(this.view.root, fileRel);
    const sf = this.programFor(fileRel)?.getSourceFile(abs);
    if (sf) return sf;
    const text = this.view.texts.get(fileRel)?.text ?? '';
    return this.ts.createSourceFile(abs, text, this.ts.ScriptTarget.Latest, true);
  }

  /** The deepest identifier whose [start, end] contains the offset; one starting there wins. */
  private identifierNode(sf: TS.SourceFile, pos: number): TS.Node | null {
    const ts = this.ts;
    const tokenAt = (ts as unknown as { getTokenAtPosition?: (sf: TS.SourceFile, pos: number) => TS.Node })
      .getTokenAtPosition;
    if (tokenAt) {
      const t = tokenAt(sf, pos);
      if ((ts.isIdentifier(t) || ts.isPrivateIdentifier(t)) && t.getStart(sf) <= pos) return t;
      if (pos > 0) {
        const prev = tokenAt(sf, pos - 1);
        if ((ts.isIdentifier(prev) || ts.isPrivateIdentifier(prev)) && prev.end === pos) return prev;
      }
      if (!ts.isJsxText(t) && t.kind !== ts.SyntaxKind.EndOfFileToken) return null;
    }
    let best: TS.Node | null = null;
    const visit = (node: TS.Node) => {
      ts.forEachChild(node, (child) => {
        const start = child.getStart(sf);
        if (start > pos || child.end < pos) return;
        if (ts.isIdentifier(child) || ts.isPrivateIdentifier(child)) {
          if (!best || start === pos) best = child;
        } else visit(child);
      });
    };
    visit(sf);
    return best;
  }

  identifierAt(file: string, offset16: number): { start16: number; end16: number; text: string } | null {
    const sf = this.sourceFile(file);
    const n = this.identifierNode(sf, offset16);
    if (!n) return null;
    const start16 = n.getStart(sf);
    return { start16, end16: n.end, text: n.getText(sf) };
  }

  /** The name of the import/export alias declaration that binds the identifier at `offset16`, in `file`. */
  private aliasDeclaration(file: string, offset16: number, name: string): Span16 | null {
    const program = this.programFor(file);
    const sf = program?.getSourceFile(toAbs(this.view.root, file));
    const node = sf ? this.identifierNode(sf, offset16) : null;
    if (!program || !sf || !node) return null;
    const sym = program.getTypeChecker().getSymbolAtLocation(node);
    if (!sym || !(sym.flags & this.ts.SymbolFlags.Alias)) return null;
    for (const d of sym.declarations ?? []) {
      const n = (d as TS.NamedDeclaration).name;
      if (!n || d.getSourceFile() !== sf || n.getText(sf) !== name) continue;
      return { file, start16: n.getStart(sf), end16: n.end };
    }
    return null;
  }

  async resolveAt(file: string, offset16: number, _warnings: KernelWarning[]): Promise<ResolvedTarget> {
    const root = this.view.root;
    const ls = this.project(file).ls;
    const abs = toAbs(root, file);
    const id = this.identifierAt(file, offset16);
    if (!id) throw new KernelError('SymbolNotFound', `no identifier in ${file}`, { reason: 'no_identifier' });
    const info = ls.getRenameInfo(abs, id.start16, { allowRenameOfImportPath: false });
    if (!info.canRename) {
      const lib = /standard TypeScript library|node_modules/.test(info.localizedErrorMessage);
      throw new KernelError('NotRenameable', `cannot rename ${id.text}: ${info.localizedErrorMessage}`, {
        name: id.text,
        reason: lib ? 'library_symbol' : 'backend_refused',
        backend_message: info.localizedErrorMessage,
      });
    }
    if (info.fileToRename) {
      throw new KernelError('NotRenameable', `renaming ${id.text} would rename a file`, {
        name: id.text,
        reason: 'file_rename',
        backend_message: null,
      });
    }
    let start = { file, offset16: id.start16 };
    const defs = ls.getDefinitionAtPosition(abs, id.start16) ?? [];
    const inWs = defs.filter((d) => !isLibrary(d.fileName) && this.view.texts.has(toRel(root, d.fileName)));
    if (defs.length > 0 && inWs.length === 0) {
      throw new KernelError('NotRenameable', `${id.text} is defined outside the workspace`, {
        name: id.text,
        reason: 'library_symbol',
        backend_message: null,
      });
    }
    const same = inWs.filter((d) => d.name === id.text);
    let declarations: Span16[] = [];
    let kindStr = info.kind as string;
    if (same.length > 0 && same.length === inWs.length) {
      declarations = same.map((d) => ({
        file: toRel(root, d.fileName),
        start16: d.textSpan.start,
        end16: d.textSpan.start + d.textSpan.length,
      }));
      declarations.sort((a, b) => compareUtf8(a.file, b.file) || a.start16 - b.start16);
      const first = declarations[0]!;
      start = { file: first.file, offset16: first.start16 };
      kindStr =
        same.find((d) => toRel(root, d.fileName) === first.file && d.textSpan.start === first.start16)?.kind ?? kindStr;
      if (kindStr === 'alias') kindStr = info.kind;
    } else {
      // An explicit alias (`import { x as pd }`) selected at a use: the alias is the declaration, so the
      // symbol (location, id) is the same whichever reference was selected.
      const alias = this.aliasDeclaration(file, id.start16, id.text);
      declarations = [alias ?? { file, start16: id.start16, end16: id.end16 }];
      start = { file, offset16: declarations[0]!.start16 };
    }
    return { file: start.file, offset16: start.offset16, name: id.text, kind: symbolKindOf(kindStr), declarations };
  }

  private locations(fileRel: string, pos: number, prefixAndSuffix = true): readonly TS.RenameLocation[] {
    const ls = this.project(fileRel).ls;
    return (
      ls.findRenameLocations(toAbs(this.view.root, fileRel), pos, false, false, {
        providePrefixAndSuffixTextForRename: prefixAndSuffix,
      }) ?? []
    );
  }

  /** `TUG_TS_RENAME=closure` forces the prefix/suffix search with the re-export closure (tests, diagnosis). */
  fastRename = process.env.TUG_TS_RENAME !== 'closure';

  async renameEdits(t: ResolvedTarget, newName: string): Promise<RawEdit[]> {
    return (this.fastRename ? this.renameInOneSearch(t, newName) : null) ?? this.renameWithClosure(t, newName);
  }

  /**
   * One search without prefix/suffix text: TypeScript then renames straight through re-exports, which is
   * exactly what the re-export closure computes with one search per barrel. The two differ only where
   * prefix/suffix text matters — shorthand properties and object destructuring, where a search without it
   * also renames the property. So the result stands only if no location is such a site (or unknown);
   * otherwise the closure search runs (null). So does any location holding another name: without
   * prefix/suffix text TypeScript also renames through existing aliases (`export { x as y }` renames `y`).
   */
  private renameInOneSearch(t: ResolvedTarget, newName: string): RawEdit[] | null {
    const ts = this.ts;
    const root = this.view.root;
    const locs = this.locations(t.file, t.offset16, false);
    const rels = new Map<string, string>();
    const relOf = (abs: string) => {
      let r = rels.get(abs);
      if (r === undefined) rels.set(abs, (r = toRel(root, abs)));
      return r;
    };
    const byFile = new Map<string, number[]>();
    for (const loc of locs) {
      if (loc.prefixText || loc.suffixText) return null;
      const file = relOf(loc.fileName);
      let l = byFile.get(file);
      if (!l) byFile.set(file, (l = []));
      l.push(loc.textSpan.start);
    }
    const sfs = new Map<string, TS.SourceFile>();
    const nodes = new Map<string, Map<number, TS.Node>>();
    for (const [file, starts] of byFile) {
      const sf = this.sourceFile(file);
      sfs.set(file, sf);
      nodes.set(file, identifiersAt(ts, sf, starts));
    }
    const out: RawEdit[] = [];
    const seen = new Set<TS.Node>();
    for (const loc of locs) {
      const file = relOf(loc.fileName);
      const start = loc.textSpan.start;
      const node = nodes.get(file)!.get(start);
      // Another name (an alias `export { x as y }` renamed through) or a prefix-sensitive site: closure search.
      if (!node || prefixSensitive(ts, node) || (node as TS.Identifier).text !== t.name) return null;
      if (seen.has(node)) continue;
      seen.add(node);
      out.push({
        file,
        unit: 'utf16-offset',
        start,
        end: start + loc.textSpan.length,
        newText: newName,
        refKind: this.refKind(sfs.get(file)!, node, t, file, start),
        jsxTag: isJsxTag(ts, node),
      });
    }
    return out;
  }

  /** The §6.2 algorithm: prefix/suffix search, then the re-export closure, one search per barrel. */
  private async renameWithClosure(t: ResolvedTarget, newName: string): Promise<RawEdit[]> {
    const ts = this.ts;
    const root = this.view.root;
    const out = new Map<string, RawEdit>();
    const queue: { file: string; pos: number }[] = [{ file: t.file, pos: t.offset16 }];
    const visited = new Set<string>();
    const sfs = new Map<string, TS.SourceFile>();
    const sfOf = (f: string) => {
      let sf = sfs.get(f);
      if (!sf) sfs.set(f, (sf = this.sourceFile(f)));
      return sf;
    };
    while (queue.length > 0) {
      const q = queue.shift()!;
      const key = `${q.file}:${q.pos}`;
      if (visited.has(key)) continue;
      visited.add(key);
      const locs = this.locations(q.file, q.pos);
      // One pruned AST descent per file finds the identifier of every location (not a token lookup each).
      const byFile = new Map<string, number[]>();
      for (const loc of locs) {
        const file = toRel(root, loc.fileName);
        let l = byFile.get(file);
        if (!l) byFile.set(file, (l = []));
        l.push(loc.textSpan.start);
      }
      const nodes = new Map<string, Map<number, TS.Node>>();
      for (const [file, starts] of byFile) nodes.set(file, identifiersAt(ts, sfOf(file), starts));
      for (const loc of locs) {
        const file = toRel(root, loc.fileName);
        const start = loc.textSpan.start;
        const k = `${file}:${start}`;
        let newText = (loc.prefixText ?? '') + newName + (loc.suffixText ?? '');
        const sf = sfOf(file);
        const node = nodes.get(file)!.get(start) ?? this.identifierNode(sf, start);
        const parent = node?.parent;
        if (
          loc.suffixText === ` as ${t.name}` &&
          !loc.prefixText &&
          parent &&
          ts.isExportSpecifier(parent) &&
          !parent.propertyName
        ) {
          // Re-export closure: rename through the barrel instead of aliasing.
          newText = newName;
          queue.push({ file, pos: start });
        }
        if (out.has(k) && out.get(k)!.newText === newName) continue;
        out.set(k, {
          file,
          unit: 'utf16-offset',
          start,
          end: start + loc.textSpan.length,
          newText,
          refKind: this.refKind(sf, node, t, file, start),
          jsxTag: !!node && isJsxTag(ts, node),
        });
      }
    }
    return [...out.values()];
  }

  private refKind(
    sf: TS.SourceFile,
    node: TS.Node | null,
    t: ResolvedTarget,
    file: string,
    start: number,
  ): ReferenceKind {
    const ts = this.ts;
    if (t.declarations.some((d) => d.file === file && d.start16 === start)) return 'definition';
    if (!node) return 'reference';
    for (let p: TS.Node | undefined = node.parent; p; p = p.parent) {
      if (ts.isImportDeclaration(p) || ts.isExportDeclaration(p) || ts.isImportEqualsDeclaration(p)) return 'import';
      if (ts.isStatement(p) || ts.isSourceFile(p)) break;
    }
    const parent = node.parent;
    if (parent && (parent as TS.NamedDeclaration).name === node && DECLARATION_KINDS.has(parent.kind))
      return 'definition';
    if (isJsxTag(ts, node)) return 'call';
    let callee: TS.Node = node;
    if (parent && ts.isPropertyAccessExpression(parent) && parent.name === node) callee = parent;
    const cp = callee.parent;
    if (cp && (ts.isCallExpression(cp) || ts.isNewExpression(cp) || ts.isDecorator(cp)) && cp.expression === callee)
      return 'call';
    if (parent && ts.isPropertyAccessExpression(parent) && parent.name === node) return 'attribute';
    void sf;
    return 'reference';
  }

  /** Outlines per project and file (resolveSymbol and symbolInfo both ask); cleared by sync and project switches. */
  private outlines = new Map<string, OutlineItem[]>();

  async outline(file: string): Promise<OutlineItem[]> {
    const ls = this.project(file).ls;
    const key = `${this.current?.key ?? ''}\0${file}`;
    const hit = this.outlines.get(key);
    if (hit) return hit;
    const items = this.outlineOf(ls, file);
    this.outlines.set(key, items);
    return items;
  }

  private outlineOf(ls: TS.LanguageService, file: string): OutlineItem[] {
    const tree = ls.getNavigationTree(toAbs(this.view.root, file));
    const out: OutlineItem[] = [];
    const walk = (items: readonly TS.NavigationTree[] | undefined, path: string[]) => {
      for (const it of items ?? []) {
        if (!it.nameSpan || it.text === '<function>' || it.text === '<class>') continue;
        const q = [...path, it.text];
        out.push({
          name: it.text,
          kind: symbolKindOf(it.kind),
          name16: { start16: it.nameSpan.start, end16: it.nameSpan.start + it.nameSpan.length },
          qualified_name: q.join('.'),
          container: path.length ? path.join('.') : null,
        });
        walk(it.childItems, q);
      }
    };
    walk(tree.childItems, []);
    return out;
  }

  async organizeImports(file: string, mode: 'all' | 'sort' | 'remove-unused'): Promise<RawEdit[]> {
    const ts = this.ts;
    const ls = this.project(file).ls;
    const text = this.view.texts.get(file)?.text ?? '';
    const nl = /\r\n|\n/.exec(text)?.[0] ?? '\n';
    const m = {
      all: ts.OrganizeImportsMode.All,
      sort: ts.OrganizeImportsMode.SortAndCombine,
      'remove-unused': ts.OrganizeImportsMode.RemoveUnused,
    }[mode];
    const changes = ls.organizeImports(
      { type: 'file', fileName: toAbs(this.view.root, file), mode: m },
      { ...ts.getDefaultFormatCodeSettings(nl) },
      {},
    );
    const out: RawEdit[] = [];
    for (const fc of changes) {
      for (const c of fc.textChanges) {
        out.push({
          file: toRel(this.view.root, fc.fileName),
          unit: 'utf16-offset',
          start: c.span.start,
          end: c.span.start + c.span.length,
          newText: c.newText,
        });
      }
    }
    return out;
  }

  /** A source file of the current program, without switching projects (scans never rebuild programs). */
  private scanSource(file: string): { sf: TS.SourceFile; checker: TS.TypeChecker | null } {
    const abs = toAbs(this.view.root, file);
    const inCurrent = this.current?.fileNames.has(abs) ? this.programFor(file) : undefined;
    const sf = inCurrent?.getSourceFile(abs);
    if (inCurrent && sf) return { sf, checker: inCurrent.getTypeChecker() };
    const text = this.view.texts.get(file)?.text ?? '';
    return { sf: this.ts.createSourceFile(abs, text, this.ts.ScriptTarget.Latest, true), checker: null };
  }

  /** `.name` property accesses in a file and whether each resolves (§6.6; see ../scans/ts-scan.ts). */
  memberAccesses(
    file: string,
    name: string,
    covered?: (start16: number) => boolean,
  ): { start16: number; end16: number; resolved: boolean }[] {
    const text = this.view.texts.get(file)?.text ?? '';
    return tsMemberAccesses(this.ts, text, name, () => this.scanSource(file), covered);
  }

  /** String literals whose whole content is `name` (SkippedStringLiteral). */
  stringLiterals(file: string, name: string): { start16: number; end16: number }[] {
    const text = this.view.texts.get(file)?.text ?? '';
    return tsStringLiterals(this.ts, text, name, () => this.scanSource(file).sf);
  }

  async sync(changed: Map<string, { text: string; version: string } | null>): Promise<void> {
    let setChanged = false;
    for (const [p, v] of changed) {
      if (v === null) {
        setChanged ||= this.view.texts.delete(p);
      } else {
        if (!this.view.texts.has(p)) setChanged = true;
        this.view.texts.set(p, v);
      }
    }
    this.program = null;
    this.outlines.clear();
    if (setChanged) {
      this.host.reset();
      this.current = null;
    }
  }

  async close(): Promise<void> {
    this.host.dispose();
    this.current = null;
    saveTsCodeCache();
  }
}

let DECLARATION_KINDS: Set<number> = new Set();

export const typescriptBackend: LanguageBackend = {
  lang: 'typescript',
  async probe() {
    try {
      const ts = await loadTs();
      const ok = /^5\./.test(ts.version) && typeof ts.createLanguageService === 'function';
      return { available: ok, version: ts.version, reason: ok ? null : `unsupported typescript ${ts.version}` };
    } catch (e) {
      return { available: false, version: null, reason: (e as Error).message };
    }
  },
  async open(view: WorkspaceView) {
    return new TypeScriptSession(await loadTs(), view);
  },
};
