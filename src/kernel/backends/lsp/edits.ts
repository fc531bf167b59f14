/**
 * LSP results → the kernel's shapes: file URIs ↔ workspace-relative paths, `WorkspaceEdit` (both `changes`
 * and `documentChanges`) → raw edits, resource operations → `UnsupportedOperation` (05-kernel.md §6.3).
 * Edits in files the backend view holds become UTF-16 offsets; the rest keep their LSP positions and are
 * dropped by the pipeline with `SkippedFile` (outside the workspace, excluded, `target/`, `$CARGO_HOME`).
 */
import { isAbsolute, relative, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { KernelError } from '../../errors.js';
import { lspToUtf16 } from '../../patch/positions.js';
import type { RawEdit } from '../types.js';
import type { DefinitionResult, Location, Range, TextEdit, WorkspaceEdit } from './protocol.js';

export type PositionEncoding = 'utf-16' | 'utf-8';

export function fileUri(abs: string): string {
  return pathToFileURL(abs).href;
}

/** A file URI → `/`-separated path relative to root (`../…` when outside), or null for non-file URIs. */
export function uriToRel(root: string, uri: string): string | null {
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

/** LSP range → UTF-16 offsets in `text`. */
export function rangeTo16(text: string, r: Range, enc: PositionEncoding): { start16: number; end16: number } {
  return {
    start16: lspToUtf16(text, r.start.line, r.start.character, enc),
    end16: lspToUtf16(text, r.end.line, r.end.character, enc),
  };
}

/** UTF-16 offset in `text` → LSP position. */
export function positionOf(text: string, o16: number, enc: PositionEncoding): { line: number; character: number } {
  let line = 0;
  let start = 0;
  for (let i = 0; i < o16 && i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x0a || (c === 0x0d && text.charCodeAt(i + 1) !== 0x0a)) {
      line++;
      start = i + 1;
    }
  }
  const seg = text.slice(start, o16);
  return { line, character: enc === 'utf-16' ? seg.length : Buffer.byteLength(seg, 'utf8') };
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
