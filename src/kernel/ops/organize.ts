/**
 * organize-imports for TS/JS (docs/kernel.md §6.6): the LanguageService's organizeImports, checked only
 * against its anchors. An empty result is a successful no-op.
 */
import { KernelError } from '../errors.js';
import type { ByteEdit } from '../patch/ir.js';
import type { OrganizeMode } from '../types.js';
import { toByteEdits } from './rename.js';
import type { TargetContext } from './target.js';

export async function planOrganize(ctx: TargetContext, file: string, mode: OrganizeMode): Promise<ByteEdit[]> {
  if (!ctx.backend.organizeImports) {
    throw new KernelError('UnsupportedOperation', 'organize-imports is not supported by this backend', {
      operation: 'organize-imports',
      language: null,
      reason: 'backend',
      fallback: 'edit by hand, then run `tug verify syntax`',
    });
  }
  const raw = await ctx.backend.organizeImports(file, mode);
  const edits = toByteEdits(ctx, raw, null, ctx.warnings).edits.sort((a, b) => a.start - b.start || a.end - b.end);
  if (edits.length === 0) return edits;
  // One edit per file: the region from the first change to the last, with the untouched text kept.
  const bytes = ctx.files.file(file).bytes;
  let text = '';
  let pos = edits[0]!.start;
  for (const e of edits) {
    if (e.start < pos) throw new KernelError('InternalError', 'organizeImports returned overlapping changes', { file });
    text += Buffer.from(bytes.subarray(pos, e.start)).toString('utf8') + e.newText;
    pos = e.end;
  }
  return trimUnchangedLines(bytes, { path: file, start: edits[0]!.start, end: pos, newText: text });
}

/**
 * TypeScript rewrites the whole import block, also when lines stay as they are or nothing changes at all:
 * whole lines equal at the start and end of the region are left out of the edit, so the diff is minimal
 * and an organized file is a no-op (§6.6), not a rewrite of identical bytes.
 */
function trimUnchangedLines(bytes: Uint8Array, e: ByteEdit): ByteEdit[] {
  const before = bytes.subarray(e.start, e.end);
  const after = Buffer.from(e.newText, 'utf8');
  const max = Math.min(before.length, after.length);
  let head = 0;
  for (let i = 0; i < max && before[i] === after[i]; i++) if (before[i] === 0x0a) head = i + 1;
  let tail = 0;
  for (let i = 1; i <= max - head && before[before.length - i] === after[after.length - i]; i++) {
    // The kept suffix starts a line on both sides (or where the trimmed region starts).
    const a = before.length - i;
    const b = after.length - i;
    if ((a === head || before[a - 1] === 0x0a) && (b === head || after[b - 1] === 0x0a)) tail = i;
  }
  if (head + tail === before.length && head + tail === after.length) return [];
  return [
    {
      path: e.path,
      start: e.start + head,
      end: e.end - tail,
      newText: after.subarray(head, after.length - tail).toString('utf8'),
    },
  ];
}
