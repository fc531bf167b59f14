/**
 * Python renames through the library API with one warm pyright per workspace (docs/kernel.md §2.3, §6.3,
 * §6.5–6.6): the server stays warm and is synced after an apply, targets are followed to their definitions,
 * library symbols are refused, names are validated before any backend call, `--symbol` works on the
 * documentSymbol outline, and `aggressive` safety adds heuristic edits with warnings.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { openKernel, type Kernel } from '../../../src/kernel/index.js';
import { failure, kernelEnv, tempWs } from '../helpers.js';

const FILES = {
  'pkg/__init__.py': 'from .core import process_data as pd\n\n__all__ = ["pd"]\n',
  'pkg/core.py': [
    'def process_data(items):',
    '    """process_data doubles items."""',
    '    return [x * 2 for x in items]',
    '',
    '',
    'class Store:',
    '    def load(self, key):',
    '        return key',
    '',
    '    def load_all(self, keys):',
    '        return [self.load(k) for k in keys]',
    '',
    '',
    'def load(path):',
    '    return path',
    '',
    '',
    'def load(path, mode):  # a redefinition: the same symbol',
    '    return path, mode',
    '',
  ].join('\n'),
  'app.py': [
    'from pkg.core import process_data, Store',
    'import pkg.core as core',
    '',
    'print(process_data([1]), core.process_data([2]))',
    'store = Store()',
    'store.load("a")',
    'def lookup(s, name):',
    '    return getattr(s, "load")(name), s.load(name)',
    '',
  ].join('\n'),
};

let ws: string;
let k: Kernel;

beforeAll(async () => {
  ws = realpathSync(tempWs(FILES));
  k = await openKernel({ workspace: ws, env: kernelEnv() });
});
afterAll(async () => {
  await k?.close();
});

const pid = () => readFileSync(join(ws, '.tug', 'backends', 'pyright.pid'), 'utf8').split('\n')[0];

describe('python renames in one warm kernel', () => {
  it('renames across modules from an import site, following the alias to its definition', async () => {
    const p = await k.prepare({ op: 'rename-symbol', at: { file: 'app.py', line: 1, col: 22 }, to: 'transform_data' });
    expect(p.symbol).toMatchObject({
      name: 'process_data',
      kind: 'function',
      location: { file: 'pkg/core.py', line: 1, col: 5 },
      selector: 'pkg/core.py::process_data',
    });
    expect(p.edits.map((e) => `${e.file}:${e.line}:${e.col}`)).toEqual([
      'app.py:1:22',
      'app.py:4:7',
      'app.py:4:31',
      'pkg/__init__.py:1:19',
      'pkg/core.py:1:5',
    ]);
    expect(p.references.map((r) => r.kind)).toEqual(['import', 'call', 'call', 'import', 'definition']);
    // app.py is scanned (it holds the old name): its getattr call is reported.
    expect(p.warnings.map((w) => [w.code, w.location?.file, w.location?.line])).toEqual([
      ['DynamicAttributeAccess', 'app.py', 8],
    ]);
  });

  it('keeps pyright warm across operations and syncs it after an apply', async () => {
    const first = pid();
    const r = await k.run(
      { op: 'rename-symbol', symbol: 'pkg/core.py::process_data', to: 'transform_data' },
      { apply: true, verify: 'none' },
    );
    expect(r.files_written).toEqual(['app.py', 'pkg/__init__.py', 'pkg/core.py']);
    // The same server now sees the new name in the opened and the unopened files alike.
    const again = await k.prepare({ op: 'rename-symbol', at: { file: 'app.py', line: 4, col: 7 }, to: 'double_all' });
    expect(again.oldName).toBe('transform_data');
    expect(again.edits.map((e) => `${e.file}:${e.line}:${e.col}`)).toEqual([
      'app.py:1:22',
      'app.py:4:7',
      'app.py:4:33',
      'pkg/__init__.py:1:19',
      'pkg/core.py:1:5',
    ]);
    expect(pid()).toBe(first);
  });

  it('merges redefinitions into one symbol for --symbol, and selects methods by Class.method', async () => {
    const a = await k.prepare({ op: 'rename-symbol', symbol: 'pkg/core.py::load', to: 'read_file' });
    expect(a.edits.map((e) => e.line)).toEqual([14, 18]);
    const m = await k.prepare({ op: 'rename-symbol', symbol: 'pkg/core.py::Store.load', to: 'fetch' });
    expect(m.symbol).toMatchObject({ kind: 'method', qualified_name: 'Store.load', container: 'Store' });
    expect(m.edits.map((e) => `${e.file}:${e.line}`)).toEqual(['app.py:6', 'pkg/core.py:7', 'pkg/core.py:11']);
    expect(m.warnings.map((w) => [w.code, w.location?.line])).toEqual([
      ['DynamicAttributeAccess', 8],
      ['SkippedStringLiteral', 8],
      ['UnresolvedMemberReference', 8],
    ]);
  });

  it('adds heuristic edits with HeuristicFallback under aggressive safety, outside the reference list', async () => {
    const m = await k.prepare({
      op: 'rename-symbol',
      symbol: 'pkg/core.py::Store.load',
      to: 'fetch',
      safety: 'aggressive',
    });
    expect(m.edits.map((e) => `${e.file}:${e.line}:${e.col}`)).toEqual([
      'app.py:6:7',
      'app.py:8:24',
      'app.py:8:40',
      'pkg/core.py:7:9',
      'pkg/core.py:11:22',
    ]);
    expect(m.warnings.filter((w) => w.code === 'HeuristicFallback').map((w) => w.location?.col)).toEqual([24, 40]);
    expect(m.references).toHaveLength(3);
    expect(m.summary.edits_count).toBe(5);
  });

  it('refuses library symbols, positions without an identifier, unknown selectors and invalid names', async () => {
    const lib = await failure(k.prepare({ op: 'rename-symbol', at: { file: 'app.py', line: 4, col: 1 }, to: 'show' }));
    expect([lib.code, lib.details.reason]).toEqual(['NotRenameable', 'library_symbol']);
    const kw = await failure(k.prepare({ op: 'rename-symbol', at: { file: 'pkg/core.py', line: 1, col: 1 }, to: 'x' }));
    expect([kw.code, kw.details.reason]).toEqual(['SymbolNotFound', 'no_identifier']);
    const doc = await failure(
      k.prepare({ op: 'rename-symbol', at: { file: 'pkg/core.py', line: 2, col: 8 }, to: 'x' }),
    );
    expect(doc.code).toBe('SymbolNotFound');
    const sel = await failure(k.prepare({ op: 'rename-symbol', symbol: 'pkg/core.py::Store.missing', to: 'x' }));
    expect([sel.code, sel.details.reason]).toEqual(['SymbolNotFound', 'no_match']);
    for (const [to, reason] of [
      ['class', 'reserved_word'],
      ['1abc', 'not_an_identifier'],
      ['ﬁle', 'not_nfkc'],
    ] as const) {
      const e = await failure(k.prepare({ op: 'rename-symbol', at: { file: 'pkg/core.py', line: 14, col: 5 }, to }));
      expect([e.code, e.details.reason]).toEqual(['InvalidArgument', reason]);
    }
    const same = await failure(
      k.prepare({ op: 'rename-symbol', at: { file: 'pkg/core.py', line: 14, col: 5 }, to: 'load' }),
    );
    expect([same.code, same.details.reason]).toEqual(['InvalidArgument', 'unchanged']);
    expect(
      await k.prepare({ op: 'rename-symbol', at: { file: 'pkg/core.py', line: 14, col: 5 }, to: 'match' }),
    ).toBeTruthy();
  });

  it('refuses organize-imports for Python with the ruff fallback', async () => {
    const e = await failure(k.prepare({ op: 'organize-imports', file: 'app.py', mode: 'all' }));
    expect([e.code, e.details.reason, e.details.fallback]).toEqual([
      'UnsupportedOperation',
      'language',
      'ruff check --select I --fix app.py',
    ]);
  });
});

describe('a name pyright will not rename', () => {
  it('is NotRenameable (backend_refused) after the prepareRename retry, and the server keeps working', async () => {
    // An unresolved import binds `thing` to import declarations only: pyright's rename and prepareRename
    // both answer null, so the refusal comes from §6.3 step 2 (a retry after 500 ms, then NotRenameable).
    const dir = realpathSync(
      tempWs({ 'a.py': 'from missing_mod import thing\n\nprint(thing)\n', 'b.py': 'def helper():\n    return 1\n' }),
    );
    const kk = await openKernel({ workspace: dir, env: kernelEnv() });
    try {
      const e = await failure(kk.prepare({ op: 'rename-symbol', at: { file: 'a.py', line: 3, col: 7 }, to: 'other' }));
      expect([e.code, e.details.reason, e.details.backend_message]).toEqual([
        'NotRenameable',
        'backend_refused',
        'prepareRename returned null',
      ]);
      expect(e.location).toEqual({ file: 'a.py', line: 3, col: 7 });
      const ok = await kk.prepare({ op: 'rename-symbol', symbol: 'b.py::helper', to: 'assist' });
      expect(ok.summary.edits_count).toBe(1);
    } finally {
      await kk.close();
    }
  });
});
