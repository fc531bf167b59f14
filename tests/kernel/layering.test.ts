/**
 * docs/kernel.md §2.1: dependencies point one way. tugcode imports the kernel; `src/kernel/**` imports only
 * `src/kernel/**`, node built-ins and npm packages, and never SQLite or the CLI framework, so `tug` loads no
 * tugcode module. Checked on the sources (static and dynamic imports) with TypeScript's own pre-processor.
 */
import { describe, it, expect } from 'vitest';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const KERNEL = join(ROOT, 'src', 'kernel');
const FORBIDDEN_PACKAGES = ['better-sqlite3', 'commander', 'markdown-it', 'simple-git'];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : /\.c?ts$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

/** The kernel modules a file loads at run time (static and dynamic imports and re-exports, not `import type`). */
function runtimeImportsOf(file: string): string[] {
  const src = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ESNext, true);
  const out: string[] = [];
  const visit = (n: ts.Node): void => {
    if (ts.isImportDeclaration(n) && !n.importClause?.isTypeOnly) {
      const named = n.importClause?.namedBindings;
      const allTypes =
        !n.importClause?.name && named && ts.isNamedImports(named) && named.elements.every((e) => e.isTypeOnly);
      if (!allTypes || named.elements.length === 0) out.push((n.moduleSpecifier as ts.StringLiteral).text);
    } else if (ts.isExportDeclaration(n) && n.moduleSpecifier && !n.isTypeOnly) {
      out.push((n.moduleSpecifier as ts.StringLiteral).text);
    } else if (
      ts.isCallExpression(n) &&
      n.expression.kind === ts.SyntaxKind.ImportKeyword &&
      n.arguments[0] &&
      ts.isStringLiteral(n.arguments[0])
    ) {
      out.push(n.arguments[0].text);
    }
    ts.forEachChild(n, visit);
  };
  visit(src);
  return out
    .filter((s) => s.startsWith('.'))
    .map((s) => {
      const base = resolve(dirname(file), s)
        .replace(/\.js$/, '.ts')
        .replace(/\.cjs$/, '.cts');
      return existsSync(base) ? base : join(base.replace(/\.ts$/, ''), 'index.ts');
    });
}

/** Every cycle of the graph (one per strongly connected component of more than one module). */
function cyclesOf(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const connect = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const scc: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      scc.push(w);
    } while (w !== v);
    if (scc.length > 1) out.push(scc.map((f) => relative(KERNEL, f)).sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) connect(v);
  return out;
}

function importsOf(file: string): string[] {
  const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  return info.importedFiles.map((f) => f.fileName);
}

describe('kernel layering', () => {
  it('imports nothing of tugcode, SQLite or the CLI framework from src/kernel', () => {
    const files = sources(KERNEL);
    expect(files.length).toBeGreaterThan(50);
    const violations: string[] = [];
    for (const file of files) {
      for (const spec of importsOf(file)) {
        const where = relative(ROOT, file);
        if (spec.startsWith('.')) {
          const target = resolve(dirname(file), spec);
          if (!(target + sep).startsWith(KERNEL + sep)) violations.push(`${where} → ${spec}`);
        } else if (FORBIDDEN_PACKAGES.some((p) => spec === p || spec.startsWith(p + '/'))) {
          violations.push(`${where} → ${spec}`);
        }
      }
    }
    expect(violations).toEqual([]);
  });

  it('has no import cycle among the modules src/kernel loads at run time', () => {
    const graph = new Map(sources(KERNEL).map((f) => [f, runtimeImportsOf(f)]));
    expect(graph.get(join(KERNEL, 'session.ts'))).toContain(join(KERNEL, 'session-files.ts'));
    expect(cyclesOf(graph)).toEqual([]);
  });

  it('never blocks the event loop on a child process, and reads process.env only at its front door', () => {
    const blocking: string[] = [];
    const env: string[] = [];
    for (const file of sources(KERNEL)) {
      const where = relative(KERNEL, file);
      const code = readFileSync(file, 'utf8')
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .replace(/^\s*\/\/.*$/gm, '');
      if (/\b(spawnSync|execSync|execFileSync)\b/.test(code)) blocking.push(where);
      // cli/ is the front door; code-cache.cts is the process-wide loader that bin/tugcode.cjs shares.
      if (/\bprocess\.env\b/.test(code) && !where.startsWith('cli/') && where !== 'code-cache.cts') env.push(where);
    }
    expect(blocking).toEqual([]);
    expect(env).toEqual([]);
  });

  it('sees dynamic imports too (the check would catch a lazy import of tugcode)', () => {
    const probe = join(KERNEL, 'config.ts');
    expect(importsOf(probe)).toEqual(expect.arrayContaining(['./config-keys.js', './repo-layout.js']));
    const lazy = ts.preProcessFile("async function f() { await import('../state/index.js'); }", true, true);
    expect(lazy.importedFiles.map((f) => f.fileName)).toEqual(['../state/index.js']);
  });
});
