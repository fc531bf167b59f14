/**
 * Diagnostic positions in the units of docs/kernel.md §4.1: `line` counts `\n`-terminated lines and `col`
 * counts UTF-8 bytes after the BOM. tsc reports 1-based (line, character) with TypeScript's own line
 * breaks (`\r\n`, `\n`, `\r`, U+2028, U+2029) and characters in UTF-16 units; this converts them through
 * the file's text, read from the sandbox the checker ran in.
 */
import { readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { decodeFile, LineIndex } from '../patch/positions.js';
import type { Diagnostic } from '../types.js';

/** UTF-16 offsets of line starts under TypeScript's line-break rules. */
function tsLineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 13) {
      if (text.charCodeAt(i + 1) === 10) i++;
      starts.push(i + 1);
    } else if (c === 10 || c === 0x2028 || c === 0x2029) starts.push(i + 1);
  }
  return starts;
}

/** Convert tsc-style (line, UTF-16 character) positions to spec (line, UTF-8 byte col), in place order. */
export function toByteColumns(root: string, diags: Diagnostic[]): Diagnostic[] {
  const files = new Map<string, { idx: LineIndex; starts: number[]; length: number } | null>();
  const load = (file: string) => {
    if (files.has(file)) return files.get(file)!;
    let v: { idx: LineIndex; starts: number[]; length: number } | null = null;
    try {
      const ft = decodeFile(file, readFileSync(isAbsolute(file) ? file : join(root, file)));
      if (ft) v = { idx: new LineIndex(ft), starts: tsLineStarts(ft.text), length: ft.text.length };
    } catch {
      v = null;
    }
    files.set(file, v);
    return v;
  };
  return diags.map((d) => {
    if (d.col === null) return d;
    const f = load(d.file);
    const lineStart = f?.starts[d.line - 1];
    if (!f || lineStart === undefined) return d;
    let o = Math.min(lineStart + d.col - 1, f.length);
    // Never inside a surrogate pair: tsc counts UTF-16 units, so a pair is two columns.
    if (o > 0 && o < f.length && /[\uDC00-\uDFFF]/.test(String.fromCharCode(f.idx.file.text.charCodeAt(o)))) o--;
    const lc = f.idx.lineCol(f.idx.toByte(o));
    return { ...d, line: lc.line, col: lc.col };
  });
}
