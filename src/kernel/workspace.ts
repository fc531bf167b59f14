/**
 * One operation's view of the workspace: the snapshot, decoded file texts, line indexes, and path
 * normalization for user-supplied FILE arguments (docs/kernel.md §3.2).
 */
import { existsSync, statSync } from 'node:fs';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { KernelError } from './errors.js';
import { decodeFile, LineIndex, type FileText } from './patch/positions.js';
import { languageOf, type Language, type Snapshot } from './snapshot.js';

/**
 * Decoded texts and line indexes kept across the operations of one warm kernel, keyed by path and checked
 * against the content hash: files rarely change between two renames, and re-decoding and re-indexing a
 * few hundred files is most of a warm operation's own work.
 */
export class FileCache {
  readonly entries = new Map<string, { sha256: string; text: FileText; index: LineIndex | null }>();

  /** Forget files that are no longer in the snapshot. */
  prune(snap: Snapshot): void {
    for (const p of this.entries.keys()) if (!snap.files.has(p)) this.entries.delete(p);
  }
}

export class WorkspaceFiles {
  private readonly decoded = new Map<string, FileText>();
  private readonly indexes = new Map<string, LineIndex>();

  constructor(
    readonly root: string,
    readonly snap: Snapshot,
    private readonly cache: FileCache | null = null,
  ) {}

  private cached(path: string) {
    const e = this.cache?.entries.get(path);
    return e && e.sha256 === this.snap.files.get(path)?.sha256 ? e : null;
  }

  has(path: string): boolean {
    return this.snap.bytes.has(path);
  }

  /** Decoded text of a source-set file; UnsupportedOperation (encoding) when it is not UTF-8. */
  file(path: string): FileText {
    let f = this.decoded.get(path) ?? this.cached(path)?.text;
    if (f) {
      this.decoded.set(path, f);
      return f;
    }
    const bytes = this.snap.bytes.get(path);
    if (!bytes) throw new KernelError('FileNotFound', `file not found: ${path}`, { path });
    const d = decodeFile(path, bytes);
    if (!d) {
      throw new KernelError('UnsupportedOperation', `${path} is not valid UTF-8`, {
        operation: null,
        language: languageOf(path),
        reason: 'encoding',
        fallback: 'edit by hand, then run `tug verify syntax`',
      });
    }
    this.decoded.set(path, (f = d));
    const sha256 = this.snap.files.get(path)?.sha256;
    if (this.cache && sha256) this.cache.entries.set(path, { sha256, text: f, index: null });
    return f;
  }

  /** Decoded text or null for non-UTF-8 files (for building backend views). */
  tryFile(path: string): FileText | null {
    try {
      return this.file(path);
    } catch {
      return null;
    }
  }

  index(path: string): LineIndex {
    let i = this.indexes.get(path);
    if (i) return i;
    const file = this.file(path);
    const e = this.cached(path);
    i = e?.index && e.index.file === file ? e.index : new LineIndex(file);
    if (e) e.index = i;
    this.indexes.set(path, i);
    return i;
  }
}

/**
 * A FILE argument → workspace-relative path with `/` separators. Outside the workspace is InvalidArgument;
 * missing or not a regular file is FileNotFound; no backend for it is UnsupportedOperation naming `operation`.
 * Returns the language too.
 */
export function normalizeFileArg(
  root: string,
  arg: string,
  argument: string,
  operation: string | null = null,
): { path: string; language: Language } {
  const abs = isAbsolute(arg) ? resolve(arg) : resolve(root, arg);
  const rel = relative(root, abs);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) {
    throw new KernelError('InvalidArgument', `${arg} is outside the workspace`, {
      argument,
      value: arg,
      reason: 'outside_workspace',
    });
  }
  const path = rel.split(sep).join('/');
  if (!existsSync(abs) || !statSync(abs).isFile())
    throw new KernelError('FileNotFound', `file not found: ${path}`, { path });
  const language = languageOf(path);
  if (!language) {
    throw new KernelError('UnsupportedOperation', `no refactoring backend for ${path}`, {
      operation,
      language: null,
      reason: 'language',
      fallback: 'edit by hand, then run `tug verify syntax`',
    });
  }
  return { path, language };
}
