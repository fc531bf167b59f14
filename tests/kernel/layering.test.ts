/**
 * docs/kernel.md §2.1: dependencies point one way. tugcode imports the kernel; `src/kernel/**` imports only
 * `src/kernel/**`, node built-ins and npm packages, and never SQLite or the CLI framework, so `tug` loads no
 * tugcode module. Checked on the sources (static and dynamic imports) with TypeScript's own pre-processor.
 * The kernel names no host either (a host passes its names in: KernelOptions' HostOptions), and its light
 * entry (light.ts) loads no npm package and not node:crypto, so a host may import it on every start-up path.
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

/** The specifiers a file loads when it is evaluated: static imports and re-exports, not types or import(). */
function staticImportsOf(file: string): string[] {
  const src = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ESNext, true);
  const out: string[] = [];
  for (const st of src.statements) {
    if (ts.isImportDeclaration(st)) {
      const c = st.importClause;
      const named = c?.namedBindings && ts.isNamedImports(c.namedBindings) ? c.namedBindings.elements : undefined;
      const typeOnly =
        !!c && (c.isTypeOnly || (!c.name && !!named && named.length > 0 && named.every((e) => e.isTypeOnly)));
      if (!typeOnly) out.push((st.moduleSpecifier as ts.StringLiteral).text);
    } else if (ts.isExportDeclaration(st) && st.moduleSpecifier && !st.isTypeOnly) {
      const named = st.exportClause && ts.isNamedExports(st.exportClause) ? st.exportClause.elements : undefined;
      if (!(named && named.length > 0 && named.every((e) => e.isTypeOnly)))
        out.push((st.moduleSpecifier as ts.StringLiteral).text);
    }
  }
  return out;
}

/** Every module a file loads through static imports, itself included, and the packages among them. */
function staticClosure(entry: string): { files: string[]; packages: string[] } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    for (const spec of staticImportsOf(file)) {
      if (!spec.startsWith('.')) packages.add(spec);
      else {
        const base = resolve(dirname(file), spec)
          .replace(/\.js$/, '.ts')
          .replace(/\.cjs$/, '.cts');
        visit(existsSync(base) ? base : join(base.replace(/\.ts$/, ''), 'index.ts'));
      }
    }
  };
  visit(entry);
  return { files: [...files].map((f) => relative(KERNEL, f)).sort(), packages: [...packages].sort() };
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

  it('loads no npm package, no node:crypto and no backend or session code through its light entry', () => {
    const { files, packages } = staticClosure(join(KERNEL, 'light.ts'));
    // node:crypto is ~10 ms of a cold start in Node 20: a host's `state heartbeat` loads light.ts, not it.
    expect(packages.filter((p) => !p.startsWith('node:') || p === 'node:crypto')).toEqual([]);
    expect(files).toContain('opspec.ts');
    expect(files.filter((f) => /^(kernel|session|snapshot|exec|backends\/)/.test(f))).toEqual([]);
  });

  it("names no host: no host's environment variables, database or worktree directory in its code", () => {
    const named: string[] = [];
    for (const file of sources(KERNEL)) {
      const code = readFileSync(file, 'utf8')
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .replace(/^\s*\/\/.*$/gm, '');
      for (const m of code.matchAll(/TUGCODE_\w*|\btugcode\b|state\.db|\.tugtree/g))
        named.push(`${relative(KERNEL, file)}: ${m[0]}`);
    }
    expect(named).toEqual([]);
  });

  it('sees dynamic imports too (the check would catch a lazy import of tugcode)', () => {
    const probe = join(KERNEL, 'config.ts');
    expect(importsOf(probe)).toEqual(expect.arrayContaining(['./config-keys.js', './repo-layout.js']));
    const lazy = ts.preProcessFile("async function f() { await import('../state/index.js'); }", true, true);
    expect(lazy.importedFiles.map((f) => f.fileName)).toEqual(['../state/index.js']);
  });
});
