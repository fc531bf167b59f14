/**
 * LSP results → the kernel's shapes: file URIs ↔ workspace-relative paths, `WorkspaceEdit` (both `changes`
 * and `documentChanges`) → raw edits, resource operations → `UnsupportedOperation` (docs/kernel.md §6.3).
 * Edits in files the backend view holds become UTF-16 offsets; the rest keep their LSP positions and are
 * dropped by the pipeline with `SkippedFile` (outside the workspace, excluded, `target/`, `$CARGO_HOME`).
 */
import { isAbsolute, relative, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { KernelError } from '../../errors.js';
import type { RawEdit } from '../types.js';
import type { DefinitionResult, Location, Range, TextEdit, WorkspaceEdit } from './protocol.js';

export type PositionEncoding = 'utf-16' | 'utf-8';

export function fileUri(abs: string): string {
  return pathToFileURL(abs).href;
}

const relCache = new Map<string, string | null>();

/**
 * A file URI → `/`-separated path relative to root (`../…` when outside), or null for non-file URIs.
 * Cached per (root, uri): a rename answers with the same few hundred URIs again and again.
 */
export function uriToRel(root: string, uri: string): string | null {
  const key = root + '\0' + uri;
  let rel = relCache.get(key);
  if (rel === undefined) {
    if (relCache.size >= 8192) relCache.clear();
    relCache.set(key, (rel = uriToRelUncached(root, uri)));
  }
  return rel;
}

function uriToRelUncached(root: string, uri: string): string | null {
  if (!uri.startsWith('file:')) return null;
  let abs: string;
  try {
    abs = fileURLToPath(uri);
  } catch {
    return null;
  }
  const rel = relative(root, abs);
  if (isAbsolute(rel)) return null;
  return rel.split(sep).join('/');
}

export interface LspTextEdit {
  file: string;
  range: Range;
  newText: string;
}

/** Flatten a WorkspaceEdit. Resource operations are refused (Patch IR v1 has text edits only). */
export function flattenWorkspaceEdit(
  root: string,
  we: WorkspaceEdit | null,
  backend: string,
  outside: string[],
): LspTextEdit[] {
  const out: LspTextEdit[] = [];
  if (!we) return out;
  const add = (uri: string, edits: TextEdit[]) => {
    const file = uriToRel(root, uri);
    if (file === null) {
      outside.push(uri);
      return;
    }
    for (const e of edits) out.push({ file, range: e.range, newText: e.newText });
  };
  if (we.documentChanges) {
    for (const dc of we.documentChanges) {
      if ('kind' in dc && typeof dc.kind === 'string') {
        throw new KernelError(
          'UnsupportedOperation',
          `${backend} wants to ${dc.kind} a file; file operations are not supported`,
          {
            operation: 'rename-symbol',
            language: null,
            reason: 'file_operation',
            fallback: 'rename the file by hand with `git mv`, then run `tug verify syntax`',
          },
        );
      }
      if ('textDocument' in dc) add(dc.textDocument.uri, dc.edits);
    }
  } else if (we.changes) {
    for (const uri of Object.keys(we.changes).sort()) add(uri, we.changes[uri]!);
  }
  return out;
}

/** LSP line starts of a text (lines end at \r\n, \n or \r), for O(line) position conversion. */
export class LspLines {
  readonly starts: number[] = [0];
  /** Content end (terminator excluded) of each line. */
  readonly ends: number[] = [];

  constructor(readonly text: string) {
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === 0x0a || c === 0x0d) {
        this.ends.push(i);
        if (c === 0x0d && text.charCodeAt(i + 1) === 0x0a) i++;
        this.starts.push(i + 1);
      }
    }
    this.ends.push(text.length);
  }

  /** LSP position → UTF-16 offset; `character` clamps to the line end, a line past the end to the text end. */
  toOffset(line: number, character: number, enc: PositionEncoding): number {
    if (line >= this.starts.length) return this.text.length;
    const s = this.starts[line]!;
    const e = this.ends[line]!;
    if (enc === 'utf-16') return Math.min(s + character, e);
    let bytes = 0;
    let i = s;
    while (i < e && bytes < character) {
      const cp = this.text.codePointAt(i)!;
      bytes += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
      i += cp >= 0x10000 ? 2 : 1;
    }
    return i;
  }

  /** UTF-16 offset → LSP position. */
  toPosition(o16: number, enc: PositionEncoding): { line: number; character: number } {
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.starts[mid]! <= o16) lo = mid;
      else hi = mid - 1;
    }
    const seg = this.text.slice(this.starts[lo]!, o16);
    return { line: lo, character: enc === 'utf-16' ? seg.length : Buffer.byteLength(seg, 'utf8') };
  }
}

const linesCache = new Map<string, LspLines>();

/** Line tables of a text, cached by content (a few hundred entries). */
export function linesOf(text: string): LspLines {
  let l = linesCache.get(text);
  if (!l) {
    if (linesCache.size >= 1024) linesCache.clear();
    linesCache.set(text, (l = new LspLines(text)));
  }
  return l;
}

/** LSP range → UTF-16 offsets in `text`. */
export function rangeTo16(text: string, r: Range, enc: PositionEncoding): { start16: number; end16: number } {
  const l = linesOf(text);
  return {
    start16: l.toOffset(r.start.line, r.start.character, enc),
    end16: l.toOffset(r.end.line, r.end.character, enc),
  };
}

/** UTF-16 offset in `text` → LSP position. */
export function positionOf(text: string, o16: number, enc: PositionEncoding): { line: number; character: number } {
  return linesOf(text).toPosition(o16, enc);
}

/** Edits → RawEdits: offsets for files in the view, LSP positions (dropped later as SkippedFile) otherwise. */
export function toRawEdits(
  edits: LspTextEdit[],
  textOf: (file: string) => string | undefined,
  enc: PositionEncoding,
): RawEdit[] {
  return edits.map((e) => {
    const text = textOf(e.file);
    if (text === undefined)
      return {
        file: e.file,
        unit: enc === 'utf-8' ? 'lsp-utf8' : 'lsp-utf16',
        start: e.range.start,
        end: e.range.end,
        newText: e.newText,
      };
    const s = rangeTo16(text, e.range, enc);
    return { file: e.file, unit: 'utf16-offset', start: s.start16, end: s.end16, newText: e.newText };
  });
}

/** Normalize a definition answer to locations. */
export function definitionLocations(d: DefinitionResult): Location[] {
  if (!d) return [];
  const arr = Array.isArray(d) ? d : [d];
  return arr.map((x) => ('targetUri' in x ? { uri: x.targetUri, range: x.targetSelectionRange } : x));
}
