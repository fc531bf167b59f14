/**
 * AST helpers of the TypeScript backend (docs/kernel.md §6.2, §6.5–6.6): kinds, node lookup by position
 * without a token walk per location, and the sites where prefix/suffix text matters.
 */
import type * as TS from 'typescript';
import type { TsModule } from './ts-project.js';
import type { SymbolKind } from './types.js';

export function symbolKindOf(k: string): SymbolKind {
  switch (k) {
    case 'function':
    case 'local function':
      return 'function';
    case 'method':
      return 'method';
    case 'class':
    case 'local class':
      return 'class';
    case 'interface':
      return 'interface';
    case 'type':
    case 'type parameter':
      return 'type';
    case 'enum':
      return 'enum';
    case 'enum member':
      return 'enum_member';
    case 'property':
    case 'getter':
    case 'setter':
    case 'JSX attribute':
      return 'property';
    case 'parameter':
      return 'parameter';
    case 'module':
      return 'module';
    case 'alias':
      return 'import';
    default:
      return 'variable';
  }
}

/** Sites where a rename with prefix/suffix text keeps a name: `{ x }`, `{ x } = o`, `<T x />`, `a as x`. */
export function prefixSensitive(ts: TsModule, node: TS.Node): boolean {
  const p = node.parent;
  if (!p) return false;
  if (ts.isShorthandPropertyAssignment(p)) return true;
  if (ts.isBindingElement(p) && !p.propertyName && ts.isObjectBindingPattern(p.parent)) return true;
  if (ts.isJsxAttribute(p) && !p.initializer) return true;
  // The alias side of `x as y`: renaming an existing alias keeps it (§6.2), which only the closure search does.
  if ((ts.isExportSpecifier(p) || ts.isImportSpecifier(p)) && p.propertyName && p.name === node) return true;
  return false;
}

/** Escape a name for a RegExp. */
export function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Nodes accepted by `accept` that start (after trivia) at one of `starts`, found by one descent that only
 * enters nodes whose range holds a wanted position. Accepted nodes are not descended into.
 */
export function nodesAt(
  ts: TsModule,
  sf: TS.SourceFile,
  starts: number[],
  accept: (n: TS.Node) => boolean,
): Map<number, TS.Node> {
  const wanted = [...new Set(starts)].sort((a, b) => a - b);
  const out = new Map<number, TS.Node>();
  // First index in wanted[lo, hi) with value >= x.
  const lower = (x: number, lo: number, hi: number) => {
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (wanted[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const visit = (node: TS.Node, lo: number, hi: number): void => {
    ts.forEachChild(node, (child) => {
      const a = lower(child.pos, lo, hi);
      if (a >= hi || wanted[a]! >= child.end) return;
      const b = lower(child.end, a, hi);
      if (accept(child)) {
        const start = child.getStart(sf);
        if (wanted[a] === start || (b - a > 1 && wanted.slice(a, b).includes(start))) out.set(start, child);
      } else visit(child, a, b);
    });
  };
  visit(sf, 0, wanted.length);
  return out;
}

/** The identifiers (or private identifiers) starting at each of `starts`; absent where there is none. */
export function identifiersAt(ts: TsModule, sf: TS.SourceFile, starts: number[]): Map<number, TS.Node> {
  return nodesAt(ts, sf, starts, (n) => ts.isIdentifier(n) || ts.isPrivateIdentifier(n));
}

export function isJsxTag(ts: TsModule, node: TS.Node): boolean {
  const p = node.parent;
  return (
    !!p &&
    (ts.isJsxOpeningElement(p) || ts.isJsxClosingElement(p) || ts.isJsxSelfClosingElement(p)) &&
    p.tagName === node
  );
}
