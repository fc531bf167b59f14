/**
 * rename-symbol (docs/kernel.md §6.1 steps 5–9): resolve, get raw edits, convert to bytes and validate the
 * old text, drop edits outside the source set, scan for skipped string literals and member accesses.
 */
import { KernelError } from '../errors.js';
import type { KernelWarning } from '../envelope.js';
import { compareUtf8 } from '../ids.js';
import { validateForSymbol, validateJsxTag } from '../names.js';
import { sameBytes, type ByteEdit } from '../patch/ir.js';
import { lspToUtf16 } from '../patch/positions.js';
import type { RawEdit, ResolvedTarget } from '../backends/types.js';
import type { Reference, SymbolInfo } from '../types.js';
import { languageOf } from '../snapshot.js';
import { atLocation, locationOf, resolveAt, resolveSymbol, symbolInfo, type TargetContext } from './target.js';
import { scanMemberReferences } from '../scans/members.js';

export interface RenameInput {
  at?: { file: string; line: number; col: number };
  symbol?: { file: string; qname: string; selector: string };
  to: string;
  expect?: string;
  safety?: 'strict' | 'aggressive';
}

export interface RenamePlan {
  target: ResolvedTarget;
  symbol: SymbolInfo;
  oldName: string;
  references: Reference[];
  edits: ByteEdit[];
}

/** Raw backend edits → byte edits, validating the old text at every span (fail closed). */
export function toByteEdits(
  ctx: TargetContext,
  raw: RawEdit[],
  expected: string | null,
  warnings: KernelWarning[],
): { edits: ByteEdit[]; kept: RawEdit[] } {
  const edits: ByteEdit[] = [];
  const kept: RawEdit[] = [];
  const expectedBytes = expected === null ? null : Buffer.from(expected, 'utf8');
  for (const r of raw) {
    if (!ctx.files.has(r.file)) {
      warnings.push({
        code: 'SkippedFile',
        message: `edit outside the source set dropped: ${r.file}`,
        suggestion: 'check the file is in the workspace and not excluded',
      });
      continue;
    }
    const f = ctx.files.file(r.file);
    const idx = ctx.files.index(r.file);
    const s16 =
      r.unit === 'utf16-offset'
        ? r.start
        : lspToUtf16(f.text, r.start.line, r.start.character, r.unit === 'lsp-utf8' ? 'utf-8' : 'utf-16');
    const e16 =
      r.unit === 'utf16-offset'
        ? r.end
        : lspToUtf16(f.text, r.end.line, r.end.character, r.unit === 'lsp-utf8' ? 'utf-8' : 'utf-16');
    const start = idx.toByte(s16);
    const end = idx.toByte(e16);
    if (expected !== null && !sameBytes(expectedBytes!, f.bytes, start, end)) {
      const actual = Buffer.from(f.bytes.subarray(start, end)).toString('utf8');
      throw new KernelError('InternalError', `backend span in ${r.file} does not hold ${expected}`, {
        file: r.file,
        span: { start, end },
        expected,
        actual,
        backend: languageOf(r.file),
      });
    }
    edits.push({ path: r.file, start, end, newText: r.newText });
    kept.push(r);
  }
  return { edits, kept };
}

export async function planRename(
  ctx: TargetContext,
  input: RenameInput,
  lang: 'typescript' | 'python' | 'rust',
): Promise<RenamePlan> {
  const target = input.at
    ? await resolveAt(ctx, input.at, input.expect)
    : await resolveSymbol(ctx, input.symbol!.file, input.symbol!.qname, input.symbol!.selector);
  const symbol = await symbolInfo(ctx, target);
  const oldName = target.name;
  validateForSymbol(lang, input.to, oldName, target.kind);
  let raw = await atLocation(input.at, () => ctx.backend.renameEdits(target, input.to));
  if (ctx.backend.afterRename) {
    // Language-specific closure and scans (Python: override closure, dynamic patterns, heuristics).
    const after = await ctx.backend.afterRename(target, input.to, raw, { safety: input.safety ?? 'strict' });
    raw = after.edits;
    for (const w of after.warnings) {
      const loc =
        w.file !== undefined && w.offset16 !== undefined && ctx.files.has(w.file)
          ? locationOf(ctx.files, w.file, w.offset16)
          : null;
      const kw: KernelWarning = { code: w.code, message: w.message };
      if (loc) kw.location = { file: loc.file, line: loc.line, col: loc.col };
      if (w.pattern !== undefined) kw.pattern = w.pattern;
      if (w.suggestion !== undefined) kw.suggestion = w.suggestion;
      ctx.warnings.push(kw);
    }
  }
  if (raw.some((r) => r.jsxTag)) validateJsxTag(input.to);
  const { edits, kept } = toByteEdits(ctx, raw, oldName, ctx.warnings);
  const references: Reference[] = kept
    .filter((r) => !r.heuristic)
    .map((r) => ({
      location: locationOf(ctx.files, r.file, r.unit === 'utf16-offset' ? r.start : 0),
      kind: r.refKind ?? 'reference',
    }));
  references.sort(
    (a, b) =>
      compareUtf8(a.location.file, b.location.file) ||
      a.location.line - b.location.line ||
      a.location.col - b.location.col,
  );
  scanStrings(ctx, oldName, edits);
  ctx.warnings.push(...scanMemberReferences(ctx, target, oldName, edits));
  return { target, symbol, oldName, references, edits };
}

/** SkippedStringLiteral for string literals equal to the old name in the scanned files (§6.6). */
function scanStrings(ctx: TargetContext, oldName: string, edits: ByteEdit[]): void {
  const scan = ctx.backend.stringLiterals?.bind(ctx.backend);
  if (!scan) return;
  // Only files where the name appears right after a quote can hold such a literal (escapes aside).
  const needles = ["'", '"', '`'].map((q) => Buffer.from(q + oldName, 'utf8'));
  for (const [path, bytes] of ctx.files.snap.bytes) {
    if (languageOf(path) !== 'typescript') continue;
    const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (!needles.some((n) => buf.indexOf(n) !== -1)) continue;
    if (!ctx.files.tryFile(path)) continue;
    for (const s of scan(path, oldName)) {
      const loc = locationOf(ctx.files, path, s.start16);
      if (edits.some((e) => e.path === path && e.start === ctx.files.index(path).toByte(s.start16))) continue;
      ctx.warnings.push({
        code: 'SkippedStringLiteral',
        message: `string literal "${oldName}" was not renamed`,
        location: { file: loc.file, line: loc.line, col: loc.col },
      });
    }
  }
}
