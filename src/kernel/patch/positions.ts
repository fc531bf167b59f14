/**
 * Positions (docs/kernel.md §9.2): a file's raw bytes, its BOM length and its decoded text, with per-line
 * tables converting UTF-16 offsets (what backends speak) to UTF-8 byte offsets (what the Patch IR speaks)
 * and byte offsets to 1-based line/col (col in UTF-8 bytes, BOM excluded).
 */
import { KernelError } from '../errors.js';

export interface FileText {
  path: string;
  bytes: Uint8Array;
  /** 3 when the file starts with EF BB BF, else 0. */
  bom: number;
  /** bytes[bom:] decoded as UTF-8 (fatal). Backends only ever see this. */
  text: string;
}

const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export function hasBom(bytes: Uint8Array): boolean {
  return bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
}

/** Decode a file; null when it is not valid UTF-8. */
export function decodeFile(path: string, bytes: Uint8Array): FileText | null {
  const bom = hasBom(bytes) ? 3 : 0;
  try {
    return { path, bytes, bom, text: decoder.decode(bytes.subarray(bom)) };
  } catch {
    return null;
  }
}

export function utf8Length(s: string): number {
  return Buffer.byteLength(s, 'utf8');
}

/** Line tables over `text`: lines are `\n`-terminated (a `\r` belongs to its line). */
export class LineIndex {
  /** UTF-16 offset of each line start. */
  readonly starts16: number[] = [0];
  /** Absolute byte offset (BOM included) of each line start. */
  readonly startsByte: number[];
  /** Every character is one byte (most source files): offsets convert by adding the BOM length. */
  private readonly ascii: boolean;

  constructor(readonly file: FileText) {
    const t = file.text;
    this.ascii = file.bytes.length - file.bom === t.length;
    this.startsByte = [file.bom];
    let byte = file.bom;
    let last = 0;
    for (let i = t.indexOf('\n'); i !== -1; i = t.indexOf('\n', i + 1)) {
      byte += utf8Length(t.slice(last, i + 1));
      last = i + 1;
      this.starts16.push(last);
      this.startsByte.push(byte);
    }
  }

  /** Number of lines as the user counts them (a final empty line after `\n` does not count). */
  get lineCount(): number {
    const t = this.file.text;
    const n = this.starts16.length;
    return t.length === 0 ? 0 : t.endsWith('\n') ? n - 1 : n;
  }

  private lineOf16(o: number): number {
    const s = this.starts16;
    let lo = 0;
    let hi = s.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (s[mid]! <= o) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  private lineOfByte(b: number): number {
    const s = this.startsByte;
    let lo = 0;
    let hi = s.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (s[mid]! <= b) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** UTF-16 offset into `text` → absolute byte offset. Inside a surrogate pair is an InternalError. */
  toByte(o: number): number {
    const t = this.file.text;
    if (o < 0 || o > t.length) {
      throw new KernelError('InternalError', `offset ${o} out of range in ${this.file.path}`, {
        file: this.file.path,
        offset: o,
      });
    }
    if (this.ascii) return o + this.file.bom;
    if (o > 0 && o < t.length) {
      const prev = t.charCodeAt(o - 1);
      const cur = t.charCodeAt(o);
      if (prev >= 0xd800 && prev <= 0xdbff && cur >= 0xdc00 && cur <= 0xdfff) {
        throw new KernelError('InternalError', `offset ${o} splits a surrogate pair in ${this.file.path}`, {
          file: this.file.path,
          offset: o,
        });
      }
    }
    const line = this.lineOf16(o);
    return this.startsByte[line]! + utf8Length(t.slice(this.starts16[line]!, o));
  }

  /** Absolute byte offset → UTF-16 offset; null when the byte is inside a multi-byte character or the BOM. */
  toUtf16(b: number): number | null {
    if (b < this.file.bom || b > this.file.bytes.length) return null;
    if (this.ascii) return b - this.file.bom;
    const line = this.lineOfByte(b);
    const t = this.file.text;
    let byte = this.startsByte[line]!;
    let o = this.starts16[line]!;
    while (byte < b) {
      const cp = t.codePointAt(o)!;
      const w = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
      byte += w;
      o += cp >= 0x10000 ? 2 : 1;
    }
    return byte === b ? o : null;
  }

  /** 1-based line and byte col of an absolute byte offset. */
  lineCol(b: number): { line: number; col: number } {
    const line = this.lineOfByte(b);
    return { line: line + 1, col: b - this.startsByte[line]! + 1 };
  }

  /** Byte length of line `line` (1-based) without its `\n` or `\r\n` terminator. */
  lineContentBytes(line: number): number {
    const start = this.startsByte[line - 1]!;
    const next = line < this.startsByte.length ? this.startsByte[line]! : this.file.bytes.length;
    let end = next;
    const bytes = this.file.bytes;
    if (end > start && bytes[end - 1] === 0x0a) end--;
    if (end > start && bytes[end - 1] === 0x0d) end--;
    return end - start;
  }

  /**
   * A user position (1-based line, col in UTF-8 bytes) → absolute byte offset, or a reason it is invalid.
   * The column right after the last character (the terminator) is valid.
   */
  fromLineCol(line: number, col: number): { byte: number } | { error: 'line' | 'col' | 'mid_char' } {
    if (!Number.isInteger(line) || line < 1 || line > Math.max(this.lineCount, 1)) return { error: 'line' };
    if (this.lineCount === 0) return col === 1 ? { byte: this.file.bom } : { error: 'col' };
    if (!Number.isInteger(col) || col < 1 || col > this.lineContentBytes(line) + 1) return { error: 'col' };
    const b = this.startsByte[line - 1]! + col - 1;
    const byte = this.file.bytes[b];
    if (byte !== undefined && (byte & 0xc0) === 0x80) return { error: 'mid_char' };
    return { byte: b };
  }
}

/** LSP line/character → UTF-16 offset (lines split on \r\n, \n or \r; character clamps to the line end). */
export function lspToUtf16(text: string, line: number, character: number, encoding: 'utf-16' | 'utf-8'): number {
  let o = 0;
  for (let l = 0; l < line && o < text.length; l++) {
    const n = text.slice(o).search(/\r\n|\n|\r/);
    if (n === -1) return text.length;
    o += n + (text.startsWith('\r\n', o + n) ? 2 : 1);
  }
  const rest = text.slice(o);
  const m = rest.search(/\r\n|\n|\r/);
  const lineText = m === -1 ? rest : rest.slice(0, m);
  if (encoding === 'utf-16') return o + Math.min(character, lineText.length);
  let bytes = 0;
  let i = 0;
  while (i < lineText.length && bytes < character) {
    const cp = lineText.codePointAt(i)!;
    bytes += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    i += cp >= 0x10000 ? 2 : 1;
  }
  return o + i;
}
