/**
 * Target resolution (docs/kernel.md §3.2, §6.5): `--at FILE:LINE:COL` and `--symbol FILE::Q.Name` to a
 * backend ResolvedTarget, plus the SymbolInfo of §4.1.
 */
import { KernelError } from '../errors.js';
import { symbolId } from '../ids.js';
import type { KernelWarning } from '../envelope.js';
import type { BackendSession, ResolvedTarget } from '../backends/types.js';
import type { WorkspaceFiles } from '../workspace.js';
import type { SymbolInfo } from '../types.js';

export interface TargetContext {
  files: WorkspaceFiles;
  backend: BackendSession;
  snapshotId: string;
  warnings: KernelWarning[];
}

/** `--at` on a file of the snapshot → the resolved target (InvalidPosition / SymbolNotFound on failure). */
export async function resolveAt(
  ctx: TargetContext,
  at: { file: string; line: number; col: number },
  expect?: string,
): Promise<ResolvedTarget> {
  const idx = ctx.files.index(at.file);
  const location = { file: at.file, line: at.line, col: at.col };
  const pos = idx.fromLineCol(at.line, at.col);
  if ('error' in pos) {
    const why =
      pos.error === 'line'
        ? 'line past the end of the file'
        : pos.error === 'col'
          ? 'column past the end of the line'
          : 'column inside a multi-byte character';
    throw new KernelError(
      'InvalidPosition',
      `invalid position ${at.file}:${at.line}:${at.col}: ${why}`,
      { location, file_lines: idx.lineCount },
      { location },
    );
  }
  const o16 = idx.toUtf16(pos.byte);
  const id = o16 === null ? null : ctx.backend.identifierAt(at.file, o16);
  if (!id)
    throw new KernelError(
      'SymbolNotFound',
      `no symbol at ${at.file}:${at.line}:${at.col}`,
      { location, reason: 'no_identifier' },
      { location },
    );
  if (expect !== undefined && id.text !== expect) {
    throw new KernelError(
      'SymbolNotFound',
      `expected ${expect} at ${at.file}:${at.line}:${at.col}, found ${id.text}`,
      { location, reason: 'expect_mismatch', found: id.text },
      { location },
    );
  }
  return atLocation(at, () => ctx.backend.resolveAt(at.file, id.start16, ctx.warnings));
}

/**
 * Run a backend step for an `--at` target: a NotRenameable or SymbolNotFound without a location gets the
 * `--at` location (a backend may refuse while resolving or, like pyright, only when asked to rename).
 */
export async function atLocation<T>(
  at: { file: string; line: number; col: number } | undefined,
  step: () => Promise<T>,
): Promise<T> {
  try {
    return await step();
  } catch (e) {
    if (at && e instanceof KernelError && !e.location && (e.code === 'NotRenameable' || e.code === 'SymbolNotFound')) {
      const location = { file: at.file, line: at.line, col: at.col };
      throw new KernelError(e.code, e.message, { location, ...e.details }, { location });
    }
    throw e;
  }
}

export function locationOf(files: WorkspaceFiles, file: string, start16: number, end16?: number) {
  const idx = files.index(file);
  const b = idx.toByte(start16);
  const lc = idx.lineCol(b);
  const loc: { file: string; line: number; col: number; byte_start?: number; byte_end?: number } = {
    file,
    line: lc.line,
    col: lc.col,
  };
  if (end16 !== undefined) {
    loc.byte_start = b;
    loc.byte_end = idx.toByte(end16);
  }
  return loc;
}

/** SymbolInfo for a resolved target (outline gives qualified_name, container and selector). */
export async function symbolInfo(ctx: TargetContext, t: ResolvedTarget): Promise<SymbolInfo> {
  const decl = t.declarations[0] ?? { file: t.file, start16: t.offset16, end16: t.offset16 + t.name.length };
  const loc = locationOf(ctx.files, decl.file, decl.start16, decl.end16);
  const outline = await ctx.backend.outline(decl.file).catch(() => []);
  const item = outline.find((o) => o.name16.start16 === decl.start16 && o.name16.end16 === decl.end16);
  const name = ctx.files.file(decl.file).text.slice(decl.start16, decl.end16) || t.name;
  return {
    id: symbolId(ctx.snapshotId, decl.file, loc.byte_start ?? 0, t.kind),
    name,
    kind: t.kind,
    location: { file: loc.file, line: loc.line, col: loc.col },
    qualified_name: item?.qualified_name ?? null,
    container: item?.container ?? null,
    selector: item ? `${decl.file}::${item.qualified_name}` : null,
  };
}

/** `--symbol FILE::Q.Name` → one target, or SymbolNotFound / AmbiguousSymbol. */
export async function resolveSymbol(
  ctx: TargetContext,
  file: string,
  qname: string,
  selector: string,
): Promise<ResolvedTarget> {
  const outline = await ctx.backend.outline(file);
  const matches = outline.filter((o) => o.qualified_name === qname);
  if (matches.length === 0)
    throw new KernelError('SymbolNotFound', `no symbol matches ${selector}`, { selector, reason: 'no_match' });
  const targets: ResolvedTarget[] = [];
  for (const m of matches) targets.push(await ctx.backend.resolveAt(file, m.name16.start16, ctx.warnings));
  if (targets.length === 1) return targets[0]!;
  // Group: two matches are one symbol when one's rename set contains the other's declaration span.
  const sets = await Promise.all(
    targets.map(
      async (t) =>
        new Set(
          (await ctx.backend.renameEdits(t, t.name)).map((e) =>
            e.unit === 'utf16-offset' ? `${e.file}:${e.start}` : '',
          ),
        ),
    ),
  );
  const groups: number[][] = [];
  targets.forEach((t, i) => {
    const g = groups.find((grp) =>
      grp.some(
        (j) => sets[j]!.has(`${t.file}:${t.offset16}`) || sets[i]!.has(`${targets[j]!.file}:${targets[j]!.offset16}`),
      ),
    );
    if (g) g.push(i);
    else groups.push([i]);
  });
  if (groups.length === 1) return targets[groups[0]![0]!]!;
  const candidates = [];
  for (const g of groups) candidates.push(await symbolInfo(ctx, targets[g[0]!]!));
  throw new KernelError('AmbiguousSymbol', `${groups.length} symbols match ${selector}`, { selector, candidates });
}
