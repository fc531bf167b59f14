/**
 * The language backend interface (docs/kernel.md §6.1). TypeScript runs in-process; Python and Rust (issue 6)
 * plug in through the same shapes over LSP.
 */
import type { KernelWarning } from '../envelope.js';
import type { Language } from '../snapshot.js';

export type SymbolKind =
  | 'function'
  | 'method'
  | 'class'
  | 'interface'
  | 'type'
  | 'enum'
  | 'enum_member'
  | 'variable'
  | 'parameter'
  | 'property'
  | 'module'
  | 'import';

export type ReferenceKind = 'definition' | 'call' | 'reference' | 'import' | 'attribute';

/** What a backend sees of the workspace: BOM-stripped texts of the source set, keyed by relative path. */
export interface WorkspaceView {
  root: string;
  texts: Map<string, { text: string; version: string }>;
}

export interface Span16 {
  file: string;
  start16: number;
  end16: number;
}

export interface ResolvedTarget {
  file: string;
  offset16: number;
  name: string;
  kind: SymbolKind;
  /** All declarations of the symbol (sorted). */
  declarations: Span16[];
}

export interface OutlineItem {
  name: string;
  kind: SymbolKind;
  /** Declaration name span in the file. */
  name16: { start16: number; end16: number };
  qualified_name: string;
  container: string | null;
}

export type RawEdit =
  | {
      file: string;
      unit: 'utf16-offset';
      start: number;
      end: number;
      newText: string;
      refKind?: ReferenceKind;
      jsxTag?: boolean;
      heuristic?: boolean;
    }
  | {
      file: string;
      unit: 'lsp-utf16' | 'lsp-utf8';
      start: { line: number; character: number };
      end: { line: number; character: number };
      newText: string;
      refKind?: ReferenceKind;
      jsxTag?: boolean;
      heuristic?: boolean;
    };

export interface BackendProbe {
  available: boolean;
  version: string | null;
  reason: string | null;
}

/** What LSP backends need besides the view (docs/kernel.md §6.3–6.4, §12.3). */
export interface BackendOpenOptions {
  sessionDir?: string | null;
  /** The resolved Python interpreter (pyright's `pythonPath`), if any. */
  python?: string | null;
  /** The interpreter while it is still being probed; configuration requests wait for it. */
  pythonPending?: Promise<string | null>;
  /** `--rust-analyzer` / `TUG_RA_PATH` / config. */
  rustAnalyzer?: string | null;
  /** Files of the view whose bytes start with a BOM (sent to the server BOM-stripped). */
  bomFiles?: Set<string>;
  env?: Record<string, string | undefined>;
}

/** A warning found by a backend's post-rename pass, located by UTF-16 offset. */
export interface BackendWarning {
  code: string;
  message: string;
  file?: string;
  offset16?: number;
  pattern?: string;
  suggestion?: string;
}

export interface BackendSession {
  identifierAt(file: string, offset16: number): { start16: number; end16: number; text: string } | null;
  resolveAt(file: string, offset16: number, warnings: KernelWarning[]): Promise<ResolvedTarget>;
  outline(file: string): Promise<OutlineItem[]>;
  renameEdits(t: ResolvedTarget, newName: string): Promise<RawEdit[]>;
  /**
   * Language-specific closure and scans after `renameEdits` (§6.6; Python: override closure, dynamic
   * patterns, string literals, member accesses, aggressive heuristics). Returns the final edits.
   */
  afterRename?(
    t: ResolvedTarget,
    newName: string,
    edits: RawEdit[],
    o: { safety: 'strict' | 'aggressive' },
  ): Promise<{ edits: RawEdit[]; warnings: BackendWarning[] }>;
  organizeImports?(file: string, mode: 'all' | 'sort' | 'remove-unused'): Promise<RawEdit[]>;
  /** String literals equal to `name` in `file` (for SkippedStringLiteral), as UTF-16 spans. */
  stringLiterals?(file: string, name: string): { start16: number; end16: number }[];
  sync(changed: Map<string, { text: string; version: string } | null>): Promise<void>;
  close(): Promise<void>;
}

export interface LanguageBackend {
  lang: Language;
  /** `env`: the kernel's environment (the kernel never reads process.env). */
  probe(env?: Record<string, string | undefined>): Promise<BackendProbe>;
  open(ws: WorkspaceView, o?: BackendOpenOptions): Promise<BackendSession>;
}
