/**
 * The TypeScript backend's one-search rename (no prefix/suffix text) must give exactly the edits of the
 * §6.2 algorithm (prefix/suffix search plus re-export closure) whenever it is used. Checked for every
 * outline symbol of every TypeScript fixture and of part of the vendored e2e package.
 */
import { describe, it, expect } from 'vitest';
import { readdirSync, realpathSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { takeSnapshot, languageOf } from '../../src/kernel/snapshot.js';
import { WorkspaceFiles } from '../../src/kernel/workspace.js';
import { typescriptBackend } from '../../src/kernel/backends/typescript.js';

const HERE = dirname(fileURLToPath(import.meta.url));

/** Positions to try: outline items, or (everyIdentifier) the start of every identifier-like word. */
async function positions(
  be: any,
  file: string,
  text: string,
  everyIdentifier: boolean,
): Promise<{ pos: number; label: string }[]> {
  if (!everyIdentifier)
    return (await be.outline(file)).map((o: any) => ({ pos: o.name16.start16, label: o.qualified_name }));
  return [...text.matchAll(/[A-Za-z_$][\w$]*/g)].map((m) => ({ pos: m.index!, label: `${m[0]}@${m.index}` }));
}

async function compareAll(
  ws: string,
  only: (p: string) => boolean,
  everyIdentifier = false,
): Promise<{ symbols: number; fast: number }> {
  const snap = await takeSnapshot(ws);
  const files = new WorkspaceFiles(ws, snap);
  const texts = new Map<string, { text: string; version: string }>();
  for (const [p, m] of snap.files) {
    const f = files.tryFile(p);
    if (f) texts.set(p, { text: f.text, version: m.sha256 });
  }
  const be = (await typescriptBackend.open({ root: ws, texts })) as any;
  let symbols = 0;
  let fast = 0;
  try {
    const seen = new Set<string>();
    for (const file of [...snap.files.keys()].filter((p) => languageOf(p) === 'typescript' && only(p))) {
      for (const item of await positions(be, file, texts.get(file)!.text, everyIdentifier)) {
        let t;
        try {
          if (!be.identifierAt(file, item.pos)) continue;
          t = await be.resolveAt(file, item.pos, []);
        } catch {
          continue; // not renameable (keyword, lib symbol, …)
        }
        if (seen.has(`${t.file}:${t.offset16}`)) continue;
        seen.add(`${t.file}:${t.offset16}`);
        symbols++;
        const key = (es: any[]) =>
          es.map((e) => `${e.file}:${e.start}:${e.end}:${e.newText}:${e.refKind}:${e.jsxTag}`).sort();
        const one = be.renameInOneSearch(t, 'renamedX');
        const closure = await be.renameWithClosure(t, 'renamedX');
        if (one) {
          fast++;
          expect(key(one), `${file}::${item.label}`).toEqual(key(closure));
        }
      }
    }
  } finally {
    await be.close();
  }
  return { symbols, fast };
}

describe('one-search rename', () => {
  it('matches the closure algorithm for every identifier of every TypeScript fixture', async () => {
    const root = join(HERE, 'fixtures', 'typescript');
    let total = 0;
    let fast = 0;
    const walk = (d: string): string[] =>
      readdirSync(d).some((n) => n.endsWith('.ts') || n.endsWith('.tsx') || n.endsWith('.js'))
        ? [d]
        : readdirSync(d)
            .filter((n) => statSync(join(d, n)).isDirectory())
            .flatMap((n) => walk(join(d, n)));
    for (const ws of walk(root)) {
      const r = await compareAll(realpathSync(ws), () => true, true);
      total += r.symbols;
      fast += r.fast;
    }
    expect(total).toBeGreaterThan(20);
    expect(fast).toBeGreaterThan(total / 2);
  });

  it('matches the closure algorithm across the vendored package', async () => {
    const r = await compareAll(realpathSync(join(HERE, 'e2e', 'ts-lib')), (p) => /^src\/(schema|query)\//.test(p));
    expect(r.symbols).toBeGreaterThan(60);
    expect(r.fast).toBeGreaterThan(r.symbols / 2);
  });
});
