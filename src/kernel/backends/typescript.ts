/**
 * The in-process TypeScript/JavaScript backend (docs/kernel.md §6.2, §6.5): rename via the LanguageService
 * with prefix/suffix text and the re-export closure, outlines from the navigation tree, organize-imports.
 * Target resolution lives in ./ts-target.ts, rename edits in ./ts-rename.ts; this file holds the loader
 * and the session (projects, programs, outlines, scans, sync, close).
 */
import type * as TS from 'typescript';
import { createRequire } from 'node:module';
import type { KernelWarning } from '../envelope.js';
import { loadWithCodeCache } from '../code-cache.cjs';
import { isConfigPath } from '../snapshot.js';
import { symbolKindOf } from './ts-nodes.js';
import { tsMemberAccesses, tsStringLiterals } from '../scans/ts-scan.js';
import { ProjectHost, configFiles, toAbs, toRel, type TsModule, type TsProject } from './ts-project.js';
import { definitionLinkedEdits, renameInOneSearch, renameWithClosure } from './ts-rename.js';
import { identifierAt, resolveTarget, type TsSessionParts } from './ts-target.js';
import type {
  BackendOpenOptions,
  BackendSession,
  LanguageBackend,
  OutlineItem,
  RawEdit,
  ResolvedTarget,
  WorkspaceView,
} from './types.js';

let tsPromise: Promise<TsModule> | null = null;
let tsLoaded: { saveCache(): void } | null = null;

/** Load the bundled typescript lazily (never at CLI start), through the V8 code cache of ../code-cache.cts. */
export function loadTs(): Promise<TsModule> {
  tsPromise ??= Promise.resolve().then(() => {
    const l = loadWithCodeCache<TsModule>(createRequire(import.meta.url).resolve('typescript'), {
      prefix: 'typescript',
    });
    tsLoaded = l;
    return l.module;
  });
  return tsPromise;
}

/** Persist the code cache once TypeScript has done a whole operation's work (first run only). */
export function saveTsCodeCache(): void {
  tsLoaded?.saveCache();
}

export class TypeScriptSession implements BackendSession, TsSessionParts {
  private host: ProjectHost;
  private current: TsProject | null = null;

  constructor(
    readonly ts: TsModule,
    readonly view: WorkspaceView,
  ) {
    this.host = new ProjectHost(ts, view);
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
  programFor(fileRel: string): TS.Program | undefined {
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

  identifierAt(file: string, offset16: number): { start16: number; end16: number; text: string } | null {
    return identifierAt(this, file, offset16);
  }

  async resolveAt(file: string, offset16: number, _warnings: KernelWarning[]): Promise<ResolvedTarget> {
    return resolveTarget(this, file, offset16);
  }

  /** `TUG_TS_RENAME=closure` (the kernel's env) forces the prefix/suffix search with the re-export closure. */
  fastRename = true;

  async renameEdits(t: ResolvedTarget, newName: string): Promise<RawEdit[]> {
    const edits =
      (this.fastRename ? this.renameInOneSearch(t, newName) : null) ?? (await this.renameWithClosure(t, newName));
    return [...edits, ...this.requireLinkedEdits(t, newName, edits), ...(await this.uncoveredEdits(t, newName))];
  }

  /**
   * `const { old } = require('./mod')` in a JavaScript file of the target's own project: TypeScript's search
   * from the export misses it inside a program just as outside one (§6.2), and the file would call a name
   * that no longer exists. Only JavaScript files holding both `require` and the old name are asked.
   */
  private requireLinkedEdits(t: ResolvedTarget, newName: string, have: RawEdit[]): RawEdit[] {
    const project = this.project(t.file);
    const files = [...this.view.texts.keys()].filter((f) => {
      if (!/\.[cm]?jsx?$/.test(f) || !project.fileNames.has(toAbs(this.view.root, f))) return false;
      const text = this.view.texts.get(f)?.text ?? '';
      return text.includes('require') && text.includes(t.name);
    });
    return files.length === 0 ? [] : definitionLinkedEdits(this, t, newName, files, have);
  }

  /**
   * Edits in the workspace files no tsconfig includes (§6.2): they import the project's modules but are in no
   * program, so the project's search cannot see them. Those holding the old name are searched in one more
   * program with the inferred options, and only their own locations are kept (the project's come from above).
   */
  private async uncoveredEdits(t: ResolvedTarget, newName: string): Promise<RawEdit[]> {
    if (this.project(t.file).configPath === null) return [];
    const files = [...this.host.uncovered()].filter(
      (f) => f !== t.file && this.view.texts.get(f)?.text.includes(t.name),
    );
    if (files.length === 0) return [];
    const project = this.host.uncoveredProject([t.file, ...files].sort());
    let program: TS.Program | undefined;
    const parts: TsSessionParts = {
      ts: this.ts,
      view: this.view,
      project: () => project,
      programFor: () => (program ??= project.ls.getProgram()),
      sourceFile: (f) =>
        parts.programFor(f)?.getSourceFile(toAbs(this.view.root, f)) ??
        this.ts.createSourceFile(
          toAbs(this.view.root, f),
          this.view.texts.get(f)?.text ?? '',
          this.ts.ScriptTarget.Latest,
          true,
        ),
    };
    const edits =
      (this.fastRename ? renameInOneSearch(parts, t, newName) : null) ?? (await renameWithClosure(parts, t, newName));
    const only = new Set(files);
    const own = edits.filter((e) => only.has(e.file));
    return [...own, ...definitionLinkedEdits(parts, t, newName, files, own)];
  }

  /** One search without prefix/suffix text, or null where it could differ (./ts-rename.ts). */
  private renameInOneSearch(t: ResolvedTarget, newName: string): RawEdit[] | null {
    return renameInOneSearch(this, t, newName);
  }

  /** The §6.2 algorithm: prefix/suffix search, then the re-export closure (./ts-rename.ts). */
  private renameWithClosure(t: ResolvedTarget, newName: string): Promise<RawEdit[]> {
    return renameWithClosure(this, t, newName);
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
        // A config's new content (a tsconfig's include or paths) changes the projects as a new file does.
        if (!this.view.texts.has(p) || isConfigPath(p)) setChanged = true;
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
  async open(view: WorkspaceView, o: BackendOpenOptions = {}) {
    const s = new TypeScriptSession(await loadTs(), view);
    s.fastRename = o.env?.TUG_TS_RENAME !== 'closure';
    return s;
  },
};
