/**
 * Python's post-rename pass (docs/kernel.md §6.6). pyright renames a method without its overrides, so the
 * kernel closes the gap: the workspace classes defining the same method name (found on tree-sitter trees)
 * are candidates, their ancestry comes from `textDocument/definition` on each base-list identifier
 * (recursively, with a visited set), the family grows from the target's class to every candidate that is an
 * ancestor or descendant of a member, and each added class is renamed at its method (`OverrideIncluded`).
 * Then the scans (scans/python-scan.ts, scans/python-names.ts): dynamic patterns and star imports in every
 * scanned file, string literals equal to the old name, and `.old` member accesses (reported by the kernel's
 * member scan as `UnresolvedMemberReference`). Under `aggressive` safety the getattr-family string
 * arguments and those member accesses are edited too, each with `HeuristicFallback`.
 */
import { compareUtf8 } from '../../ids.js';
import type { BackendWarning, RawEdit, ResolvedTarget } from '../types.js';
import type { PyClass, Span } from '../../scans/python.js';
import type { PyrightSession } from './pyright.js';

interface ClassRef {
  file: string;
  cls: PyClass;
}

const keyOf = (r: ClassRef) => `${r.file}:${r.cls.name16.start16}`;
const editKey = (e: RawEdit) =>
  e.unit === 'utf16-offset'
    ? `${e.file}:${e.start}:${e.end}`
    : `${e.file}:${e.start.line}.${e.start.character}:${e.end.line}.${e.end.character}`;

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
      const cls = s.pyFile(d.file)?.classAt(d.start16);
      if (cls) out.push({ file: d.file, cls });
    }
  }
  memo.set(k, out);
  return out;
}

/** Keys of every workspace ancestor of a class; `reached` collects the ancestors themselves. */
async function ancestorsOf(
  s: PyrightSession,
  r: ClassRef,
  memo: Map<string, ClassRef[]>,
  reached: Map<string, ClassRef>,
): Promise<Set<string>> {
  const seen = new Set<string>();
  const queue = [r];
  while (queue.length) {
    const cur = queue.shift()!;
    for (const b of await basesOf(s, cur, memo)) {
      const k = keyOf(b);
      if (seen.has(k) || k === keyOf(r)) continue;
      seen.add(k);
      reached.set(k, b);
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
  const own = s.pyFile(decl.file)?.classOfMethod(decl.start16);
  if (!own) return out;
  const target: ClassRef = { file: decl.file, cls: own };
  // Candidates are parsed only from files that define the method and hold a class with a base list: a
  // class without bases has no ancestors, so it can join the family only as an ancestor of a member,
  // and every such ancestor is reached below through the members' base lists.
  // (Both text checks are memoized per file and usually done while pyright renames: PyFile.warmFor.)
  const byKey = new Map<string, ClassRef>();
  let unparsed = false;
  for (const f of pythonFiles(s)) {
    const file = s.pyFile(f);
    if (!file?.definesDef(t.name)) continue;
    if (f !== decl.file && !file.hasBasedClass) {
      unparsed = true;
      continue;
    }
    for (const cls of file.classes) if (cls.methods.has(t.name)) byKey.set(keyOf({ file: f, cls }), { file: f, cls });
  }
  byKey.delete(keyOf(target));
  // Nothing can join: no parsed candidate, and the target has no ancestors that unparsed files could hold.
  if (byKey.size === 0 && (!unparsed || own.bases.length === 0)) return out;
  const memo = new Map<string, ClassRef[]>();
  const anc = new Map<string, Set<string>>();
  const reached = new Map<string, ClassRef>();
  for (const r of [target, ...byKey.values()]) anc.set(keyOf(r), await ancestorsOf(s, r, memo, reached));
  for (const [k, r] of reached) {
    if (byKey.has(k) || k === keyOf(target) || !r.cls.methods.has(t.name)) continue;
    byKey.set(k, r);
    anc.set(k, await ancestorsOf(s, r, memo, new Map()));
  }
  const candidates = [...byKey.values()].sort(
    (a, b) => compareUtf8(a.file, b.file) || a.cls.name16.start16 - b.cls.name16.start16,
  );
  if (candidates.length === 0) return out;
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
    if (c.edits.length > 0) all = union(all, c.edits);
    warnings.push(...c.warnings);
  }
  // Edited offsets per file (numbers, not `file:offset` strings: a rename can have thousands of edits).
  const edited = new Map<string, Set<number>>();
  const markEdited = (file: string, o16: number) => {
    let set = edited.get(file);
    if (!set) edited.set(file, (set = new Set()));
    set.add(o16);
  };
  for (const e of all) if (e.unit === 'utf16-offset') markEdited(e.file, e.start);
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
    markEdited(file, sp.start16);
    warnings.push({
      code: 'HeuristicFallback',
      message: `heuristic edit (${why}): ${t.name} -> ${newName}`,
      file,
      offset16: sp.start16,
    });
  };
  const isMember = t.kind === 'method' || t.kind === 'property';
  const members = safety === 'aggressive' && isMember;
  // One parse confirms the string literals (and, for members, the accesses) of all scanned files at once.
  s.prefetchNameSites(
    scanned,
    t.name,
    isMember ? ['strings', 'members'] : ['strings'],
    (f) => (o16) => edited.get(f)?.has(o16) ?? false,
  );
  for (const f of scanned) {
    // Each scan parses only when the text holds a candidate (most files merely mention the name).
    const file = s.pyFile(f);
    if (!file) continue;
    const covered = (o16: number) => edited.get(f)?.has(o16) ?? false;
    if (file.mayHaveSites) {
      for (const site of file.scanSites())
        warnings.push({
          code: site.code,
          message: site.message,
          file: f,
          offset16: site.start16,
          pattern: site.pattern,
        });
      if (safety === 'aggressive')
        for (const sp of file.attrStringArgs(t.name))
          if (!covered(sp.start16)) heur(f, sp, 'string argument of a getattr-family call');
    }
    // Under strict safety the kernel's member scan (scans/members.ts, via `memberAccesses`) reports the
    // `.old` accesses left out; aggressive safety edits them here instead.
    if (members)
      for (const sp of file.memberAccesses(t.name, covered)) heur(f, sp, 'member access on a receiver of unknown type');
    for (const sp of file.stringLiterals(t.name, covered)) {
      warnings.push({
        code: 'SkippedStringLiteral',
        message: `string literal "${t.name}" was not renamed`,
        file: f,
        offset16: sp.start16,
      });
    }
  }
  return { edits: heuristic.length > 0 ? union(all, heuristic) : all, warnings };
}
