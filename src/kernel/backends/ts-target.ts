/**
 * Target resolution of the TypeScript backend (docs/kernel.md §6.2): the identifier at an offset, the
 * declaration(s) a rename starts from, and the explicit import/export alias that binds a use.
 */
import type * as TS from 'typescript';
import { KernelError } from '../errors.js';
import { compareUtf8 } from '../ids.js';
import { symbolKindOf } from './ts-nodes.js';
import { toAbs, toRel, type TsModule, type TsProject } from './ts-project.js';
import type { ResolvedTarget, Span16, WorkspaceView } from './types.js';

/** What resolution and rename need of a TypeScript session (./typescript.ts). */
export interface TsSessionParts {
  readonly ts: TsModule;
  readonly view: WorkspaceView;
  project(fileRel: string): TsProject;
  /** The current project's program, cached until the next sync or project switch. */
  programFor(fileRel: string): TS.Program | undefined;
  sourceFile(fileRel: string): TS.SourceFile;
}

function isLibrary(fileName: string): boolean {
  return fileName.includes('/node_modules/') || /\/typescript\/lib\/lib\.[^/]*\.d\.ts$/.test(fileName);
}

/** The deepest identifier whose [start, end] contains the offset; one starting there wins. */
export function identifierNode(ts: TsModule, sf: TS.SourceFile, pos: number): TS.Node | null {
  const tokenAt = (ts as unknown as { getTokenAtPosition?: (sf: TS.SourceFile, pos: number) => TS.Node })
    .getTokenAtPosition;
  if (tokenAt) {
    const t = tokenAt(sf, pos);
    if ((ts.isIdentifier(t) || ts.isPrivateIdentifier(t)) && t.getStart(sf) <= pos) return t;
    if (pos > 0) {
      const prev = tokenAt(sf, pos - 1);
      if ((ts.isIdentifier(prev) || ts.isPrivateIdentifier(prev)) && prev.end === pos) return prev;
    }
    if (!ts.isJsxText(t) && t.kind !== ts.SyntaxKind.EndOfFileToken) return null;
  }
  let best: TS.Node | null = null;
  const visit = (node: TS.Node) => {
    ts.forEachChild(node, (child) => {
      const start = child.getStart(sf);
      if (start > pos || child.end < pos) return;
      if (ts.isIdentifier(child) || ts.isPrivateIdentifier(child)) {
        if (!best || start === pos) best = child;
      } else visit(child);
    });
  };
  visit(sf);
  return best;
}

export function identifierAt(
  s: TsSessionParts,
  file: string,
  offset16: number,
): { start16: number; end16: number; text: string } | null {
  const sf = s.sourceFile(file);
  const n = identifierNode(s.ts, sf, offset16);
  if (!n) return null;
  const start16 = n.getStart(sf);
  return { start16, end16: n.end, text: n.getText(sf) };
}

/** The name of the import/export alias declaration that binds the identifier at `offset16`, in `file`. */
function aliasDeclaration(s: TsSessionParts, file: string, offset16: number, name: string): Span16 | null {
  const program = s.programFor(file);
  const sf = program?.getSourceFile(toAbs(s.view.root, file));
  const node = sf ? identifierNode(s.ts, sf, offset16) : null;
  if (!program || !sf || !node) return null;
  const sym = program.getTypeChecker().getSymbolAtLocation(node);
  if (!sym || !(sym.flags & s.ts.SymbolFlags.Alias)) return null;
  for (const d of sym.declarations ?? []) {
    const n = (d as TS.NamedDeclaration).name;
    if (!n || d.getSourceFile() !== sf || n.getText(sf) !== name) continue;
    return { file, start16: n.getStart(sf), end16: n.end };
  }
  return null;
}

/** The symbol at `offset16` in `file`: its first in-workspace declaration, name, kind and declarations. */
export function resolveTarget(s: TsSessionParts, file: string, offset16: number): ResolvedTarget {
  const root = s.view.root;
  const ls = s.project(file).ls;
  const abs = toAbs(root, file);
  const id = identifierAt(s, file, offset16);
  if (!id) throw new KernelError('SymbolNotFound', `no identifier in ${file}`, { reason: 'no_identifier' });
  const info = ls.getRenameInfo(abs, id.start16, { allowRenameOfImportPath: false });
  if (!info.canRename) {
    const lib = /standard TypeScript library|node_modules/.test(info.localizedErrorMessage);
    throw new KernelError('NotRenameable', `cannot rename ${id.text}: ${info.localizedErrorMessage}`, {
      name: id.text,
      reason: lib ? 'library_symbol' : 'backend_refused',
      backend_message: info.localizedErrorMessage,
    });
  }
  if (info.fileToRename) {
    throw new KernelError('NotRenameable', `renaming ${id.text} would rename a file`, {
      name: id.text,
      reason: 'file_rename',
      backend_message: null,
    });
  }
  let start = { file, offset16: id.start16 };
  const defs = ls.getDefinitionAtPosition(abs, id.start16) ?? [];
  const inWs = defs.filter((d) => !isLibrary(d.fileName) && s.view.texts.has(toRel(root, d.fileName)));
  if (defs.length > 0 && inWs.length === 0) {
    throw new KernelError('NotRenameable', `${id.text} is defined outside the workspace`, {
      name: id.text,
      reason: 'library_symbol',
      backend_message: null,
    });
  }
  const same = inWs.filter((d) => d.name === id.text);
  let declarations: Span16[] = [];
  let kindStr = info.kind as string;
  if (same.length > 0 && same.length === inWs.length) {
    declarations = same.map((d) => ({
      file: toRel(root, d.fileName),
      start16: d.textSpan.start,
      end16: d.textSpan.start + d.textSpan.length,
    }));
    declarations.sort((a, b) => compareUtf8(a.file, b.file) || a.start16 - b.start16);
    const first = declarations[0]!;
    start = { file: first.file, offset16: first.start16 };
    kindStr =
      same.find((d) => toRel(root, d.fileName) === first.file && d.textSpan.start === first.start16)?.kind ?? kindStr;
    if (kindStr === 'alias') kindStr = info.kind;
  } else {
    // An explicit alias (`import { x as pd }`) selected at a use: the alias is the declaration, so the
    // symbol (location, id) is the same whichever reference was selected.
    const alias = aliasDeclaration(s, file, id.start16, id.text);
    declarations = [alias ?? { file, start16: id.start16, end16: id.end16 }];
    start = { file, offset16: declarations[0]!.start16 };
  }
  return { file: start.file, offset16: start.offset16, name: id.text, kind: symbolKindOf(kindStr), declarations };
}
