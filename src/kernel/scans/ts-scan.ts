/**
 * TypeScript scans of docs/kernel.md §6.6 on one file: `.name` member accesses (UnresolvedMemberReference)
 * and string literals equal to a name (SkippedStringLiteral). Candidates come from the text, so a file
 * without one is never parsed or walked; the AST then confirms each candidate.
 */
import type * as TS from 'typescript';
import { escapeRe, nodesAt } from '../backends/ts-nodes.js';
import type { TsModule } from '../backends/ts-project.js';

/** Accesses `.name` / `?.name`; `covered` starts (already in the edit set) are not resolved by the checker. */
export function tsMemberAccesses(
  ts: TsModule,
  text: string,
  name: string,
  source: () => { sf: TS.SourceFile; checker: TS.TypeChecker | null },
  covered?: (start16: number) => boolean,
): { start16: number; end16: number; resolved: boolean }[] {
  const re = new RegExp(`\\.\\s*${escapeRe(name)}(?![\\w$\\u0080-\\uffff])`, 'g');
  const starts = [...text.matchAll(re)].map((m) => m.index! + m[0].length - name.length);
  if (starts.length === 0) return [];
  const { sf, checker } = source();
  const out: { start16: number; end16: number; resolved: boolean }[] = [];
  for (const [start, n] of nodesAt(ts, sf, starts, (x) => ts.isIdentifier(x) || ts.isPrivateIdentifier(x))) {
    const p = n.parent;
    if (!p || !ts.isPropertyAccessExpression(p) || p.name !== n) continue;
    if (covered?.(start)) {
      out.push({ start16: start, end16: n.end, resolved: true });
      continue;
    }
    const sym = checker?.getSymbolAtLocation(n);
    out.push({ start16: start, end16: n.end, resolved: !!sym && (sym.declarations?.length ?? 0) > 0 });
  }
  return out.sort((x, y) => x.start16 - y.start16);
}

/** String and no-substitution template literals whose value is exactly `name`, as inner UTF-16 spans. */
export function tsStringLiterals(
  ts: TsModule,
  text: string,
  name: string,
  source: () => TS.SourceFile,
): { start16: number; end16: number }[] {
  const re = new RegExp(`(['"\`])${escapeRe(name)}\\1`, 'g');
  const starts = [...text.matchAll(re)].map((m) => m.index!);
  if (starts.length === 0) return [];
  const sf = source();
  const out: { start16: number; end16: number }[] = [];
  for (const [start, n] of nodesAt(
    ts,
    sf,
    starts,
    (x) => ts.isStringLiteral(x) || ts.isNoSubstitutionTemplateLiteral(x),
  )) {
    if ((n as TS.StringLiteral).text === name) out.push({ start16: start + 1, end16: n.end - 1 });
  }
  return out.sort((x, y) => x.start16 - y.start16);
}
