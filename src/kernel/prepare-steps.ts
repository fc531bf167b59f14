/**
 * Steps of the Kernel's prepare pipeline (docs/kernel.md §6.1) around ./prepare.ts: the operation's file,
 * language and symbol selector from its arguments (with the new name's syntax check), the operation planned
 * on its backend and built into a patch, and the Prepared result around it.
 */
import { KernelError } from './errors.js';
import type { KernelWarning } from './envelope.js';
import { sortWarnings } from './envelope.js';
import { validateNewName } from './names.js';
import { editJson } from './patch/index.js';
import { planOrganize } from './ops/organize.js';
import { planRename } from './ops/rename.js';
import type { TargetContext } from './ops/target.js';
import { buildPatch, splitSelector, summarize } from './prepare.js';
import type { Language, Snapshot } from './snapshot.js';
import { normalizeFileArg } from './workspace.js';
import type { OpSpec, Prepared } from './types.js';

export interface OpTarget {
  /** Workspace-relative file the operation starts from. */
  file: string;
  language: Language;
  /** The `--symbol` selector, split (rename by symbol only). */
  symbolSel?: { file: string; qname: string; selector: string };
}

/** Step 1 of prepare: arguments and the new name's syntax. */
export async function opTargetOf(workspace: string, op: OpSpec): Promise<OpTarget> {
  let fileArg: string;
  let symbolSel: { file: string; qname: string; selector: string } | undefined;
  if (op.op === 'rename-symbol') {
    if (op.symbol !== undefined) {
      const s = splitSelector(op.symbol);
      symbolSel = { ...s, selector: op.symbol };
      fileArg = s.file;
    } else fileArg = op.at!.file;
  } else fileArg = op.file;
  const { path: file, language } = normalizeFileArg(
    workspace,
    fileArg,
    op.op === 'organize-imports' ? '--file' : op.symbol !== undefined ? '--symbol' : '--at',
    op.op,
  );
  if (op.op === 'organize-imports' && language !== 'typescript') {
    throw new KernelError('UnsupportedOperation', `organize-imports is not supported for ${language}`, {
      operation: 'organize-imports',
      language,
      reason: 'language',
      fallback: language === 'python' ? `ruff check --select I --fix ${file}` : 'cargo fmt',
    });
  }
  if (op.op === 'rename-symbol') {
    const isId = language === 'typescript' ? await tsIdentifierCheck() : undefined;
    validateNewName(language, op.to, isId);
  }
  return { file, language, symbolSel };
}

/**
 * Step 4 of prepare: the operation planned on its backend (rename or organize-imports) and its patch built
 * against `snap`. Nothing is stored: the caller keeps the snapshot once the operation is accepted.
 */
export async function planPrepared(
  ctx: TargetContext,
  op: OpSpec,
  target: OpTarget,
  snap: Snapshot,
  hash: string,
  safety: 'strict' | 'aggressive',
): Promise<Prepared> {
  const { files, backend, warnings } = ctx;
  const { file, language, symbolSel } = target;
  if (op.op === 'rename-symbol') {
    const at = op.at ? { file, line: op.at.line, col: op.at.col } : undefined;
    const plan = await planRename(
      ctx,
      { at, symbol: symbolSel ? { ...symbolSel, file } : undefined, to: op.to, expect: op.expect, safety },
      language,
    );
    const project = (backend as { otherProjects?: () => string[] }).otherProjects?.() ?? [];
    if (project.length > 0)
      warnings.push({
        code: 'ProjectBoundary',
        message: `other TypeScript projects were not searched: ${project.join(', ')}`,
      });
    const built = buildPatch(
      snap,
      new Map([...new Set(plan.edits.map((e) => e.path))].map((p) => [p, files.file(p)])),
      plan.edits,
      { op_hash: hash, symbol_id: plan.symbol.id },
      (p) => files.index(p),
    );
    return preparedOf(op, snap.id, hash, built, warnings, {
      symbol: plan.symbol,
      oldName: plan.oldName,
      newName: op.to,
      references: plan.references,
    });
  }
  const edits = await planOrganize(ctx, file, op.mode);
  const built = buildPatch(snap, new Map([[file, files.file(file)]]), edits, { op_hash: hash }, (p) => files.index(p));
  return preparedOf(op, snap.id, hash, built, warnings, { references: [] });
}

/** The Prepared result of an operation around its built patch (diff and snapshot_after computed lazily). */
export function preparedOf(
  op: OpSpec,
  snapshotId: string,
  hash: string,
  built: ReturnType<typeof buildPatch>,
  warnings: KernelWarning[],
  extra: Partial<Prepared>,
): Prepared {
  return {
    op,
    snapshot_id: snapshotId,
    operation: op.op,
    op_hash: hash,
    ...extra,
    references: extra.references ?? [],
    patchSet: built.patchSet,
    edits: built.patchSet.edits.map(editJson),
    get unified_diff() {
      return built.unified_diff; // rendered when first read
    },
    summary: summarize(built.patchSet),
    get snapshot_after() {
      return built.snapshot_after; // predicted when first read
    },
    warnings: sortWarnings(warnings),
    before: built.before,
  };
}

async function tsIdentifierCheck(): Promise<(n: string) => boolean> {
  const { loadTs } = await import('./backends/typescript.js');
  const ts = await loadTs();
  const isId = (ts as unknown as { isIdentifierText?: (n: string, t: number) => boolean }).isIdentifierText;
  if (typeof isId === 'function') return (n: string) => isId(n, ts.ScriptTarget.ESNext);
  return (n: string) => {
    const s = ts.createScanner(ts.ScriptTarget.ESNext, false, ts.LanguageVariant.Standard, n);
    return s.scan() === ts.SyntaxKind.Identifier && s.getTokenEnd() === n.length;
  };
}
