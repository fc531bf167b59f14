/**
 * The Rust backend: rust-analyzer over stdio (docs/kernel.md §6.4), used only when `--version` runs.
 * `rootUri` is the outermost Cargo root of the target; the kernel waits for `experimental/serverStatus`
 * with `quiescent: true` (300 s → `IndexingTimeout`; `health: "error"` → `BackendCrashed`). Rename follows
 * the Python sequence (didOpen, prepareRename with one retry, rename); WorkspaceEdits become raw edits in
 * the negotiated position encoding, resource operations are `UnsupportedOperation`, and rename errors map
 * per `mapRenameError`. Identifiers and kinds come from tree-sitter trees (scans/rust.ts).
 */
import { KernelError, type KernelLocation } from '../../errors.js';
import type { KernelWarning } from '../../envelope.js';
import { compareUtf8 } from '../../ids.js';
import { LspClient } from '../lsp/client.js';
import { LspDocuments } from '../lsp/documents.js';
import { assertNotLibrary, definitionSpans, prepareRenameOrRefuse, sameNamedDefinitions } from '../lsp/resolve.js';
import {
  fileUri,
  flattenWorkspaceEdit,
  positionOf,
  rangeTo16,
  toRawEdits,
  type PositionEncoding,
} from '../lsp/edits.js';
import {
  clientCapabilities,
  LspSymbolKind,
  Method,
  type DefinitionResult,
  type DocumentSymbol,
  type PrepareRenameResult,
  type WorkspaceEdit,
} from '../lsp/protocol.js';
import type {
  BackendOpenOptions,
  BackendSession,
  LanguageBackend,
  OutlineItem,
  RawEdit,
  ResolvedTarget,
  SymbolKind,
  WorkspaceView,
} from '../types.js';
import { cargoRoot, mapRenameError, probeRustAnalyzer, unavailableError, type RaProbe } from './discovery.js';
import { RsFile } from '../../scans/rust.js';
import { ViewSyntax } from '../../scans/tree-sitter.js';

export const INDEXING_TIMEOUT_S = 300;

/** User-facing line/col (col in UTF-8 bytes) of a UTF-16 offset in BOM-stripped text. */
function locate(file: string, text: string, o16: number): KernelLocation {
  const before = text.slice(0, o16);
  const nl = before.lastIndexOf('\n');
  const line = before.split('\n').length;
  return { file, line, col: Buffer.byteLength(before.slice(nl + 1), 'utf8') + 1 };
}

/** Test seam (NODE_ENV=test): TUG_RA_INDEX_TIMEOUT_S and TUG_LSP_TIMEOUT_S shorten the waits. */
function testSeconds(env: Record<string, string | undefined>, name: string): number | null {
  if (env.NODE_ENV !== 'test') return null;
  const v = Number(env[name]);
  return Number.isFinite(v) && v > 0 ? v : null;
}

export class RustAnalyzerSession implements BackendSession {
  private client: LspClient | null = null;
  private root: string | null = null;
  private ready: Promise<LspClient> | null = null;
  private enc: PositionEncoding = 'utf-16';
  private readonly docs: LspDocuments;
  private readonly syntax: ViewSyntax<RsFile>;

  constructor(
    readonly view: WorkspaceView,
    private readonly o: BackendOpenOptions,
    readonly ra: RaProbe,
  ) {
    this.docs = new LspDocuments(view, 'rust');
    this.syntax = new ViewSyntax('rust', view.texts, (syntax, text, version) => new RsFile(syntax, text, version));
  }

  get alive(): boolean {
    return !this.client || this.client.alive;
  }

  /** Start rust-analyzer for the Cargo root of `file` and wait until it is quiescent. */
  private start(file: string): Promise<LspClient> {
    const root = cargoRoot(this.view.root, file);
    if (this.ready && this.root === root) return this.ready;
    if (this.ready)
      throw new KernelError('UnsupportedOperation', 'one Kernel serves one Cargo root', {
        operation: 'rename-symbol',
        language: 'rust',
        reason: 'multiple_cargo_roots',
        fallback: 'run tug from the other Cargo root',
      });
    this.root = root;
    this.ready = (async () => {
      const lsTimeout = testSeconds(this.o.env ?? {}, 'TUG_LSP_TIMEOUT_S');
      const client = new LspClient({
        backend: 'rust-analyzer',
        argv: [this.ra.path!],
        cwd: root,
        env: (this.o.env ?? {}) as NodeJS.ProcessEnv,
        sessionDir: this.o.sessionDir ?? null,
        initializeTimeoutMs: lsTimeout ? lsTimeout * 1000 : undefined,
        requestTimeoutMs: lsTimeout ? lsTimeout * 1000 : undefined,
        onRequest: (method) => {
          if (
            method === Method.configuration ||
            method === Method.registerCapability ||
            method === Method.unregisterCapability ||
            method === Method.workDoneProgressCreate
          )
            return null;
          if (method === Method.applyEdit) return { applied: false };
          return undefined;
        },
      });
      this.client = client;
      let quiescent: () => void = () => undefined;
      let failed: (e: KernelError) => void = () => undefined;
      const status = new Promise<void>((res, rej) => {
        quiescent = res;
        failed = rej;
      });
      status.catch(() => undefined);
      client.on(Method.serverStatus, (p) => {
        const s = p as { health?: string; quiescent?: boolean; message?: string };
        if (s.health === 'error')
          failed(
            new KernelError('BackendCrashed', `rust-analyzer reports an error: ${s.message ?? 'unknown'}`, {
              backend: 'rust-analyzer',
              exit_code: null,
              signal: null,
              stderr_tail: s.message ?? '',
            }),
          );
        else if (s.quiescent) quiescent();
      });
      const uri = fileUri(root);
      const init = await client.request<{ capabilities?: { positionEncoding?: string } }>(Method.initialize, {
        processId: process.pid,
        clientInfo: { name: 'tug' },
        rootUri: uri,
        workspaceFolders: [{ uri, name: 'workspace' }],
        initializationOptions: { checkOnSave: false, cachePriming: { enable: false } },
        capabilities: clientCapabilities({ experimental: { serverStatusNotification: true } }),
      });
      this.enc = init?.capabilities?.positionEncoding === 'utf-8' ? 'utf-8' : 'utf-16';
      client.notify(Method.initialized, {});
      const waitS = testSeconds(this.o.env ?? {}, 'TUG_RA_INDEX_TIMEOUT_S') ?? INDEXING_TIMEOUT_S;
      await client.race(
        status,
        waitS * 1000,
        () =>
          new KernelError('IndexingTimeout', `rust-analyzer did not finish indexing within ${waitS} s`, {
            backend: 'rust-analyzer',
            timeout_seconds: waitS,
          }),
      );
      for (const f of [...(this.o.bomFiles ?? [])].sort(compareUtf8))
        if (this.view.texts.has(f)) this.docs.open(client, f);
      return client;
    })();
    return this.ready;
  }

  private async opened(file: string): Promise<LspClient> {
    const c = await this.start(file);
    this.docs.open(c, file);
    return c;
  }

  private text(file: string): string {
    return this.view.texts.get(file)?.text ?? '';
  }

  /** Load the Rust grammar (before any syntax question; `open` does this). */
  async loadSyntax(): Promise<void> {
    await this.syntax.load();
  }

  /** The syntax of a view file (one per content version; parsed only when asked). */
  rsFile(file: string): RsFile | null {
    return this.syntax.file(file);
  }

  private where(file: string, o16: number) {
    return { textDocument: { uri: this.docs.uri(file) }, position: positionOf(this.text(file), o16, this.enc) };
  }

  identifierAt(file: string, offset16: number): { start16: number; end16: number; text: string } | null {
    return this.rsFile(file)?.identifierAt(offset16) ?? null;
  }

  /** A request whose error responses are rename refusals (mapped per §6.4). */
  private async renameRequest<T>(method: string, params: unknown, file: string, o16: number): Promise<T> {
    const c = await this.opened(file);
    try {
      return await c.request<T>(method, params);
    } catch (e) {
      if (
        e instanceof KernelError &&
        e.code === 'BackendError' &&
        typeof e.details.message === 'string' &&
        e.details.lsp_code !== null
      ) {
        throw mapRenameError(
          e.details.message,
          this.identifierAt(file, o16)?.text ?? null,
          locate(file, this.text(file), o16),
        );
      }
      throw e;
    }
  }

  async resolveAt(file: string, offset16: number, _warnings: KernelWarning[]): Promise<ResolvedTarget> {
    const id = this.identifierAt(file, offset16);
    if (!id) throw new KernelError('SymbolNotFound', `no identifier in ${file}`, { reason: 'no_identifier' });
    const c = await this.opened(file);
    const defs = definitionSpans(
      this.view,
      await c.request<DefinitionResult>(Method.definition, this.where(file, id.start16)),
      this.enc,
    );
    assertNotLibrary(defs, id.text);
    const declarations = sameNamedDefinitions(this.view, defs.inView, id.text) ?? [
      { file, start16: id.start16, end16: id.end16 },
    ];
    const first = declarations[0]!;
    await prepareRenameOrRefuse(
      () =>
        this.renameRequest<PrepareRenameResult>(
          Method.prepareRename,
          this.where(first.file, first.start16),
          first.file,
          first.start16,
        ),
      id.text,
      'rust-analyzer',
    );
    const kind: SymbolKind = this.rsFile(first.file)?.declKind(first.start16) ?? 'variable';
    return { file: first.file, offset16: first.start16, name: id.text, kind, declarations };
  }

  async renameEdits(t: ResolvedTarget, newName: string): Promise<RawEdit[]> {
    const we = await this.renameRequest<WorkspaceEdit | null>(
      Method.rename,
      { ...this.where(t.file, t.offset16), newName },
      t.file,
      t.offset16,
    );
    if (!we)
      throw new KernelError('NotRenameable', `rust-analyzer refused to rename ${t.name}`, {
        name: t.name,
        reason: 'backend_refused',
        backend_message: 'rename returned null',
      });
    const raw = toRawEdits(
      flattenWorkspaceEdit(this.view.root, we, 'rust-analyzer', []),
      (f) => this.view.texts.get(f)?.text,
      this.enc,
    );
    for (const r of raw) {
      if (r.unit !== 'utf16-offset') continue;
      r.refKind = t.declarations.some((d) => d.file === r.file && d.start16 === r.start)
        ? 'definition'
        : (this.rsFile(r.file)?.refKind(r.start) ?? 'reference');
    }
    return raw;
  }

  async outline(file: string): Promise<OutlineItem[]> {
    const c = await this.opened(file);
    const res = await c.request<DocumentSymbol[] | null>(Method.documentSymbol, {
      textDocument: { uri: this.docs.uri(file) },
    });
    const out: OutlineItem[] = [];
    const text = this.text(file);
    const walk = (items: DocumentSymbol[], path: string[], parentKind: number | null) => {
      for (const it of items) {
        if (!it || !('selectionRange' in it)) continue;
        // `impl T` / `impl Tr for T` containers count as `T`.
        const impl = /^impl\b(?:<[^>]*>)?\s*(?:.*\sfor\s+)?([A-Za-z_][A-Za-z0-9_]*)/.exec(it.name);
        if (impl) {
          walk(it.children ?? [], [...path, impl[1]!], LspSymbolKind.Struct);
          continue;
        }
        if (parentKind === LspSymbolKind.Function || parentKind === LspSymbolKind.Method) continue;
        const s = rangeTo16(text, it.selectionRange, this.enc);
        const q = [...path, it.name];
        out.push({
          name: it.name,
          kind: this.rsFile(file)?.declKind(s.start16) ?? 'variable',
          name16: { start16: s.start16, end16: s.end16 },
          qualified_name: q.join('.'),
          container: path.length ? path.join('.') : null,
        });
        walk(it.children ?? [], q, it.kind);
      }
    };
    walk(res ?? [], [], null);
    return out;
  }

  async sync(changed: Map<string, { text: string; version: string } | null>): Promise<void> {
    this.docs.sync(this.client, changed);
    this.syntax.forget(changed.keys());
  }

  async close(): Promise<void> {
    const c = this.client;
    this.client = null;
    this.ready = null;
    this.root = null;
    if (c) await c.close();
  }
}

export const rustAnalyzerBackend: LanguageBackend = {
  lang: 'rust',
  async probe(env: Record<string, string | undefined> = {}) {
    const p = await probeRustAnalyzer(null, env);
    return { available: p.available, version: p.version, reason: p.probe_error };
  },
  async open(view: WorkspaceView, o: BackendOpenOptions = {}) {
    const p = await probeRustAnalyzer(o.rustAnalyzer ?? null, o.env ?? {});
    if (!p.available) throw unavailableError(p);
    const s = new RustAnalyzerSession(view, o, p);
    await s.loadSyntax();
    return s;
  },
};
