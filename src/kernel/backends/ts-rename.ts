/**
 * Rename edits of the TypeScript backend (docs/kernel.md §6.2): the one-search fast path, the prefix/suffix
 * search with the re-export closure, and the reference kind of each location.
 */
import type * as TS from 'typescript';
import { identifiersAt, isJsxTag, prefixSensitive } from './ts-nodes.js';
import { toAbs, toRel, type TsModule } from './ts-project.js';
import { identifierNode, type TsSessionParts } from './ts-target.js';
import type { RawEdit, ReferenceKind, ResolvedTarget } from './types.js';

/** Syntax kinds whose `name` is a declaration (refKind `definition`), per loaded typescript module. */
const declarationKindsOf = new WeakMap<TsModule, Set<number>>();

function declarationKinds(ts: TsModule): Set<number> {
  let kinds = declarationKindsOf.get(ts);
  if (kinds) return kinds;
  const K = ts.SyntaxKind;
  kinds = new Set([
    K.MethodDeclaration,
    K.PropertyDeclaration,
    K.MethodSignature,
    K.PropertySignature,
    K.FunctionDeclaration,
    K.ClassDeclaration,
    K.InterfaceDeclaration,
    K.TypeAliasDeclaration,
    K.EnumDeclaration,
    K.EnumMember,
    K.VariableDeclaration,
    K.Parameter,
    K.GetAccessor,
    K.SetAccessor,
    K.ModuleDeclaration,
  ]);
  declarationKindsOf.set(ts, kinds);
  return kinds;
}

function locations(
  s: TsSessionParts,
  fileRel: string,
  pos: number,
  prefixAndSuffix = true,
): readonly TS.RenameLocation[] {
  const ls = s.project(fileRel).ls;
  return (
    ls.findRenameLocations(toAbs(s.view.root, fileRel), pos, false, false, {
      providePrefixAndSuffixTextForRename: prefixAndSuffix,
    }) ?? []
  );
}

/**
 * One search without prefix/suffix text: TypeScript then renames straight through re-exports, which is
 * exactly what the re-export closure computes with one search per barrel. The two differ only where
 * prefix/suffix text matters — shorthand properties and object destructuring, where a search without it
 * also renames the property. So the result stands only if no location is such a site (or unknown);
 * otherwise the closure search runs (null). So does any location holding another name: without
 * prefix/suffix text TypeScript also renames through existing aliases (`export { x as y }` renames `y`).
 */
export function renameInOneSearch(s: TsSessionParts, t: ResolvedTarget, newName: string): RawEdit[] | null {
  const ts = s.ts;
  const root = s.view.root;
  const locs = locations(s, t.file, t.offset16, false);
  const rels = new Map<string, string>();
  const relOf = (abs: string) => {
    let r = rels.get(abs);
    if (r === undefined) rels.set(abs, (r = toRel(root, abs)));
    return r;
  };
  const byFile = new Map<string, number[]>();
  for (const loc of locs) {
    if (loc.prefixText || loc.suffixText) return null;
    const file = relOf(loc.fileName);
    let l = byFile.get(file);
    if (!l) byFile.set(file, (l = []));
    l.push(loc.textSpan.start);
  }
  const sfs = new Map<string, TS.SourceFile>();
  const nodes = new Map<string, Map<number, TS.Node>>();
  for (const [file, starts] of byFile) {
    const sf = s.sourceFile(file);
    sfs.set(file, sf);
    nodes.set(file, identifiersAt(ts, sf, starts));
  }
  const out: RawEdit[] = [];
  const seen = new Set<TS.Node>();
  for (const loc of locs) {
    const file = relOf(loc.fileName);
    const start = loc.textSpan.start;
    const node = nodes.get(file)!.get(start);
    // Another name (an alias `export { x as y }` renamed through) or a prefix-sensitive site: closure search.
    if (!node || prefixSensitive(ts, node) || (node as TS.Identifier).text !== t.name) return null;
    if (seen.has(node)) continue;
    seen.add(node);
    out.push({
      file,
      unit: 'utf16-offset',
      start,
      end: start + loc.textSpan.length,
      newText: newName,
      refKind: refKind(ts, sfs.get(file)!, node, t, file, start),
      jsxTag: isJsxTag(ts, node),
    });
  }
  return out;
}

/** The §6.2 algorithm: prefix/suffix search, then the re-export closure, one search per barrel. */
export async function renameWithClosure(s: TsSessionParts, t: ResolvedTarget, newName: string): Promise<RawEdit[]> {
  const ts = s.ts;
  const root = s.view.root;
  const out = new Map<string, RawEdit>();
  const queue: { file: string; pos: number }[] = [{ file: t.file, pos: t.offset16 }];
  const visited = new Set<string>();
  const sfs = new Map<string, TS.SourceFile>();
  const sfOf = (f: string) => {
    let sf = sfs.get(f);
    if (!sf) sfs.set(f, (sf = s.sourceFile(f)));
    return sf;
  };
  while (queue.length > 0) {
    const q = queue.shift()!;
    const key = `${q.file}:${q.pos}`;
    if (visited.has(key)) continue;
    visited.add(key);
    const locs = locations(s, q.file, q.pos);
    // One pruned AST descent per file finds the identifier of every location (not a token lookup each).
    const byFile = new Map<string, number[]>();
    for (const loc of locs) {
      const file = toRel(root, loc.fileName);
      let l = byFile.get(file);
      if (!l) byFile.set(file, (l = []));
      l.push(loc.textSpan.start);
    }
    const nodes = new Map<string, Map<number, TS.Node>>();
    for (const [file, starts] of byFile) nodes.set(file, identifiersAt(ts, sfOf(file), starts));
    for (const loc of locs) {
      const file = toRel(root, loc.fileName);
      const start = loc.textSpan.start;
      const k = `${file}:${start}`;
      let newText = (loc.prefixText ?? '') + newName + (loc.suffixText ?? '');
      const sf = sfOf(file);
      const node = nodes.get(file)!.get(start) ?? identifierNode(ts, sf, start);
      const parent = node?.parent;
      if (
        loc.suffixText === ` as ${t.name}` &&
        !loc.prefixText &&
        parent &&
        ts.isExportSpecifier(parent) &&
        !parent.propertyName
      ) {
        // Re-export closure: rename through the barrel instead of aliasing.
        newText = newName;
        queue.push({ file, pos: start });
      }
      if (out.has(k) && out.get(k)!.newText === newName) continue;
      out.set(k, {
        file,
        unit: 'utf16-offset',
        start,
        end: start + loc.textSpan.length,
        newText,
        refKind: refKind(ts, sf, node, t, file, start),
        jsxTag: !!node && isJsxTag(ts, node),
      });
    }
  }
  return [...out.values()];
}

function refKind(
  ts: TsModule,
  sf: TS.SourceFile,
  node: TS.Node | null,
  t: ResolvedTarget,
  file: string,
  start: number,
): ReferenceKind {
  if (t.declarations.some((d) => d.file === file && d.start16 === start)) return 'definition';
  if (!node) return 'reference';
  for (let p: TS.Node | undefined = node.parent; p; p = p.parent) {
    if (ts.isImportDeclaration(p) || ts.isExportDeclaration(p) || ts.isImportEqualsDeclaration(p)) return 'import';
    if (ts.isStatement(p) || ts.isSourceFile(p)) break;
  }
  const parent = node.parent;
  if (parent && (parent as TS.NamedDeclaration).name === node && declarationKinds(ts).has(parent.kind))
    return 'definition';
  if (isJsxTag(ts, node)) return 'call';
  let callee: TS.Node = node;
  if (parent && ts.isPropertyAccessExpression(parent) && parent.name === node) callee = parent;
  const cp = callee.parent;
  if (cp && (ts.isCallExpression(cp) || ts.isNewExpression(cp) || ts.isDecorator(cp)) && cp.expression === callee)
    return 'call';
  if (parent && ts.isPropertyAccessExpression(parent) && parent.name === node) return 'attribute';
  void sf;
  return 'reference';
}

/**
 * References in `files` that the search from the declaration misses but whose definition is the target:
 * TypeScript links `const { old } = require('./mod')` in a JavaScript file to the export when asked from
 * the binding, never the other way round. Each such binding is renamed with its local uses (§6.2, files no
 * tsconfig includes); the binding's own edit renames the property and the local together, as an ES import
 * would be, and other locations keep TypeScript's prefix/suffix text (an export of the local keeps its name).
 */
export function definitionLinkedEdits(
  s: TsSessionParts,
  t: ResolvedTarget,
  newName: string,
  files: string[],
  have: RawEdit[],
): RawEdit[] {
  const ts = s.ts;
  const root = s.view.root;
  const only = new Set(files);
  const seen = new Set(have.map((e) => `${e.file}:${e.start}`));
  const decls = new Set(t.declarations.map((d) => `${d.file}:${d.start16}`));
  const out: RawEdit[] = [];
  for (const file of files) {
    const text = s.view.texts.get(file)?.text ?? '';
    const starts: number[] = [];
    for (let i = text.indexOf(t.name); i !== -1; i = text.indexOf(t.name, i + 1)) starts.push(i);
    if (starts.length === 0) continue;
    const sf = s.sourceFile(file);
    const ids = identifiersAt(ts, sf, starts);
    const ls = s.project(file).ls;
    const abs = toAbs(root, file);
    for (const start of starts) {
      const node = ids.get(start);
      if (!node || (node as TS.Identifier).text !== t.name || seen.has(`${file}:${start}`)) continue;
      const defs = ls.getDefinitionAtPosition(abs, start) ?? [];
      if (!defs.some((d) => decls.has(`${toRel(root, d.fileName)}:${d.textSpan.start}`))) continue;
      const locs =
        ls.findRenameLocations(abs, start, false, false, { providePrefixAndSuffixTextForRename: true }) ?? [];
      for (const loc of locs) {
        const f = toRel(root, loc.fileName);
        const at = loc.textSpan.start;
        if (!only.has(f) || seen.has(`${f}:${at}`)) continue;
        seen.add(`${f}:${at}`);
        const lsf = s.sourceFile(f);
        const n = identifierNode(ts, lsf, at);
        out.push({
          file: f,
          unit: 'utf16-offset',
          start: at,
          end: at + loc.textSpan.length,
          newText: f === file && at === start ? newName : (loc.prefixText ?? '') + newName + (loc.suffixText ?? ''),
          refKind: refKind(ts, lsf, n, t, f, at),
          jsxTag: !!n && isJsxTag(ts, n),
        });
      }
    }
  }
  return out;
}
