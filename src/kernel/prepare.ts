/**
 * Operation preparation shared by analyze-impact and run (docs/kernel.md §6.1): op parsing into targets,
 * op_hash, the PatchSet, unified diff, summary and the predicted `snapshot_after`.
 */
import { KernelError } from './errors.js';
import { opHash, sha256Hex, type OpTarget } from './ids.js';
import {
  buildPatchSet,
  editJson,
  spliceBytes,
  summarize,
  type ByteEdit,
  type PatchEdit,
  type PatchSet,
} from './patch/ir.js';
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
  /** The snapshot id after applying, computed on first use (it splices and hashes every changed file). */
  readonly snapshot_after: string;
}

/** Build the PatchSet, the diff, and the snapshot id the workspace will have after applying it. */
export function buildPatch(
  snap: Snapshot,
  files: Map<string, import('./patch/positions.js').FileText>,
  edits: ByteEdit[],
  labels: { op_hash: string; symbol_id?: string },
  index?: (path: string) => LineIndex,
): BuiltPatch {
  const ps = buildPatchSet(snap.id, files, edits, { index, sha256: (p) => snap.files.get(p)?.sha256, labels });
  const before = new Map<string, Uint8Array>();
  const sections: { path: string; before: Uint8Array; edits: typeof ps.edits }[] = [];
  const byFile = new Map<string, typeof ps.edits>();
  for (const e of ps.edits) {
    let list = byFile.get(e.path);
    if (!list) byFile.set(e.path, (list = []));
    list.push(e);
  }
  for (const f of ps.files) {
    const b = snap.bytes.get(f.path)!;
    before.set(f.path, b);
    sections.push({ path: f.path, before: b, edits: byFile.get(f.path) ?? [] });
  }
  let diff: string | null = null;
  let snapshotAfter: string | null = null;
  return {
    patchSet: ps,
    get unified_diff() {
      return (diff ??= unifiedDiff(sections));
    },
    before,
    get snapshot_after() {
      return (snapshotAfter ??= predictSnapshot(snap, sections));
    },
  };
}

/** The id takeSnapshot will give the workspace once `sections` are applied (§10.1 records, in UTF-8 order). */
function predictSnapshot(snap: Snapshot, sections: { path: string; before: Uint8Array; edits: PatchEdit[] }[]) {
  const after = new Map(sections.map((s) => [s.path, sha256Hex(spliceBytes(s.before, s.edits))]));
  // The snapshot lists its files in UTF-8 order already (takeSnapshot).
  let record = '';
  for (const [p, meta] of snap.files) record += `${p}\n${after.get(p) ?? meta.sha256}\n`;
  return 'snap_' + sha256Hex(record).slice(0, 12);
}

export { editJson, summarize };
