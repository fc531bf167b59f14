/**
 * Patch IR types and construction (docs/kernel.md §9.1, §9.3): exact-span anchors with SHA-256, sorted
 * deterministic edits, duplicate merging and overlap detection.
 */
import { KernelError } from '../errors.js';
import { compareUtf8, sha256Hex } from '../ids.js';
import { LineIndex, type FileText } from './positions.js';

export interface PatchEdit {
  seq: number;
  path: string;
  kind: 'insert' | 'delete' | 'replace';
  start: number;
  end: number;
  /** SHA-256 of bytes [start,end) at snapshot time ("" for inserts). */
  anchor_sha256: string;
  new_bytes: Uint8Array;
  old_text: string;
  new_text: string;
  line: number;
  col: number;
  labels?: { op_hash: string; symbol_id?: string; reason?: string };
}

export interface PatchSet {
  snapshot_id: string;
  files: { path: string; before_sha256: string }[];
  edits: PatchEdit[];
}

/** The JSON form of an edit (§4.1). */
export interface EditJson {
  file: string;
  span: { start: number; end: number };
  old_text: string;
  new_text: string;
  line: number;
  col: number;
}

/** A byte-addressed edit before it becomes a PatchEdit. */
export interface ByteEdit {
  path: string;
  start: number;
  end: number;
  newText: string;
  labels?: PatchEdit['labels'];
}

const dec = new TextDecoder('utf-8', { ignoreBOM: true });

export function compareEdits(a: { path: string; start: number; end: number; seq?: number }, b: typeof a): number {
  return compareUtf8(a.path, b.path) || a.start - b.start || a.end - b.end || (a.seq ?? 0) - (b.seq ?? 0);
}

/**
 * Build a PatchSet from byte edits over the snapshot's file texts. Sorts, merges exact duplicates and
 * fails with ConflictingEdits on overlaps (touching edits are fine).
 */
export function buildPatchSet(
  snapshotId: string,
  files: Map<string, FileText>,
  edits: ByteEdit[],
  known: {
    /** A ready line index of a file (a warm kernel keeps them across operations). */
    index?: (path: string) => LineIndex | undefined;
    /** A file's content hash when already known (the snapshot's). */
    sha256?: (path: string) => string | undefined;
    /** Labels for every edit that carries none of its own. */
    labels?: PatchEdit['labels'];
  } = {},
): PatchSet {
  const indexes = new Map<string, LineIndex>();
  const out: PatchEdit[] = [];
  // A rename repeats one old text and one new text thousands of times: hash and decode each once.
  const olds = new Map<string, { sha: string; text: string }>();
  const news = new Map<string, Uint8Array>();
  let last: { bytes: Uint8Array; old: { sha: string; text: string } } | null = null;
  edits.forEach((e, i) => {
    const f = files.get(e.path);
    if (!f) throw new KernelError('InternalError', `edit for unknown file ${e.path}`, { file: e.path });
    if (e.start < 0 || e.end < e.start || e.end > f.bytes.length) {
      throw new KernelError('InternalError', `edit span out of bounds in ${e.path}`, {
        file: e.path,
        span: { start: e.start, end: e.end },
      });
    }
    if (e.start === e.end && e.newText === '') {
      throw new KernelError('InternalError', `empty edit in ${e.path}`, {
        file: e.path,
        span: { start: e.start, end: e.end },
      });
    }
    let idx = indexes.get(e.path);
    if (!idx) indexes.set(e.path, (idx = known.index?.(e.path) ?? new LineIndex(f)));
    let old = last && sameBytes(last.bytes, f.bytes, e.start, e.end) ? last.old : undefined;
    if (!old) {
      const oldBytes = f.bytes.subarray(e.start, e.end);
      const oldKey = Buffer.from(oldBytes.buffer, oldBytes.byteOffset, oldBytes.byteLength).toString('latin1');
      old = olds.get(oldKey);
      if (!old)
        olds.set(oldKey, (old = { sha: e.start === e.end ? '' : sha256Hex(oldBytes), text: dec.decode(oldBytes) }));
      last = { bytes: oldBytes, old };
    }
    let newBytes = news.get(e.newText);
    if (!newBytes) news.set(e.newText, (newBytes = Buffer.from(e.newText, 'utf8')));
    const { line, col } = idx.lineCol(e.start);
    const pe: PatchEdit = {
      seq: i,
      path: e.path,
      kind: e.start === e.end ? 'insert' : e.newText === '' ? 'delete' : 'replace',
      start: e.start,
      end: e.end,
      anchor_sha256: old.sha,
      new_bytes: newBytes,
      old_text: old.text,
      new_text: e.newText,
      line,
      col,
    };
    const labels = e.labels ?? known.labels;
    if (labels) pe.labels = labels;
    out.push(pe);
  });
  out.sort(compareEdits);
  const merged: PatchEdit[] = [];
  for (const e of out) {
    const prev = merged[merged.length - 1];
    if (prev && prev.path === e.path && prev.start === e.start && prev.end === e.end && prev.new_text === e.new_text)
      continue;
    merged.push(e);
  }
  checkConflicts(merged);
  merged.forEach((e, i) => (e.seq = i));
  const paths = [...new Set(merged.map((e) => e.path))];
  return {
    snapshot_id: snapshotId,
    files: paths.map((p) => ({ path: p, before_sha256: known.sha256?.(p) ?? sha256Hex(files.get(p)!.bytes) })),
    edits: merged,
  };
}

/** Whether `b[start, end)` holds exactly the bytes `a` (no allocation: a rename repeats one old text). */
export function sameBytes(a: Uint8Array, b: Uint8Array, start: number, end: number): boolean {
  if (a.length !== end - start) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[start + i]) return false;
  return true;
}

/** Overlaps (`a.end > b.start`) and two different inserts at one offset are ConflictingEdits. */
export function checkConflicts(sorted: PatchEdit[]): void {
  const groups: PatchEdit[][] = [];
  let group: PatchEdit[] = [];
  let groupEnd = -1;
  let groupPath = '';
  const flush = () => {
    if (group.length > 1) groups.push(group);
    group = [];
  };
  for (const e of sorted) {
    const overlaps =
      group.length > 0 &&
      e.path === groupPath &&
      (groupEnd > e.start || (e.start === e.end && group.some((g) => g.start === g.end && g.start === e.start)));
    if (!overlaps) {
      flush();
      groupPath = e.path;
      groupEnd = e.end;
      group = [e];
    } else {
      group.push(e);
      groupEnd = Math.max(groupEnd, e.end);
    }
  }
  flush();
  if (groups.length > 0) {
    const conflicts = groups.flat().map(editJson);
    throw new KernelError('ConflictingEdits', `${conflicts.length} edits overlap`, { conflicts });
  }
}

export function editJson(e: PatchEdit): EditJson {
  return {
    file: e.path,
    span: { start: e.start, end: e.end },
    old_text: e.old_text,
    new_text: e.new_text,
    line: e.line,
    col: e.col,
  };
}

export function summarize(ps: PatchSet): {
  files_changed: number;
  edits_count: number;
  bytes_added: number;
  bytes_removed: number;
} {
  let added = 0;
  let removed = 0;
  for (const e of ps.edits) {
    added += e.new_bytes.length;
    removed += e.end - e.start;
  }
  return { files_changed: ps.files.length, edits_count: ps.edits.length, bytes_added: added, bytes_removed: removed };
}

/** Splice one file's edits (sorted, non-overlapping) into its bytes, in one allocation. */
export function spliceBytes(bytes: Uint8Array, edits: PatchEdit[]): Uint8Array {
  let size = bytes.length;
  for (const e of edits) size += e.new_bytes.length - (e.end - e.start);
  const out = Buffer.allocUnsafe(size);
  let pos = 0;
  let at = 0;
  for (const e of edits) {
    out.set(bytes.subarray(pos, e.start), at);
    at += e.start - pos;
    out.set(e.new_bytes, at);
    at += e.new_bytes.length;
    pos = e.end;
  }
  out.set(bytes.subarray(pos), at);
  return out;
}
