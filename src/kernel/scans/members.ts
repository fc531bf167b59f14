/**
 * The `UnresolvedMemberReference` scan (docs/kernel.md §6.6) for method and property renames. Scanned files
 * are those of the edit set plus every same-language source-set file whose bytes contain the old name. A
 * `.old` access that the edit set does not cover gets a warning — for TypeScript, only when the type
 * checker cannot resolve it (an `any`/untyped receiver or an error): an access that resolves to another
 * declaration is a different member, not a missed reference. Python accesses come from the syntax tree,
 * which knows no types: every access pyright left out is reported, worded so as not to claim why.
 */
import type { KernelWarning } from '../envelope.js';
import type { ByteEdit } from '../patch/ir.js';
import { languageOf } from '../snapshot.js';
import type { ResolvedTarget } from '../backends/types.js';
import { locationOf, type TargetContext } from '../ops/target.js';

/** A `.name` access found by a backend: the UTF-16 span of the name, and whether it resolves to a symbol. */
export interface MemberAccess {
  start16: number;
  end16: number;
  resolved: boolean;
}

type MemberAccessScanner = (file: string, name: string, covered?: (start16: number) => boolean) => MemberAccess[];

/** Files to scan: the edit set's, plus same-language files whose bytes contain the name. */
export function scannedFiles(ctx: TargetContext, lang: string, name: string, edits: ByteEdit[]): string[] {
  const out = new Set(edits.map((e) => e.path).filter((p) => languageOf(p) === lang));
  const needle = Buffer.from(name, 'utf8');
  for (const [path, bytes] of ctx.files.snap.bytes) {
    if (out.has(path) || languageOf(path) !== lang) continue;
    if (Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).indexOf(needle) !== -1) out.add(path);
  }
  return [...out];
}

/** Warnings for `.old` accesses outside the edit set (method and property symbols only). */
export function scanMemberReferences(
  ctx: TargetContext,
  target: ResolvedTarget,
  oldName: string,
  edits: ByteEdit[],
): KernelWarning[] {
  if (target.kind !== 'method' && target.kind !== 'property') return [];
  const scan = (ctx.backend as { memberAccesses?: MemberAccessScanner }).memberAccesses?.bind(ctx.backend);
  if (!scan) return [];
  const lang = languageOf(target.file);
  if (!lang) return [];
  const covered = new Set(edits.map((e) => `${e.path}\0${e.start}`));
  const out: KernelWarning[] = [];
  for (const file of scannedFiles(ctx, lang, oldName, edits)) {
    if (!ctx.files.tryFile(file)) continue;
    const idx = ctx.files.index(file);
    const isCovered = (start16: number) => covered.has(`${file}\0${idx.toByte(start16)}`);
    for (const a of scan(file, oldName, isCovered)) {
      if (a.resolved || isCovered(a.start16)) continue;
      const loc = locationOf(ctx.files, file, a.start16);
      out.push({
        code: 'UnresolvedMemberReference',
        message:
          lang === 'typescript'
            ? `.${oldName} access not renamed: its receiver's type is unknown`
            : `.${oldName} access not renamed: the rename did not resolve it to this symbol (a receiver of another or an unknown type)`,
        location: { file: loc.file, line: loc.line, col: loc.col },
        suggestion: 'check the receiver; type it, or rename this access by hand',
      });
    }
  }
  return out;
}
