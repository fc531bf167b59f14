/**
 * Comments and docs cite the project's own documents (the list is in docs/architecture.md), never the
 * specification or style guide they were first written from, which do not ship: a maintainer who clones
 * the project must be able to follow every citation. A citation of a doc names a file of docs/ and, with a
 * section sign, a section that file has (a heading numbered that way); an `item`, `step` or `rule` after it
 * names a numbered entry of that section. Inside docs/, a bare section number cites the same document;
 * inside src/kernel and tests/kernel, it cites docs/kernel.md.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';

const SCANNED = ['src', 'tests', 'docs', 'skills', 'agents', 'scripts', 'bench', 'README.md'];
/** Data, not prose: plan corpora, kernel fixture workspaces and goldens, the vendored e2e package. */
const SKIPPED = ['tests/fixtures', 'tests/kernel/fixtures', 'tests/kernel/golden', 'tests/kernel/e2e', 'node_modules'];
const TEXT = /\.(c?[jt]s|m[jt]s|md|json|sh|toml)$/;

function listFiles(rel: string): string[] {
  if (SKIPPED.some((s) => rel === s || rel.endsWith(`/${s}`))) return [];
  const abs = join(ROOT, rel);
  if (!existsSync(abs)) return [];
  if (TEXT.test(rel) && !readdirSafe(abs)) return [rel];
  return (readdirSafe(abs) ?? []).flatMap((e) => listFiles(`${rel}/${e}`));
}
function readdirSafe(abs: string): string[] | null {
  try {
    return readdirSync(abs);
  } catch {
    return null;
  }
}

const FILES = SCANNED.flatMap(listFiles).sort();

// The forms a citation of an outside document takes, built from parts so this file cites nothing itself.
const SIGN = '§';
const OUTSIDE: [string, RegExp][] = [
  ['a specification file', new RegExp(String.raw`(?<![\w./-])\d\d-[a-z][a-z-]*\.md`)],
  ['a specification section', new RegExp(String.raw`(?<![\w./-])0\d(?:-[a-z][a-z-]*)? ?${SIGN}`)],
  ['the style guide', new RegExp(String.raw`(?<![\w-])style\.md`)],
  ['a seed document or research note', new RegExp(String.raw`\bseed 00[1-9]\b|upstream-${'tug'}state`)],
];

const NUM = String.raw`\d+(?:\.\d+)*`;
const LIST = String.raw`${SIGN} ?${NUM}(?: ?[–-] ?${SIGN}?${NUM})?(?: ?(?:,|and) ?${SIGN} ?${NUM}(?: ?[–-] ?${SIGN}?${NUM})?)*`;
const ENTRY = String.raw`(?: (?:items?|steps?|rules?|setup) (${NUM})(?:[–-](${NUM}))?)?`;
/**
 * `docs/state.md`, `docs/state.md §3.6`, `docs/run.md §1 item 4.7`, `docs/kernel.md §7.3–§7.4`; not a path
 * in a string literal (`'docs/plan.md'`, test data) or under another directory (`../docs/x.md`).
 */
const DOC_CITE = new RegExp(
  String.raw`(?<![\w./'"-])docs/([A-Za-z0-9_-]+\.md)(#[a-z0-9-]+)?(?: ?(${LIST})${ENTRY})?`,
  'g',
);
/** A bare section citation (inside a doc: that doc; inside the kernel: docs/kernel.md). */
const BARE = new RegExp(String.raw`(${LIST})${ENTRY}`, 'g');

interface Section {
  level: number;
  body: string;
}
interface Doc {
  sections: Map<string, Section>;
  anchors: Set<string>;
}
const docs = new Map<string, Doc | null>();

/** Numbered headings (`## 4. Commands`, `### 3.6 Attempts…`) with their bodies, and GitHub's anchors. */
function doc(name: string): Doc | null {
  if (docs.has(name)) return docs.get(name)!;
  const path = join(ROOT, 'docs', name);
  if (!existsSync(path)) {
    docs.set(name, null);
    return null;
  }
  const sections = new Map<string, Section>();
  const anchors = new Set<string>();
  const open: { num: string; level: number; lines: string[] }[] = [];
  let fence = false;
  const close = (level: number) => {
    while (open.length && open[open.length - 1]!.level >= level) {
      const s = open.pop()!;
      sections.set(s.num, { level: s.level, body: s.lines.join('\n') });
    }
  };
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fence = !fence;
    const h = fence ? null : /^(#{1,6})\s+(.*)$/.exec(line);
    if (h) {
      const level = h[1]!.length;
      close(level);
      anchors.add(
        h[2]!
          .trim()
          .toLowerCase()
          .replace(/[^\p{L}\p{N}\s_-]/gu, '')
          .replace(/\s/g, '-'),
      );
      const num = new RegExp(String.raw`^(${NUM})\.?\s`).exec(h[2]!);
      if (num) open.push({ num: num[1]!, level, lines: [] });
      continue;
    }
    for (const s of open) s.lines.push(line);
  }
  close(0);
  const d = { sections, anchors };
  docs.set(name, d);
  return d;
}

/** What is wrong with `§list [entry a[–b]]` as a citation of `name`, or null. */
function checkSections(name: string, list: string, entryA?: string, entryB?: string): string | null {
  const d = doc(name);
  if (!d) return `docs/${name} does not exist`;
  const nums = list.match(new RegExp(NUM, 'g')) ?? [];
  for (const n of nums) if (!d.sections.has(n)) return `docs/${name} has no section ${SIGN}${n}`;
  if (entryA !== undefined) {
    const body = d.sections.get(nums[0]!)!.body;
    for (const e of [entryA, entryB].filter((x): x is string => x !== undefined)) {
      const entry = new RegExp(String.raw`^\s*(?:[-*]\s+)?(?:\*\*)?${e.replace(/\./g, '\\.')}[.)]?\s`, 'm');
      if (!entry.test(body)) return `docs/${name} ${SIGN}${nums[0]} has no numbered entry ${e}`;
    }
  }
  return null;
}

describe('citations', () => {
  it('finds the documents and the files to check', () => {
    expect(FILES.length).toBeGreaterThan(300);
    for (const d of ['architecture.md', 'state.md', 'run.md', 'output.md', 'git.md', 'plan-format.md', 'kernel.md'])
      expect(doc(d), d).not.toBeNull();
  });

  it('cites nothing outside the repository (the specification, its style guide, the seed documents)', () => {
    const problems: string[] = [];
    for (const f of FILES) {
      readFileSync(join(ROOT, f), 'utf8')
        .split('\n')
        .forEach((line, i) => {
          for (const [what, re] of OUTSIDE) {
            const m = re.exec(line);
            if (m) problems.push(`${f}:${i + 1}: cites ${what} (${m[0]}): cite the docs/ section that covers it`);
          }
        });
    }
    expect(problems).toEqual([]);
  });

  it('cites only docs, sections and numbered entries that exist', () => {
    const problems: string[] = [];
    for (const f of FILES) {
      const self = f.startsWith('docs/') && f.endsWith('.md') ? f.slice('docs/'.length) : null;
      const kernel = f.startsWith('src/kernel/') || f.startsWith('tests/kernel/');
      readFileSync(join(ROOT, f), 'utf8')
        .split('\n')
        .forEach((line, i) => {
          const at = `${f}:${i + 1}`;
          let rest = line;
          for (const m of line.matchAll(DOC_CITE)) {
            const [whole, name, anchor, list, a, b] = m;
            const d = doc(name!);
            const problem = !d
              ? `docs/${name} does not exist`
              : anchor && !d.anchors.has(anchor.slice(1))
                ? `docs/${name} has no heading for the anchor ${anchor}`
                : list
                  ? checkSections(name!, list, a, b)
                  : null;
            if (problem) problems.push(`${at}: ${whole}: ${problem}`);
            rest = rest.replace(whole, '');
          }
          const bareDoc = self ?? (kernel ? 'kernel.md' : null);
          if (!bareDoc) return;
          for (const m of rest.matchAll(BARE)) {
            const problem = checkSections(bareDoc, m[1]!, m[2], m[3]);
            if (problem) problems.push(`${at}: ${m[0]}: ${problem}`);
          }
        });
    }
    expect(problems).toEqual([]);
  });
});
