/**
 * Unified diff built straight from the edits (docs/kernel.md §9.5): 3 lines of context, regions at most 6
 * lines apart share a hunk, CRLF kept byte for byte, `\ No newline at end of file` where needed.
 */
import type { PatchEdit } from './ir.js';

const CONTEXT = 3;
const dec = new TextDecoder('utf-8', { ignoreBOM: true });

/** Byte ranges of the lines of `bytes`, each ending after its `\n` (the last may lack one). */
function lineStarts(bytes: Uint8Array): number[] {
  const starts: number[] = [];
  if (bytes.length === 0) return starts;
  starts.push(0);
  // Buffer#indexOf is a native memchr: far faster than a byte loop on whole files.
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let i = buf.indexOf(0x0a); i !== -1 && i < bytes.length - 1; i = buf.indexOf(0x0a, i + 1)) starts.push(i + 1);
  return starts;
}

function splitLines(bytes: Uint8Array): Uint8Array[] {
  const s = lineStarts(bytes);
  return s.map((st, i) => bytes.subarray(st, i + 1 < s.length ? s[i + 1] : bytes.length));
}

function lineOf(starts: number[], off: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  if (hi < 0) return 0;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= off) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

interface Region {
  a: number; // first old line (0-based)
  b: number; // end old line (exclusive)
  edits: PatchEdit[];
}

/** The diff section for one file; `edits` are this file's sorted, non-overlapping edits. */
export function fileDiff(path: string, before: Uint8Array, edits: PatchEdit[]): string {
  const starts = lineStarts(before);
  const n = starts.length;
  const endsWithNl = before.length > 0 && before[before.length - 1] === 0x0a;
  const regions: Region[] = [];
  for (const e of edits) {
    let a: number;
    let b: number;
    if (e.start === before.length && (endsWithNl || n === 0)) {
      a = n;
      b = n;
    } else {
      a = lineOf(starts, e.start);
      b = e.end > e.start ? lineOf(starts, e.end - 1) + 1 : a + 1;
      // An edit ending at a line boundary whose text drops the newline joins the next line, unless it
      // removes whole lines (starts at a line start, inserts nothing): the next line is then untouched.
      const wholeLines = e.new_bytes.length === 0 && e.start === starts[a];
      if (
        e.end > e.start &&
        b < n &&
        e.end === starts[b] &&
        !wholeLines &&
        e.new_bytes[e.new_bytes.length - 1] !== 0x0a
      )
        b++;
    }
    const last = regions[regions.length - 1];
    if (last && a <= last.b) {
      last.b = Math.max(last.b, b);
      last.edits.push(e);
    } else regions.push({ a, b, edits: [e] });
  }
  // Old lines are sliced on demand: a hunk needs a few lines, not the whole file.
  const oldLines = { at: (k: number) => before.subarray(starts[k]!, k + 1 < n ? starts[k + 1]! : before.length) };
  const byteAt = (line: number) => (line < n ? starts[line]! : before.length);
  // New lines of each region.
  const regionNew = regions.map((r) => {
    const from = byteAt(r.a);
    const to = byteAt(r.b);
    const parts: Uint8Array[] = [];
    let pos = from;
    for (const e of r.edits) {
      parts.push(before.subarray(pos, e.start), e.new_bytes);
      pos = e.end;
    }
    parts.push(before.subarray(pos, to));
    return splitLines(Buffer.concat(parts));
  });
  const isLastOld = (i: number) => i === n - 1 && !endsWithNl;
  let out = '';
  let delta = 0;
  let i = 0;
  while (i < regions.length) {
    let j = i;
    while (j + 1 < regions.length && regions[j + 1]!.a - regions[j]!.b <= 2 * CONTEXT) j++;
    const first = regions[i]!;
    const lastR = regions[j]!;
    const ctxStart = Math.max(0, first.a - CONTEXT);
    const ctxEnd = Math.min(n, lastR.b + CONTEXT);
    const body: string[] = [];
    let oldCount = 0;
    let newCount = 0;
    const ctx = (from: number, to: number) => {
      for (let k = from; k < to; k++) {
        body.push(' ' + dec.decode(oldLines.at(k)) + (isLastOld(k) ? '\n\\ No newline at end of file\n' : ''));
        oldCount++;
        newCount++;
      }
    };
    ctx(ctxStart, first.a);
    let hunkDelta = 0;
    for (let k = i; k <= j; k++) {
      const r = regions[k]!;
      if (k > i) ctx(regions[k - 1]!.b, r.a);
      for (let m = r.a; m < r.b; m++) {
        body.push('-' + dec.decode(oldLines.at(m)) + (isLastOld(m) ? '\n\\ No newline at end of file\n' : ''));
        oldCount++;
      }
      const nl = regionNew[k]!;
      const regionIsEof = r.b === n;
      nl.forEach((line, idx) => {
        const noNl = regionIsEof && idx === nl.length - 1 && line[line.length - 1] !== 0x0a;
        body.push('+' + dec.decode(line) + (noNl ? '\n\\ No newline at end of file\n' : ''));
        newCount++;
      });
      hunkDelta += nl.length - (r.b - r.a);
    }
    ctx(lastR.b, ctxEnd);
    const oldStart = oldCount === 0 ? ctxStart : ctxStart + 1;
    const newStart = newCount === 0 ? ctxStart + delta : ctxStart + delta + 1;
    out += `@@ -${range(oldStart, oldCount)} +${range(newStart, newCount)} @@\n` + body.join('');
    delta += hunkDelta;
    i = j + 1;
  }
  return `diff --git a/${path} b/${path}\n--- a/${path}\n+++ b/${path}\n` + out;
}

function range(start: number, count: number): string {
  return count === 1 ? String(start) : `${start},${count}`;
}

/** The whole patch: one section per changed file, in the given (path) order. */
export function unifiedDiff(files: { path: string; before: Uint8Array; edits: PatchEdit[] }[]): string {
  return files
    .filter((f) => f.edits.length > 0)
    .map((f) => fileDiff(f.path, f.before, f.edits))
    .join('');
}
