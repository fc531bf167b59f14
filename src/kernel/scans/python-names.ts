/**
 * The name scans of docs/kernel.md §6.6 for Python: string literals whose whole content is the old name
 * (SkippedStringLiteral) and `.name` attribute accesses (UnresolvedMemberReference, aggressive edits).
 *
 * Candidates come from the text. When a file has no lexeme spanning lines (triple-quoted strings,
 * backslash continuations, f-string fields left open at a line end), every physical line starts outside
 * any string, which makes two shortcuts exact: a candidate with no quote, `#` or backslash before it on
 * its line is decided by the text (`quickSite`; tests check it against the tree on every fixture), and
 * the remaining candidates are confirmed on a tree of just their lines — of one file (tree-sitter included
 * ranges), or of many files concatenated into one document, which keeps a scan of hundreds of files
 * fast. A tree with any error falls back: a batch to each file, a file's lines to the whole file; other
 * files are confirmed on their whole tree.
 */
import type { PyFile } from './python.js';
import { identifierStartingAt, isField, type Span, type Syntax, type SyntaxNode } from './tree-sitter.js';

const MULTILINE_LEXEME = /"""|'''|\\(?:\r|\n)/;
const OPEN_FSTRING_FIELD = /(?:^|[^\p{L}\p{N}_])(?:[fFtT][rR]?|[rR][fFtT])["'][^\r\n]*\{[^}\r\n]*$/mu;

/** Whether every physical line of `text` starts outside any string, so a line parses alone as it lexes. */
export function linesLexIndependently(text: string): boolean {
  return !MULTILINE_LEXEME.test(text) && !OPEN_FSTRING_FIELD.test(text);
}

/** The spans of the lines holding `offsets` (from the first non-blank character, line end included). */
function lineSpans(text: string, offsets: number[]): Span[] {
  const out: Span[] = [];
  for (const o of [...offsets].sort((a, b) => a - b)) {
    let s = o;
    while (s > 0 && text[s - 1] !== '\n' && text[s - 1] !== '\r') s--;
    while (text[s] === ' ' || text[s] === '\t' || text[s] === '\f') s++;
    let e = o;
    while (e < text.length && text[e] !== '\n' && text[e] !== '\r') e++;
    e += text.startsWith('\r\n', e) ? 2 : e < text.length ? 1 : 0;
    const last = out[out.length - 1];
    if (last && last.end16 >= s) last.end16 = Math.max(last.end16, e);
    else out.push({ start16: s, end16: e });
  }
  return out;
}

/** A string node's content span (between prefix+quote and quote) and its prefix. */
export function stringParts(s: SyntaxNode): { content: Span; prefix: string } | null {
  const open = s.firstChild;
  const close = s.lastChild;
  if (open?.type !== 'string_start' || close?.type !== 'string_end') return null;
  return { content: { start16: open.endIndex, end16: close.startIndex }, prefix: open.text.replace(/["']+$/, '') };
}

function indexesOf(text: string, needle: string): number[] {
  const out: number[] = [];
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + 1)) out.push(i);
  return out;
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Text candidates of the name scans: string-literal content starts and `.name` name starts, sorted. */
export interface NameCandidates {
  strings: number[];
  members: number[];
  /** No candidate spans lines (a `.` and its name on different lines). */
  lineLocal: boolean;
}

export function nameCandidates(text: string, name: string): NameCandidates {
  const strings = [...indexesOf(text, `"${name}"`), ...indexesOf(text, `'${name}'`)]
    .map((i) => i + 1)
    .sort((a, b) => a - b);
  const members: number[] = [];
  let lineLocal = true;
  if (text.includes(name)) {
    const re = new RegExp(`\\.[\\s\\\\]*${escapeRe(name)}(?![\\p{L}\\p{N}_])`, 'gu');
    for (const m of text.matchAll(re)) {
      members.push(m.index + m[0].length - name.length);
      if (/[\r\n]/.test(m[0])) lineLocal = false;
    }
  }
  return { strings, members, lineLocal };
}

/** The confirmed name sites: string literals (bytes excluded) whose whole content is the name, and accesses. */
export interface NameSites {
  strings: Span[];
  members: Span[];
}

/** The candidates (at `at(offset)` in the parsed text) that the tree confirms, as spans of the file. */
function confirmed(root: SyntaxNode, name: string, c: NameCandidates, at: (o: number) => number): NameSites {
  const len = name.length;
  const strings = c.strings.filter((o) => {
    const s = at(o);
    const n = root.descendantForIndex(s, s + len);
    const str = n?.type === 'string_content' ? n.parent : null;
    const parts = str?.type === 'string' ? stringParts(str) : null;
    return !!parts && !/[bB]/.test(parts.prefix) && parts.content.start16 === s && parts.content.end16 === s + len;
  });
  const members = c.members.filter((o) => {
    const s = at(o);
    const n = identifierStartingAt(root, s, (x) => x.type === 'identifier');
    return !!n && n.endIndex === s + len && n.parent?.type === 'attribute' && isField(n.parent, 'attribute', n);
  });
  const span = (o: number): Span => ({ start16: o, end16: o + len });
  return { strings: strings.map(span), members: members.map(span) };
}

const IDENT_CHAR = /[\p{L}\p{N}_]/u;
const STRING_PREFIX = /^(?:[rRuUfFtTbB]|[rR][bBfFtT]|[bBfFtT][rR])$/;
const SPECIAL_HEAD = /^(?:from|import|case)(?![\p{L}\p{N}_])/u;

/**
 * Whether a candidate of a line-local file is a site, read from its own line; null when only a tree can
 * tell. Exact because such a line starts outside any string: with no quote, `#` or backslash before the
 * candidate, its opening quote or `.` is code. Import and `case` lines (dotted names, not attribute
 * accesses), string prefixes other than the valid ones, and a `.` after a number are left to the tree.
 */
function quickSite(text: string, o: number, kind: keyof NameSites): boolean | null {
  let ls = o;
  while (ls > 0 && text[ls - 1] !== '\n' && text[ls - 1] !== '\r') ls--;
  const end = kind === 'strings' ? o - 1 : o;
  for (let i = ls; i < end; i++) {
    const c = text[i];
    if (c === '"' || c === "'" || c === '#' || c === '\\') return null;
  }
  if (kind === 'strings') {
    let j = o - 1;
    while (j > ls && IDENT_CHAR.test(text[j - 1]!)) j--;
    const prefix = text.slice(j, o - 1);
    if (prefix === '') return true;
    return STRING_PREFIX.test(prefix) ? !/[bB]/.test(prefix) : null;
  }
  let h = ls;
  while (text[h] === ' ' || text[h] === '\t' || text[h] === '\f') h++;
  if (SPECIAL_HEAD.test(text.slice(h, h + 7))) return null;
  let d = o - 1;
  while (text[d] !== '.') d--; // the candidate's dot (only blanks lie between)
  let b = d;
  while (b > ls && IDENT_CHAR.test(text[b - 1]!)) b--;
  if (b < d && /[0-9]/.test(text[b]!)) return null; // `1.name`: a float, or an error
  return true;
}

/** The candidates that the text alone decides (`known`), and the rest, for a tree. */
export function quickNames(text: string, name: string, c: NameCandidates): { known: NameSites; rest: NameCandidates } {
  const known: NameSites = { strings: [], members: [] };
  const rest: NameCandidates = { strings: [], members: [], lineLocal: c.lineLocal };
  for (const kind of ['strings', 'members'] as const)
    for (const o of c[kind]) {
      const q = quickSite(text, o, kind);
      if (q === null) rest[kind].push(o);
      else if (q) known[kind].push({ start16: o, end16: o + name.length });
    }
  return { known, rest };
}

/** Sites of two disjoint candidate sets, in offset order. */
export function mergeSites(a: NameSites, b: NameSites): NameSites {
  const by = (x: Span, y: Span) => x.start16 - y.start16;
  return { strings: [...a.strings, ...b.strings].sort(by), members: [...a.members, ...b.members].sort(by) };
}

const lineLocal = (file: PyFile, c: NameCandidates) => c.lineLocal && file.linesLexIndependently;
const same = (o: number) => o;

/** Confirm one file's candidates: on its candidate lines when exact and clean, else on the whole file. */
export function confirmNames(syntax: Syntax, file: PyFile, name: string, c: NameCandidates): NameSites {
  if (lineLocal(file, c)) {
    const spans = lineSpans(file.text, [...c.strings, ...c.members]);
    const r = syntax.withRanges(file.text, spans, (root) => (root.hasError ? null : confirmed(root, name, c, same)));
    if (r) return r;
  }
  return file.tree((root) => confirmed(root, name, c, same));
}

/** Confirm the candidates of many files: the line-local ones in one document, the rest (or all, on error) each. */
export function confirmNamesBatch(
  syntax: Syntax,
  items: { file: PyFile; cand: NameCandidates }[],
  name: string,
): NameSites[] {
  const out: (NameSites | null)[] = items.map(() => null);
  const parts: string[] = [];
  const maps: { index: number; segments: { src: number; doc: number; end: number }[] }[] = [];
  let length = 0;
  items.forEach(({ file, cand }, index) => {
    if (!lineLocal(file, cand)) return;
    const segments = [];
    for (const sp of lineSpans(file.text, [...cand.strings, ...cand.members])) {
      let line = file.text.slice(sp.start16, sp.end16);
      if (!line.endsWith('\n') && !line.endsWith('\r')) line += '\n';
      segments.push({ src: sp.start16, doc: length, end: sp.end16 });
      parts.push(line);
      length += line.length;
    }
    maps.push({ index, segments });
  });
  if (maps.length > 1) {
    const doc = parts.join('');
    syntax.withRanges(doc, [{ start16: 0, end16: doc.length }], (root) => {
      if (root.hasError) return;
      for (const { index, segments } of maps) {
        const at = (o: number) => {
          const seg = segments.find((g) => g.src <= o && o < g.end)!;
          return seg.doc + (o - seg.src);
        };
        out[index] = confirmed(root, name, items[index]!.cand, at);
      }
    });
  }
  return out.map((r, i) => r ?? confirmNames(syntax, items[i]!.file, name, items[i]!.cand));
}
