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
  if (edits.length <= 1) return edits;
  // One edit per file: the region from the first change to the last, with the untouched text kept.
  const bytes = ctx.files.file(file).bytes;
  let text = '';
  let pos = edits[0]!.start;
  for (const e of edits) {
    if (e.start < pos) throw new KernelError('InternalError', 'organizeImports returned overlapping changes', { file });
    text += Buffer.from(bytes.subarray(pos, e.start)).toString('utf8') + e.newText;
    pos = e.end;
  }
  return [{ path: file, start: edits[0]!.start, end: pos, newText: text }];
}
