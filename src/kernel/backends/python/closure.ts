/**
 * Python's post-rename pass (05-kernel.md §6.6). pyright renames a method without its overrides, so the
 * kernel closes the gap: the workspace classes defining the same method name are candidates, their
 * ancestry comes from `textDocument/definition` on each base-list identifier (recursively, with a visited
 * set), the family grows from the target's class to every candidate that is an ancestor or descendant of a
 * member, and each added class is renamed at its method (`OverrideIncluded`). Then the scans: dynamic
 * patterns and star imports in every scanned file, string literals equal to the old name, and `.old`
 * member accesses (reported by the kernel's member scan as `UnresolvedMemberReference`). Under `aggressive` safety the
 * getattr-family string arguments and those member accesses are edited too, each with `HeuristicFallback`.
 */
import { compareUtf8 } from '../../ids.js';
import type { BackendWarning, RawEdit, ResolvedTarget } from '../types.js';
import { mayHaveSites, mayHaveStringLiteral, type PyClass, type Span } from './pymodule.js';
import type { PyrightSession } from './pyright.js';

interface ClassRef {
  file: string;
  cls: PyClass;
}

const keyOf = (r: ClassRef) => `${r.file}:${r.cls.name16.start16}`;
const editKey = (e: RawEdit) => (e.unit === 'utf16-offset' ? `${e.file}:${e.start}:${e.end}` : `${e.file}:?`);

function pythonFiles(s: PyrightSession): string[] {
  return [...s.view.texts.keys()].filter((f) => /\.pyi?$/.test(f)).sort(compareUtf8);
}

/** Direct bases of a class, resolved to workspace classes through pyright definitions. */
async function basesOf(s: PyrightSession, r: ClassRef, memo: Map<string, ClassRef[]>): Promise<ClassRef[]> {
  const k = keyOf(r);
  const hit = memo.get(k);
  if (hit) return hit;
  const out: ClassRef[] = [];
  for (const b of r.cls.bases) {
    const defs = await s.definitions(r.file, b.start16);
    for (const d of defs.inView) {
      const cls = s.module(d.file)?.classAt(d.start16);
      if (cls) out.push({ file: d.file, cls });
    }
  }
  memo.set(k, out);
  return out;
}

async function ancestorsOf(s: PyrightSession, r: ClassRef, memo: Map<string, ClassRef[]>): Promise<Set<string>> {
  const seen = new Set<string>();
  const queue = [r];
  while (queue.length) {
    const cur = queue.shift()!;
    for (const b of await basesOf(s, cur, memo)) {
      const k = keyOf(b);
      if (seen.has(k) || k === keyOf(r)) continue;
      seen.add(k);
      queue.push(b);
    }
  }
  return seen;
}

/** The override closure of a method rename: extra edits and one OverrideIncluded per added class. */
async function overrideClosure(
  s: PyrightSession,
  t: ResolvedTarget,
  newName: string,
): Promise<{ edits: RawEdit[]; warnings: BackendWarning[] }> {
  const out = { edits: [] as RawEdit[], warnings: [] as BackendWarning[] };
  const decl = t.declarations[0] ?? { file: t.file, start16: t.offset16, end16: t.offset16 + t.name.length };
  const own = s.module(decl.file)?.classOfMethod(decl.start16);
  if (!own) return out;
  const target: ClassRef = { file: decl.file, cls: own };
  const candidates: ClassRef[] = [];
  // A cheap test before tokenizing: the file has `def <name>` (names hold no regex metacharacters).
  const defines = new RegExp(`(?<![\\p{L}\\p{N}_])def\\s+${t.name}(?![\\p{L}\\p{N}_])`, 'u');
  for (const f of pythonFiles(s)) {
    if (!defines.test(s.text(f))) continue;
    for (const cls of s.module(f)?.classes ?? []) {
      if (!cls.methods.has(t.name)) continue;
      const r = { file: f, cls };
      if (keyOf(r) !== keyOf(target)) candidates.push(r);
    }
  }
  if (candidates.length === 0) return out;
  const memo = new Map<string, ClassRef[]>();
  const anc = new Map<string, Set<string>>();
  for (const r of [target, ...candidates]) anc.set(keyOf(r), await ancestorsOf(s, r, memo));
  const family = new Set([keyOf(target)]);
  const added: ClassRef[] = [];
  for (let grew = true; grew;) {
    grew = false;
    for (const c of candidates) {
      const ck = keyOf(c);
      if (family.has(ck)) continue;
      const related = [...family].some((f) => anc.get(ck)!.has(f) || anc.get(f)!.has(ck));
      if (related) {
        family.add(ck);
        added.push(c);
        grew = true;
      }
    }
  }
  for (const c of added) {
    const m = c.cls.methods.get(t.name)![0]!;
    const decls = c.cls.methods.get(t.name)!.map((sp) => ({ file: c.file, ...sp }));
    out.edits.push(...(await s.renameAt(c.file, m.start16, newName, decls)));
    out.warnings.push({
      code: 'OverrideIncluded',
      message: `override ${c.cls.name}.${t.name} renamed with ${own.name}.${t.name}`,
      file: c.file,
      offset16: m.start16,
    });
  }
  return out;
}

/** Union edits: identical spans with identical text merge. */
function union(a: RawEdit[], b: RawEdit[]): RawEdit[] {
  const seen = new Map<string, RawEdit>();
  for (const e of [...a, ...b]) {
    const k = `${editKey(e)}:${e.newText}`;
    if (!seen.has(k)) seen.set(k, e);
  }
  return [...seen.values()];
}

export async function afterRenamePython(
  s: PyrightSession,
  t: ResolvedTarget,
  newName: string,
  edits: RawEdit[],
  safety: 'strict' | 'aggressive',
): Promise<{ edits: RawEdit[]; warnings: BackendWarning[] }> {
  const warnings: BackendWarning[] = [];
  let all = edits;
  if (t.kind === 'method') {
    const c = await overrideClosure(s, t, newName);
    all = union(all, c.edits);
    warnings.push(...c.warnings);
  }
  const edited = new Set(all.map((e) => (e.unit === 'utf16-offset' ? `${e.file}:${e.start}` : '')));
  const editFiles = new Set(all.map((e) => e.file));
  const scanned = pythonFiles(s).filter((f) => editFiles.has(f) || s.text(f).includes(t.name));
  const heuristic: RawEdit[] = [];
  const heur = (file: string, sp: Span, why: string) => {
    heuristic.push({
      file,
      unit: 'utf16-offset',
      start: sp.start16,
      end: sp.end16,
      newText: newName,
      refKind: 'reference',
      heuristic: true,
    });
    edited.add(`${file}:${sp.start16}`);
    warnings.push({
      code: 'HeuristicFallback',
      message: `heuristic edit (${why}): ${t.name} -> ${newName}`,
      file,
      offset16: sp.start16,
    });
  };
  for (const f of scanned) {
    // Tokenize only files where a scan can find something (most files merely mention the name).
    const text = s.text(f);
    const sites = mayHaveSites(text);
    const strings = mayHaveStringLiteral(text, t.name);
    const members =
      safety === 'aggressive' && (t.kind === 'method' || t.kind === 'property') && text.includes(`.${t.name}`);
    if (!sites && !strings && !members) continue;
    const mod = s.module(f);
    if (!mod) continue;
    if (sites) {
      for (const site of mod.scanSites())
        warnings.push({
          code: site.code,
          message: site.message,
          file: f,
          offset16: site.start16,
          pattern: site.pattern,
        });
      if (safety === 'aggressive')
        for (const sp of mod.attrStringArgs(t.name))
          if (!edited.has(`${f}:${sp.start16}`)) heur(f, sp, 'string argument of a getattr-family call');
    }
    // Under strict safety the kernel's member scan (scans/members.ts, via `memberAccesses`) reports the
    // `.old` accesses left out; aggressive safety edits them here instead.
    if (members) {
      for (const sp of mod.memberAccesses(t.name)) {
        if (!edited.has(`${f}:${sp.start16}`)) heur(f, sp, 'member access on a receiver of unknown type');
      }
    }
    for (const sp of strings ? mod.stringLiterals(t.name) : []) {
      if (edited.has(`${f}:${sp.start16}`)) continue;
      warnings.push({
        code: 'SkippedStringLiteral',
        message: `string literal "${t.name}" was not renamed`,
        file: f,
        offset16: sp.start16,
      });
    }
  }
  return { edits: union(all, heuristic), warnings };
}
