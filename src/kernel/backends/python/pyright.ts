/**
 * The Python backend: the pyright language server over stdio (docs/kernel.md §6.3). Launched through
 * `pyright/langserver.index.js` (never `dist/…`, which loses the bundled typeshed). Targets are found on
 * tree-sitter trees (scans/python.ts), followed to their definitions and renamed with `rename` (after
 * `didOpen`); a `null` rename runs `prepareRename` with its one retry after 500 ms, which refuses or lets the
 * rename be asked again (docs/kernel.md). `afterRename` adds the override closure and the scans of
 * §6.6 (see closure.ts).
 */
import { createRequire } from 'node:module';
import { KernelError } from '../../errors.js';
import type { KernelWarning } from '../../envelope.js';
import { compareUtf8 } from '../../ids.js';
import { LspClient } from '../lsp/client.js';
import { LspDocuments } from '../lsp/documents.js';
import { assertNotLibrary, definitionSpans, prepareRenameOrRefuse, sameNamedDefinitions } from '../lsp/resolve.js';
import { flattenWorkspaceEdit, positionOf, rangeTo16, toRawEdits, type PositionEncoding } from '../lsp/edits.js';
import {
  clientCapabilities,
  LspSymbolKind,
  Method,
  type DefinitionResult,
  type DocumentSymbol,
  type PrepareRenameResult,
  type SymbolInformation,
  type WorkspaceEdit,
} from '../lsp/protocol.js';
import type {
  BackendOpenOptions,
  BackendSession,
  BackendWarning,
  LanguageBackend,
  OutlineItem,
  RawEdit,
  ResolvedTarget,
  Span16,
  SymbolKind,
  WorkspaceView,
} from '../types.js';
import { PyFile, type NameSites } from '../../scans/python.js';
import { languageOf } from '../../snapshot.js';
import { ViewSyntax } from '../../scans/tree-sitter.js';
import { afterRenamePython } from './closure.js';
import { pyrightArgv, pyrightVersion } from './launch.js';

const require = createRequire(import.meta.url);

/** Absolute path of pyright's language-server entry. */
export function pyrightLangserver(): string {
  return require.resolve('pyright/langserver.index.js');
}

/** How to start the language server (launch.ts: through the V8 code cache once built). */
export function pyrightServerArgv(): string[] {
  return pyrightArgv(pyrightLangserver(), ['--stdio']);
}

export { pyrightVersion } from './launch.js';

/**
 * The shared LSP profile, plus pull diagnostics (`textDocument.diagnostic`), which tug never pulls. To a
 * client that pulls, pyright's analysis pass no longer type-checks the open files (it asks the client to
 * pull instead): no rename reads those diagnostics, and checking was ~0.3 s of CPU for a one-file
 * workspace, more for each file opened. The pass still enumerates the workspace's files first, which the
 * cross-file rename needs.
 */
function pyrightCapabilities(): Record<string, unknown> {
  const caps = clientCapabilities();
  return { ...caps, textDocument: { ...(caps.textDocument as object), diagnostic: { dynamicRegistration: true } } };
}

export class PyrightSession implements BackendSession {
  private client: LspClient | null = null;
  private ready: Promise<LspClient> | null = null;
  private enc: PositionEncoding = 'utf-16';
  private readonly docs: LspDocuments;
  private readonly syntax: ViewSyntax<PyFile>;
  private readonly outlines = new Map<string, { version: string; items: OutlineItem[] }>();

  constructor(
    readonly view: WorkspaceView,
    private readonly o: BackendOpenOptions,
  ) {
    this.docs = new LspDocuments(view, 'python');
    this.syntax = new ViewSyntax('python', view.texts, (syntax, text, version) => new PyFile(syntax, text, version));
  }

  get alive(): boolean {
    return !this.client || this.client.alive;
  }

  /** Start the server (once) and finish the handshake; BOM files are opened BOM-stripped. */
  start(): Promise<LspClient> {
    this.ready ??= (async () => {
      const root = this.view.root;
      const client = new LspClient({
        backend: 'pyright',
        argv: pyrightServerArgv(),
        cwd: root,
        env: (this.o.env ?? {}) as NodeJS.ProcessEnv,
        sessionDir: this.o.sessionDir ?? null,
        onRequest: (method, params) => this.serverRequest(method, params),
      });
      this.client = client;
      const folder = this.docs.uri('.').replace(/\/\.?$/, '');
      const init = await client.request<{ capabilities?: { positionEncoding?: string } }>(Method.initialize, {
        processId: process.pid,
        clientInfo: { name: 'tug' },
        rootUri: folder,
        workspaceFolders: [{ uri: folder, name: 'workspace' }],
        capabilities: pyrightCapabilities(),
      });
      this.enc = init?.capabilities?.positionEncoding === 'utf-8' ? 'utf-8' : 'utf-16';
      client.notify(Method.initialized, {});
      for (const f of [...(this.o.bomFiles ?? [])].sort(compareUtf8))
        if (this.view.texts.has(f)) this.docs.open(client, f);
      return client;
    })();
    return this.ready;
  }

  private serverRequest(method: string, params: unknown): unknown {
    switch (method) {
      case Method.configuration: {
        const items = (params as { items?: { section?: string }[] })?.items ?? [];
        const answer = (python: string | null) =>
          items.map((it) => {
            if (it.section === 'python') return python ? { pythonPath: python } : {};
            if (it.section === 'python.analysis')
              return { autoSearchPaths: true, useLibraryCodeForTypes: true, diagnosticMode: 'openFilesOnly' };
            return null;
          });
        return this.o.pythonPending
          ? this.o.pythonPending.then(answer, () => answer(null))
          : answer(this.o.python ?? null);
      }
      case Method.registerCapability:
      case Method.unregisterCapability:
      case Method.workDoneProgressCreate:
      case Method.diagnosticRefresh: // pyright's "pull again", sent instead of checking (pyrightCapabilities)
        return null;
      case Method.applyEdit:
        return { applied: false };
      default:
        return undefined;
    }
  }

  /** Load the Python grammar (before any syntax question; `open` does this). */
  async loadSyntax(): Promise<void> {
    await this.syntax.load();
  }

  /** The syntax of a view file (one per content version; parsed only when asked). */
  pyFile(file: string): PyFile | null {
    return this.syntax.file(file);
  }

  /** Confirm the name scans of many view files at once (one parse for all that allow it). */
  prefetchNameSites(
    files: string[],
    name: string,
    kinds: (keyof NameSites)[],
    covered: (file: string) => (start16: number) => boolean,
  ): void {
    const syntax = this.syntax.syntax;
    if (!syntax) return;
    const items = files.flatMap((f) => {
      const file = this.pyFile(f);
      return file ? [{ file, covered: covered(f) }] : [];
    });
    PyFile.prefetchNameSites(syntax, items, name, kinds);
  }

  text(file: string): string {
    return this.view.texts.get(file)?.text ?? '';
  }

  private async opened(file: string): Promise<LspClient> {
    const c = await this.start();
    this.docs.open(c, file);
    return c;
  }

  private where(file: string, o16: number) {
    return { textDocument: { uri: this.docs.uri(file) }, position: positionOf(this.text(file), o16, this.enc) };
  }

  identifierAt(file: string, offset16: number): { start16: number; end16: number; text: string } | null {
    return this.pyFile(file)?.identifierAt(offset16) ?? null;
  }

  /** textDocument/definition → spans in the view (in-view) and whether any lay outside it. */
  async definitions(file: string, o16: number): Promise<{ inView: Span16[]; outside: number }> {
    const c = await this.opened(file);
    return definitionSpans(
      this.view,
      await c.request<DefinitionResult>(Method.definition, this.where(file, o16)),
      this.enc,
    );
  }

  async resolveAt(file: string, offset16: number, _warnings: KernelWarning[]): Promise<ResolvedTarget> {
    const id = this.identifierAt(file, offset16);
    if (!id) throw new KernelError('SymbolNotFound', `no identifier in ${file}`, { reason: 'no_identifier' });
    // A def or class that is the only binding of its name is its own definition: pyright is not asked.
    const defs = this.pyFile(file)?.soleDeclaration(id.start16)
      ? { inView: [{ file, start16: id.start16, end16: id.end16 }], outside: 0 }
      : await this.definitions(file, id.start16);
    assertNotLibrary(defs, id.text);
    // An explicit alias (`from m import f as g`) selected at a use: pyright's definition is the aliased
    // name, so the alias is the declaration, and the symbol is the same whichever reference was selected.
    const alias = () => this.pyFile(file)?.aliasDeclaration(id.text);
    const declarations = sameNamedDefinitions(this.view, defs.inView, id.text) ?? [
      { file, ...(alias() ?? { start16: id.start16, end16: id.end16 }) },
    ];
    const first = declarations[0]!;
    // prepareRename (§6.3 step 2) is asked by renameAt, only when rename itself answers null.
    const kind: SymbolKind = this.pyFile(first.file)?.declKind(first.start16) ?? 'variable';
    return { file: first.file, offset16: first.start16, name: id.text, kind, declarations };
  }

  /** One pyright rename at a position, as raw edits with reference kinds. */
  async renameAt(
    file: string,
    o16: number,
    newName: string,
    decls: Span16[],
    whileWaiting?: () => void,
  ): Promise<RawEdit[]> {
    const c = await this.opened(file);
    const pending = c.request<WorkspaceEdit | null>(Method.rename, { ...this.where(file, o16), newName });
    if (whileWaiting) {
      await new Promise((r) => setImmediate(r)); // the request is on its way to pyright
      whileWaiting();
    }
    let we = await pending;
    if (!we) {
      // pyright's rename starts with the very check prepareRename makes (RenameProvider.canRenameSymbol), so
      // the happy path skips prepareRename; a null answer runs §6.3 step 2 as written (a cold server can
      // answer null once: retry after 500 ms, then refuse) and renames again.
      await prepareRenameOrRefuse(
        () => c.request<PrepareRenameResult>(Method.prepareRename, this.where(file, o16)),
        this.identifierAt(file, o16)?.text ?? '',
        'pyright',
      );
      we = await c.request<WorkspaceEdit | null>(Method.rename, { ...this.where(file, o16), newName });
    }
    if (!we)
      throw new KernelError('NotRenameable', `pyright refused to rename at ${file}`, {
        name: this.identifierAt(file, o16)?.text ?? null,
        reason: 'backend_refused',
        backend_message: 'rename returned null',
      });
    const raw = toRawEdits(
      flattenWorkspaceEdit(this.view.root, we, 'pyright', []),
      (f) => this.view.texts.get(f)?.text,
      this.enc,
    );
    for (const r of raw) {
      if (r.unit !== 'utf16-offset') continue;
      r.refKind = decls.some((d) => d.file === r.file && d.start16 === r.start)
        ? 'definition'
        : (this.pyFile(r.file)?.refKind(r.start, r.end) ?? 'reference');
    }
    return raw;
  }

  async renameEdits(t: ResolvedTarget, newName: string): Promise<RawEdit[]> {
    // pyright's rename takes 10–200 ms on another core: prepare the text side of the scans meanwhile.
    return this.renameAt(t.file, t.offset16, newName, t.declarations, () => {
      for (const f of this.view.texts.keys())
        if (languageOf(f) === 'python' && this.text(f).includes(t.name))
          this.pyFile(f)?.warmFor(t.name, { method: t.kind === 'method' });
    });
  }

  async afterRename(
    t: ResolvedTarget,
    newName: string,
    edits: RawEdit[],
    o: { safety: 'strict' | 'aggressive' },
  ): Promise<{ edits: RawEdit[]; warnings: BackendWarning[] }> {
    return afterRenamePython(this, t, newName, edits, o.safety);
  }

  /** The documentSymbol outline, cached per content version (a prepare asks for it twice). */
  async outline(file: string): Promise<OutlineItem[]> {
    const version = this.view.texts.get(file)?.version ?? '';
    const hit = this.outlines.get(file);
    if (hit && hit.version === version) return hit.items;
    const items = await this.fetchOutline(file);
    this.outlines.set(file, { version, items });
    return items;
  }

  private async fetchOutline(file: string): Promise<OutlineItem[]> {
    const c = await this.opened(file);
    const res = await c.request<(DocumentSymbol | SymbolInformation)[] | null>(Method.documentSymbol, {
      textDocument: { uri: this.docs.uri(file) },
    });
    const out: OutlineItem[] = [];
    const text = this.text(file);
    const walk = (items: DocumentSymbol[], path: string[], parentKind: number | null) => {
      for (const it of items) {
        if (!('selectionRange' in it)) continue;
        const inFunction = parentKind === LspSymbolKind.Function || parentKind === LspSymbolKind.Method;
        const isScope =
          it.kind === LspSymbolKind.Class || it.kind === LspSymbolKind.Function || it.kind === LspSymbolKind.Method;
        if (inFunction && !isScope) continue; // locals and parameters need --at
        const s = rangeTo16(text, it.selectionRange, this.enc);
        const q = [...path, it.name];
        out.push({
          name: it.name,
          kind: outlineKind(it.kind, parentKind),
          name16: { start16: s.start16, end16: s.end16 },
          qualified_name: q.join('.'),
          container: path.length ? path.join('.') : null,
        });
        walk(it.children ?? [], q, it.kind);
      }
    };
    walk(
      (res ?? []).filter((x): x is DocumentSymbol => 'selectionRange' in x),
      [],
      null,
    );
    return out;
  }

  /**
   * `.name` accesses outside `covered` for the kernel's UnresolvedMemberReference scan; syntax alone
   * cannot resolve them.
   */
  memberAccesses(
    file: string,
    name: string,
    covered?: (start16: number) => boolean,
  ): { start16: number; end16: number; resolved: boolean }[] {
    return (this.pyFile(file)?.memberAccesses(name, covered) ?? []).map((sp) => ({ ...sp, resolved: false }));
  }

  async sync(changed: Map<string, { text: string; version: string } | null>): Promise<void> {
    this.docs.sync(this.client, changed);
    this.syntax.forget(changed.keys());
  }

  async close(): Promise<void> {
    const c = this.client;
    this.client = null;
    this.ready = null;
    if (c) await c.close();
  }
}

function outlineKind(k: number, parent: number | null): SymbolKind {
  const inClass = parent === LspSymbolKind.Class;
  switch (k) {
    case LspSymbolKind.Class:
      return 'class';
    case LspSymbolKind.Method:
      return 'method';
    case LspSymbolKind.Function:
      return inClass ? 'method' : 'function';
    case LspSymbolKind.Property:
    case LspSymbolKind.Field:
      return 'property';
    case LspSymbolKind.Module:
      return 'module';
    default:
      return inClass ? 'property' : 'variable';
  }
}

export const pyrightBackend: LanguageBackend = {
  lang: 'python',
  async probe() {
    try {
      pyrightLangserver();
      return { available: true, version: pyrightVersion(), reason: null };
    } catch (e) {
      return { available: false, version: null, reason: (e as Error).message };
    }
  },
  async open(view: WorkspaceView, o: BackendOpenOptions = {}) {
    const s = new PyrightSession(view, o);
    // Start the server now: its start-up overlaps with loading the grammar and the kernel's own work.
    s.start().catch(() => undefined);
    try {
      await s.loadSyntax();
    } catch (e) {
      await s.close().catch(() => undefined);
      throw e;
    }
    return s;
  },
};
