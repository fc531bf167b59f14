/**
 * organize-imports for TS/JS (05-kernel.md §6.6): the LanguageService's organizeImports, checked only
 * against its anchors. An empty result is a successful no-op.
 */
import { KernelError } from '../errors.js';
import type { ByteEdit } from '../patch/ir.js';
import type { OrganizeMode } from '../types.js';
import { toByteEdits } from './rename.js';
import type { TargetContext } from './target.js';

export async function planOrganize(ctx: TargetContext, file: string, mode: OrganizeMode): Promise<ByteEdit[]> {
  if (!ctx.backend.organizeImports) {
    throw new KernelError('UnsupportedOperation', 'organize-imports is not supported by this backend', { operation: 'organize-imports', language: null, reason: 'backend', fallback: 'edit by hand, then run `tug verify syntax`' });
  }
  const raw = await ctx.backend.organizeImports(file, mode);
  return toByteEdits(ctx, raw, null, ctx.warnings).edits;
}
