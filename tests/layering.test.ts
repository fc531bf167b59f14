/**
 * Import direction (docs/architecture.md §1, issue 11 deliverable 4). The modules of src/, bottom to top:
 *
 *   kernel  →  contract, clock.ts, util  →  plan, config  →  state, git (the engines)
 *   →  gitflow, refactor, project (the flows)  →  ops  →  cli, commands, run, mcp, demo, board (the front doors)
 *
 * The kernel is an independent library (docs/kernel.md §2.1: nothing in src/kernel imports tugcode, checked
 * by tests/kernel/layering.test.ts), so it sits under everything: tugcode's modules may use its pure parts
 * (the op grammar, the [kernel] config keys, the repository-layout walk) as they would use a package.
 * `contract`, `clock.ts` and `util` are one unit (data shapes, errors, time), and so are `cli` and
 * `commands` (the command-line front door; `src/commands/refactor.ts` is where docs/kernel.md puts it).
 *
 * A file may import its own module and any module of a lower layer, never a higher layer. The two engines
 * `state` and `git` never import each other: callers gather git facts first, so no git runs inside a write
 * transaction, and the git engine knows nothing of steps or claims (the flows in `gitflow` join them). Checked on the sources with TypeScript's parser, so static imports, `export … from`,
 * dynamic `import()`, `require()` and `import('…')` types all count, type-only imports included (a type still
 * names the module it comes from); a check proves nothing TypeScript's pre-processor sees is missed.
 *
 * The kernel is reached only through its public entries (KERNEL_ENTRIES): `light.ts` (what loads no npm
 * package: the op grammar, config keys, repo layout, git environment, KernelError), `ids.ts` (the hashes,
 * which load node:crypto), `config-schema.ts` (the zod schema of `[kernel]`) and `index.ts` (the whole
 * library, which re-exports light.ts and ids.ts). index.ts loads
 * the kernel's sessions, snapshots and process runner, so outside src/kernel it is imported only with
 * `import()` or as types: no start-up path (`state heartbeat`, `state claim`) can load it by accident.
 *
 * Cycles: no file may reach itself through static imports. Type-only imports are left out there, since they
 * vanish at run time: each file is transpiled (as tsc emits it, `isolatedModules`) and the import
 * declarations of the output are read, so `import type`, `export type` and imports used only as types drop
 * out exactly as they do in dist/.
 */
import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SRC = join(ROOT, 'src');

/** Layer of each top-level module of src/ (a directory, or a file directly under src/), bottom first. */
const LAYERS: string[][] = [
  ['kernel'],
  ['contract', 'clock.ts', 'util'],
  ['plan', 'config'],
  ['state', 'git'],
  ['gitflow', 'refactor', 'project'],
  ['ops'],
  ['cli', 'commands', 'run', 'mcp', 'demo', 'board'],
];
const LAYER_OF = new Map(LAYERS.flatMap((mods, i) => mods.map((m) => [m, i] as const)));
/** Modules that are one unit: imports between them are free. */
const UNIT: Record<string, string> = { 'clock.ts': 'contract', util: 'contract', commands: 'cli' };
const unitOf = (m: string): string => UNIT[m] ?? m;
/** Imports forbidden within one layer (`from → to`). */
const SAME_LAYER_FORBIDDEN = new Set(['state→git', 'git→state']);
/** The files of src/kernel that a module outside it may import (see the header). */
const KERNEL_ENTRIES = ['index.ts', 'light.ts', 'ids.ts', 'config-schema.ts'];
/** The entry that loads the whole kernel: imported lazily or as types only. */
const KERNEL_LAZY_ENTRY = 'index.ts';

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) =>
      e.isDirectory()
        ? sources(join(dir, e.name))
        : /\.c?ts$/.test(e.name) && !e.name.endsWith('.d.ts')
          ? [join(dir, e.name)]
          : [],
    )
    .sort();
}

const rel = (file: string) => relative(ROOT, file).split(sep).join('/');

/** The top-level module of a path under src/ (`src/gitflow/commit.ts` → `gitflow`, `src/clock.ts` → `clock.ts`). */
function moduleOf(file: string): string {
  return relative(SRC, file).split(sep)[0]!;
}

/** The source file a relative specifier names (`./x.js` → `x.ts`, `./x.cjs` → `x.cts`), if it exists. */
function resolveSpec(from: string, spec: string): string | undefined {
  const base = resolve(dirname(from), spec);
  const candidates = [
    base.replace(/\.js$/, '.ts'),
    base.replace(/\.cjs$/, '.cts'),
    base.replace(/\.mjs$/, '.mts'),
    base,
    base + '.ts',
    join(base, 'index.ts'),
  ];
  return candidates.find((c) => /\.c?ts$/.test(c) && existsSync(c));
}

type ImportKind = 'static' | 'type' | 'dynamic' | 'require';

/**
 * Every import of a file with its kind: `import`/`export … from` (`type` when type-only), `import x =
 * require()`, dynamic `import()`, `require()` and `import('…')` types.
 */
function allImports(text: string, fileName: string): { spec: string; kind: ImportKind }[] {
  const sf = ts.createSourceFile(fileName, text, ts.ScriptTarget.ES2022, true);
  const out: { spec: string; kind: ImportKind }[] = [];
  const lit = (e: ts.Node | undefined) => (e && ts.isStringLiteralLike(e) ? e.text : undefined);
  const visit = (n: ts.Node) => {
    if (ts.isImportDeclaration(n)) {
      const c = n.importClause;
      const named = c?.namedBindings && ts.isNamedImports(c.namedBindings) ? c.namedBindings.elements : undefined;
      const typeOnly =
        !!c && (c.isTypeOnly || (!c.name && !!named && named.length > 0 && named.every((e) => e.isTypeOnly)));
      const spec = lit(n.moduleSpecifier);
      if (spec) out.push({ spec, kind: typeOnly ? 'type' : 'static' });
    } else if (ts.isExportDeclaration(n)) {
      const spec = lit(n.moduleSpecifier);
      if (spec) out.push({ spec, kind: n.isTypeOnly ? 'type' : 'static' });
    } else if (ts.isImportEqualsDeclaration(n) && ts.isExternalModuleReference(n.moduleReference)) {
      const spec = lit(n.moduleReference.expression);
      if (spec) out.push({ spec, kind: n.isTypeOnly ? 'type' : 'require' });
    } else if (ts.isCallExpression(n)) {
      const spec = lit(n.arguments[0]);
      if (spec && n.expression.kind === ts.SyntaxKind.ImportKeyword) out.push({ spec, kind: 'dynamic' });
      else if (spec && ts.isIdentifier(n.expression) && n.expression.text === 'require')
        out.push({ spec, kind: 'require' });
    } else if (ts.isImportTypeNode(n)) {
      const spec = ts.isLiteralTypeNode(n.argument) ? lit(n.argument.literal) : undefined;
      if (spec) out.push({ spec, kind: 'type' });
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

/**
 * A file of src/ with its imports (allImports), parsed once: the layer check, the kernel-entry check and the
 * pre-processor comparison read the same 348 files, and a parse of them all costs ~0.5 s of CPU.
 */
const parsed = new Map<string, { text: string; imports: { spec: string; kind: ImportKind }[] }>();
function sourceOf(file: string): { text: string; imports: { spec: string; kind: ImportKind }[] } {
  let s = parsed.get(file);
  if (!s) {
    const text = readFileSync(file, 'utf8');
    s = { text, imports: allImports(text, file) };
    parsed.set(file, s);
  }
  return s;
}

/** The static imports left in the emitted JavaScript (type-only imports are gone). */
function runtimeStaticImports(text: string, fileName: string): string[] {
  const js = ts.transpileModule(text, {
    fileName,
    compilerOptions: {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      isolatedModules: true,
      esModuleInterop: true,
    },
  }).outputText;
  const sf = ts.createSourceFile(
    fileName.replace(/\.c?ts$/, '.js'),
    js,
    ts.ScriptTarget.ES2022,
    false,
    ts.ScriptKind.JS,
  );
  const out: string[] = [];
  for (const st of sf.statements) {
    if ((ts.isImportDeclaration(st) || ts.isExportDeclaration(st)) && st.moduleSpecifier) {
      if (ts.isStringLiteral(st.moduleSpecifier)) out.push(st.moduleSpecifier.text);
    }
    // `import x = require('…')` in a .cts file
    if (ts.isImportEqualsDeclaration(st) && ts.isExternalModuleReference(st.moduleReference)) {
      const e = st.moduleReference.expression;
      if (ts.isStringLiteral(e)) out.push(e.text);
    }
  }
  return out;
}

/** Layer violations of one file, one line per imported specifier, with how it is imported. */
function layerViolations(file: string): string[] {
  const from = moduleOf(file);
  const fromLayer = LAYER_OF.get(from);
  const kinds = new Map<string, Set<ImportKind>>();
  for (const { spec, kind } of sourceOf(file).imports) {
    if (!spec.startsWith('.')) continue;
    kinds.set(spec, (kinds.get(spec) ?? new Set()).add(kind));
  }
  const out: string[] = [];
  for (const [spec, ks] of kinds) {
    const abs = resolveSpec(file, spec) ?? resolve(dirname(file), spec);
    if (!(abs + sep).startsWith(SRC + sep)) continue; // outside src/: not a tugcode module
    const to = moduleOf(abs);
    const toLayer = LAYER_OF.get(to);
    if (unitOf(to) === unitOf(from) || fromLayer === undefined || toLayer === undefined) continue; // unknown: the coverage check
    const how = [...ks].sort().join('+');
    if (toLayer > fromLayer)
      out.push(`${rel(file)} → ${spec} [${how}]  (${from}, layer ${fromLayer}, imports ${to}, layer ${toLayer})`);
    else if (toLayer === fromLayer && SAME_LAYER_FORBIDDEN.has(`${from}→${to}`))
      out.push(`${rel(file)} → ${spec} [${how}]  (${from} imports ${to}, same layer ${fromLayer})`);
  }
  return out;
}

/** Imports of kernel modules that are not public entries, or that load the whole kernel eagerly. */
function kernelEntryViolations(file: string): string[] {
  if (moduleOf(file) === 'kernel') return [];
  const kernel = join(SRC, 'kernel');
  const out: string[] = [];
  for (const { spec, kind } of sourceOf(file).imports) {
    if (!spec.startsWith('.')) continue;
    const abs = resolveSpec(file, spec) ?? resolve(dirname(file), spec);
    if (!(abs + sep).startsWith(kernel + sep)) continue;
    const entry = relative(kernel, abs).split(sep).join('/');
    if (!KERNEL_ENTRIES.includes(entry))
      out.push(`${rel(file)} → ${spec} [${kind}]  (not a kernel entry: ${KERNEL_ENTRIES.join(', ')})`);
    else if (entry === KERNEL_LAZY_ENTRY && (kind === 'static' || kind === 'require'))
      out.push(`${rel(file)} → ${spec} [${kind}]  (the whole kernel: import() it, or use kernel/light.ts)`);
  }
  return out;
}

/** File-level runtime import graph of src/. */
function importGraph(files: string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const targets = runtimeStaticImports(readFileSync(file, 'utf8'), file)
      .filter((s) => s.startsWith('.'))
      .map((s) => resolveSpec(file, s))
      .filter((t): t is string => t !== undefined && (t + sep).startsWith(SRC + sep));
    graph.set(file, [...new Set(targets)].sort());
  }
  return graph;
}

/** Strongly connected components with more than one file (or a file importing itself), Tarjan's. */
function cyclicComponents(graph: Map<string, string[]>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const out: string[][] = [];
  const visit = (v: string) => {
    idx.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const comp: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        comp.push(w);
      } while (w !== v);
      if (comp.length > 1 || (graph.get(v) ?? []).includes(v)) out.push(comp.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!idx.has(v)) visit(v);
  return out.sort((a, b) => a[0]!.localeCompare(b[0]!));
}

/** One shortest cycle through the first file of a component (for the message). */
function cycleThrough(graph: Map<string, string[]>, comp: string[]): string[] {
  const inComp = new Set(comp);
  const start = comp[0]!;
  const prev = new Map<string, string>();
  const queue = [start];
  const seen = new Set<string>();
  while (queue.length > 0) {
    const v = queue.shift()!;
    for (const w of graph.get(v) ?? []) {
      if (!inComp.has(w)) continue;
      if (w === start) {
        const path = [v];
        while (path[0] !== start) path.unshift(prev.get(path[0]!)!);
        return [...path, start];
      }
      if (!seen.has(w)) {
        seen.add(w);
        prev.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start];
}

describe('import direction (docs/architecture.md §1)', () => {
  const files = sources(SRC);

  it('puts every top-level module of src/ in a layer', () => {
    expect(files.length).toBeGreaterThan(100);
    const unassigned = [...new Set(files.map(moduleOf))].filter((m) => !LAYER_OF.has(m)).sort();
    expect(unassigned, `modules of src/ with no layer: ${unassigned.join(', ')}`).toEqual([]);
  });

  it('imports only its own module or a lower layer', () => {
    const violations = files.flatMap(layerViolations);
    expect(
      violations,
      `${violations.length} import(s) against the layers (bottom → top: ${LAYERS.map((l) => l.join(', ')).join(' → ')}):\n` +
        violations.map((v) => `  ${v}`).join('\n') +
        '\n',
    ).toEqual([]);
  });

  it('reaches the kernel only through its public entries, and loads the whole kernel only lazily', () => {
    const violations = files.flatMap(kernelEntryViolations);
    expect(
      violations,
      `${violations.length} import(s) of the kernel past its entries:\n` +
        violations.map((v) => `  ${v}`).join('\n') +
        '\n',
    ).toEqual([]);
    for (const entry of KERNEL_ENTRIES) expect(existsSync(join(SRC, 'kernel', entry)), entry).toBe(true);
  });

  it('has no import cycles between files (type-only imports aside)', () => {
    const graph = importGraph(files);
    const comps = cyclicComponents(graph);
    const lines = comps.map(
      (c) => `  ${c.length} file(s): ${c.map(rel).join(', ')}\n    e.g. ${cycleThrough(graph, c).map(rel).join(' → ')}`,
    );
    expect(lines, `${comps.length} import cycle(s):\n${lines.join('\n')}\n`).toEqual([]);
  });
});

describe('the checker itself', () => {
  it('keeps value imports and re-exports, drops type-only ones', () => {
    const text = [
      "import type { A } from './a.js';",
      "import { type B } from './b.js';",
      "import { C } from './c.js';",
      "import { D } from './d.js';",
      "export type { E } from './e.js';",
      "export { F } from './f.js';",
      "import './g.js';",
      'export const x: D = C;',
      "export async function lazy() { return import('./h.js'); }",
    ].join('\n');
    expect(runtimeStaticImports(text, 'probe.ts')).toEqual(['./c.js', './f.js', './g.js']);
  });

  it('finds a cycle and a path through it', () => {
    const g = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a', 'd']],
      ['d', []],
      ['e', ['e']],
    ]);
    expect(cyclicComponents(g)).toEqual([['a', 'b', 'c'], ['e']]);
    expect(cycleThrough(g, ['a', 'b', 'c'])).toEqual(['a', 'b', 'c', 'a']);
  });

  it('sees every kind of import for the layer check', () => {
    const text = [
      "import type { A } from './a.js';",
      "import { type B } from './b.js';",
      "import { C } from './c.js';",
      "export * from './d.js';",
      "const m = require('./e.js');",
      "type T = typeof import('./f.js');",
      "async function g() { await import('./g.js'); }",
    ].join('\n');
    expect(allImports(text, 'probe.ts')).toEqual([
      { spec: './a.js', kind: 'type' },
      { spec: './b.js', kind: 'type' },
      { spec: './c.js', kind: 'static' },
      { spec: './d.js', kind: 'static' },
      { spec: './e.js', kind: 'require' },
      { spec: './f.js', kind: 'type' },
      { spec: './g.js', kind: 'dynamic' },
    ]);
  });

  it("misses nothing TypeScript's own pre-processor finds in src/", () => {
    const missed = sources(SRC).flatMap((file) => {
      const { text, imports } = sourceOf(file);
      const mine = new Set(imports.map((i) => i.spec));
      return ts
        .preProcessFile(text, true, true)
        .importedFiles.map((f) => f.fileName)
        .filter((spec) => !mine.has(spec))
        .map((spec) => `${rel(file)} → ${spec}`);
    });
    expect(missed).toEqual([]);
  });
});
