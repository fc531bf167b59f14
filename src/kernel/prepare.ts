/**
 * Operation preparation shared by analyze-impact and run (05-kernel.md §6.1): op parsing into targets,
 * op_hash, the PatchSet, unified diff, summary and the predicted `snapshot_after`.
 */
import { KernelError } from './errors.js';
import { compareUtf8, opHash, sha256Hex, type OpTarget } from './ids.js';
import { buildPatchSet, editJson, spliceBytes, summarize, type ByteEdit, type PatchSet } from './patch/ir.js';
import { unifiedDiff } from './patch/diff.js';
import type { LineIndex } from './patch/positions.js';
import type { Snapshot } from './snapshot.js';
import type { OpSpec } from './types.js';

/** The op_hash of §9.6 (verification options and the workspace are excluded). */
export function opHashOf(op: OpSpec, safety: string): string {
  if (op.op === 'organize-imports') return opHash(op.op, { file: op.file }, { mode: op.mode });
  const target: OpTarget = op.at
    ? { at: { file: op.at.file, line: op.at.line, col: op.at.col } }
    : { symbol: op.symbol ?? '' };
  return opHash(op.op, target, { to: op.to, expect: op.expect, safety });
}

/** Split `FILE::Q.Name` at the first `::`. */
export function splitSelector(sel: string): { file: string; qname: string } {
  const i = sel.indexOf('::');
  if (i <= 0 || i + 2 >= sel.length) {
    throw new KernelError('InvalidArgument', `--symbol must be FILE::Qualified.Name, got ${sel}`, {
      argument: '--symbol',
      value: sel,
      reason: 'malformed_selector',
    });
  }
  return { file: sel.slice(0, i), qname: sel.slice(i + 2) };
}

export interface BuiltPatch {
  patchSet: PatchSet;
  /** The unified diff, rendered on first use (a library caller that only applies never pays for it). */
  readonly unified_diff: string;
  before: Map<string, Uint8Array>;
  after: Map<string, Uint8Array>;
  snapshot_after: string;
}

/** Build the PatchSet, the diff, and the snapshot id the workspace will have after applying it. */
export function buildPatch(
  snap: Snapshot,
  files: Map<string, import('./patch/positions.js').FileText>,
  edits: ByteEdit[],
  labels: { op_hash: string; symbol_id?: string },
  index?: (path: string) => LineIndex,
): BuiltPatch {
  const ps = buildPatchSet(
    snap.id,
    files,
    edits.map((e) => ({ ...e, labels })),
    { index, sha256: (p) => snap.files.get(p)?.sha256 },
  );
  const before = new Map<string, Uint8Array>();
  const after = new Map<string, Uint8Array>();
  const sections: { path: string; before: Uint8Array; edits: typeof ps.edits }[] = [];
  const byFile = new Map<string, typeof ps.edits>();
  for (const e of ps.edits) {
    let list = byFile.get(e.path);
    if (!list) byFile.set(e.path, (list = []));
    list.push(e);
  }
  for (const f of ps.files) {
    const b = snap.bytes.get(f.path)!;
    const fe = byFile.get(f.path) ?? [];
    before.set(f.path, b);
    after.set(f.path, spliceBytes(b, fe));
    sections.push({ path: f.path, before: b, edits: fe });
  }
  let record = '';
  for (const p of [...snap.files.keys()].sort(compareUtf8)) {
    const a = after.get(p);
    record += `${p}\n${a ? sha256Hex(a) : snap.files.get(p)!.sha256}\n`;
  }
  let diff: string | null = null;
  return {
    patchSet: ps,
    get unified_diff() {
      return (diff ??= unifiedDiff(sections));
    },
    before,
    after,
    snapshot_after: 'snap_' + sha256Hex(record).slice(0, 12),
  };
}

export { editJson, summarize };
