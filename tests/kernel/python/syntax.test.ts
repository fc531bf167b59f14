/**
 * Python syntax on tree-sitter trees (docs/kernel.md §6.5): identifiers at a position (f-string fields
 * included, strings and comments excluded), declaration and reference kinds, classes with bases and
 * methods, and UTF-16 positions on non-ASCII, CRLF and BOM text.
 */
import { beforeAll, describe, it, expect } from 'vitest';
import { readFileSync } from 'node:fs';
import { PyFile } from '../../../src/kernel/scans/python.js';
import { quickRefKind } from '../../../src/kernel/scans/python-scan.js';
import { loadSyntax, type Syntax } from '../../../src/kernel/scans/tree-sitter.js';
import { offsetOf } from '../helpers.js';
import { decodeFile, LineIndex } from '../../../src/kernel/patch/positions.js';
import { fixtureFiles } from './fixture-files.js';

let syntax: Syntax;
beforeAll(async () => {
  syntax = await loadSyntax('python');
});
const py = (src: string) => new PyFile(syntax, src);

const at = offsetOf;

describe('identifiers', () => {
  const src =
    'x = f"{value!r:>{width}} {{value}}"  # value in a comment\ny = "value"\ndef g(a, *b, c=1, **d): return a\n';

  it('finds names inside f-string replacement fields, not in literal text, strings or comments', () => {
    const m = py(src);
    expect(m.identifierAt(at(src, 'value'))?.text).toBe('value');
    expect(m.identifierAt(at(src, 'width'))?.text).toBe('width');
    expect(m.identifierAt(at(src, 'value', 1))).toBeNull(); // {{value}} is literal text
    expect(m.identifierAt(at(src, 'value', 2))).toBeNull(); // comment
    expect(m.identifierAt(at(src, 'value', 3))).toBeNull(); // plain string
  });

  it('prefers the identifier starting at the offset, accepts one ending there, and refuses keywords', () => {
    const m = py(src);
    expect(m.identifierAt(at(src, 'g('))?.text).toBe('g');
    expect(m.identifierAt(at(src, 'g(') + 1)?.text).toBe('g'); // right after `g`, on the `(`
    expect(m.identifierAt(at(src, '(a') + 1)?.text).toBe('a');
    expect(m.identifierAt(at(src, 'def'))).toBeNull();
    expect(m.identifierAt(at(src, 'return'))).toBeNull();
    expect(m.identifierAt(at(src, ': return') + 1)).toBeNull(); // blank between `:` and `return`
  });

  it('treats soft keywords and non-ASCII names as identifiers', () => {
    const s = 'match = 1\ncafé = match\ntype = café\n';
    const mm = py(s);
    expect(mm.identifierAt(0)?.text).toBe('match');
    expect(mm.identifierAt(at(s, 'café'))).toEqual({ start16: at(s, 'café'), end16: at(s, 'café') + 4, text: 'café' });
    expect(mm.identifierAt(at(s, 'type'))?.text).toBe('type');
  });
});

describe('positions', () => {
  it('gives UTF-16 offsets on a CRLF file with a BOM, emoji and CJK text that convert to the golden bytes', () => {
    const path = 'tests/kernel/fixtures/python/encoding/crlf_bom_unicode/text.py';
    const f = decodeFile('text.py', readFileSync(path))!;
    expect(f.bom).toBe(3);
    const idx = new LineIndex(f);
    const m = new PyFile(syntax, f.text);
    // The golden edits of encoding_crlf_bom_unicode: bytes 72 (def) and 138 (call after "🎉").
    for (const [byte, kind] of [
      [72, 'function'],
      [138, 'call'],
    ] as const) {
      const o16 = idx.toUtf16(byte)!;
      const id = m.identifierAt(o16)!;
      expect(id.text).toBe('make_message');
      expect([idx.toByte(id.start16), idx.toByte(id.end16)]).toEqual([byte, byte + 12]);
      expect(kind === 'function' ? m.declKind(id.start16) : m.refKind(id.start16, id.end16)).toBe(kind);
    }
    // The mention in the trailing comment (after CJK text) is no identifier; the emoji f-string field is.
    expect(m.identifierAt(f.text.lastIndexOf('make_message'))).toBeNull();
    expect(m.identifierAt(f.text.indexOf('{name}') + 1)?.text).toBe('name');
  });
});

describe('kinds', () => {
  const src = [
    'import os as operating',
    'from pkg import thing, other as alias',
    'class Base(mod.Root, Generic[T], metaclass=Meta):',
    '    limit: int = 3',
    '    count = 0',
    '    def run(self, job, *, retries=2):',
    '        self.state = job',
    '        def inner(): return job',
    '        return inner()',
    '',
    'async def main(argv):',
    '    return Base().run(argv)',
    '',
    '@decorate',
    'def wrapped(): pass',
    'total = main(1)',
    'pick = lambda item, key=None: item',
    '__all__ = ["main"]',
    '@pkg.deco',
    'class Tagged: pass',
  ].join('\n');

  it('classifies declarations by their syntactic context', () => {
    const m = py(src);
    expect(m.declKind(at(src, 'operating'))).toBe('import');
    expect(m.declKind(at(src, 'alias'))).toBe('import');
    expect(m.declKind(at(src, 'Base'))).toBe('class');
    expect(m.declKind(at(src, 'limit'))).toBe('property');
    expect(m.declKind(at(src, 'count'))).toBe('property');
    expect(m.declKind(at(src, 'run'))).toBe('method');
    expect(m.declKind(at(src, 'job'))).toBe('parameter');
    expect(m.declKind(at(src, 'retries'))).toBe('parameter');
    expect(m.declKind(at(src, 'state'))).toBe('property');
    expect(m.declKind(at(src, 'inner'))).toBe('function');
    expect(m.declKind(at(src, 'main'))).toBe('function');
    expect(m.declKind(at(src, 'total'))).toBe('variable');
    expect(m.declKind(at(src, 'item'))).toBe('parameter');
    expect(m.declKind(at(src, 'key'))).toBe('parameter');
    expect(m.declKind(at(src, 'None'))).toBe('variable');
  });

  it('classifies references as import, call, attribute or plain reference', () => {
    const m = py(src);
    expect(m.treeRefKind(at(src, 'thing'))).toBe('import');
    expect(m.treeRefKind(at(src, 'Base()'))).toBe('call');
    expect(m.treeRefKind(at(src, '.run') + 1)).toBe('call');
    expect(m.treeRefKind(at(src, 'decorate'))).toBe('call');
    expect(m.treeRefKind(at(src, 'deco\n'))).toBe('call');
    expect(m.treeRefKind(at(src, 'pkg.deco'))).toBe('reference');
    expect(m.treeRefKind(at(src, 'argv)'))).toBe('reference');
    expect(m.treeRefKind(at(src, '"main"') + 1)).toBe('import');
    expect(m.treeRefKind(at(src, 'state'))).toBe('attribute');
    expect(m.treeRefKind(at(src, 'Root'))).toBe('attribute');
  });

  it('classifies continuation lines and multi-line __all__ entries from the tree', () => {
    const multi =
      src +
      '\nfrom pkg import (\n    thing,\n    main,\n)\nvalue = combine(\n    main,\n    total)\n__all__ = [\n    "total",\n]\n';
    const m = py(multi);
    const last = (s: string) => multi.lastIndexOf(s);
    expect(quickRefKind(multi, last('thing'), last('thing') + 5)).toBeNull();
    expect(m.refKind(last('thing'), last('thing') + 5)).toBe('import');
    expect(m.refKind(at(multi, 'main,\n    total'), at(multi, 'main,\n    total') + 4)).toBe('reference');
    expect(m.refKind(last('"total"') + 1, last('"total"') + 6)).toBe('import');
  });

  it('lists classes with their base names (keyword arguments skipped) and methods of their own scope', () => {
    const m = py(src + '\nclass Guarded(Base):\n    if DEBUG:\n        def run(self): pass\n');
    expect(m.classes.map((c) => c.name)).toEqual(['Base', 'Tagged', 'Guarded']);
    const c = m.classes[0]!;
    expect(c.bases.map((b) => b.text)).toEqual(['Root', 'Generic']);
    expect([...c.methods.keys()]).toEqual(['run']);
    expect(m.classOfMethod(at(src, 'run'))?.name).toBe('Base');
    expect(m.classOfMethod(at(src, 'inner'))).toBeNull();
    expect([...m.classes[2]!.methods.keys()]).toEqual(['run']);
    expect(m.classAt(at(src, 'Tagged'))?.bases).toEqual([]);
  });
});

describe('the text-only reference kind', () => {
  it('agrees with the tree wherever it answers, on every identifier of every Python fixture', () => {
    let answered = 0;
    for (const path of fixtureFiles()) {
      const f = decodeFile(path, readFileSync(path));
      if (!f) continue;
      const m = new PyFile(syntax, f.text);
      // Edit spans that are not declarations: every identifier but def and class names.
      const ids = m.tree((root) =>
        root
          .descendantsOfType('identifier')
          .filter((n) => !/^(?:function|class)_definition$/.test(n!.parent?.type ?? ''))
          .map((n) => ({ start: n!.startIndex, end: n!.endIndex, text: n!.text })),
      );
      for (const id of ids) {
        const q = quickRefKind(f.text, id.start, id.end);
        if (q === null) continue;
        answered++;
        expect([path, id.start, id.text, q]).toEqual([path, id.start, id.text, m.treeRefKind(id.start)]);
      }
    }
    expect(answered).toBeGreaterThan(100);
  });

  it('is not used on a file whose triple-quoted f-string may start a line with `from`', () => {
    const s = 'name = 1\nmsg = f"""\nfrom {name} import x\n"""\n';
    const m = py(s);
    const o = s.lastIndexOf('name');
    expect(quickRefKind(s, o, o + 4)).toBe('import'); // the text alone is fooled
    expect(m.refKind(o, o + 4)).toBe('reference');
  });
});

describe('sole declarations (pyright is not asked for their definition)', () => {
  const sole = (src: string, needle: string, nth = 0) => py(src).soleDeclaration(at(src, needle, nth));
  it('accepts a def or class that is the only binding of its name in its scope', () => {
    const src = 'class Box:\n    def size(self):\n        return 1\n\n\ndef make():\n    return Box().size()\n';
    expect(sole(src, 'Box')).toBe(true);
    expect(sole(src, 'size')).toBe(true);
    expect(sole(src, 'make')).toBe(true);
  });
  it('asks whenever the name has another binding, an overload, or is not a declaration name', () => {
    expect(sole('def f():\n    pass\n\n\ndef f(x):\n    pass\n', 'f():')).toBe(false);
    expect(sole('def f():\n    pass\n\n\nf = wrap(f)\n', 'f():')).toBe(false);
    expect(sole('from m import f\n\n\ndef f():\n    pass\n', 'f():')).toBe(false);
    expect(sole('import m as f\n\n\ndef f():\n    pass\n', 'f():')).toBe(false);
    expect(sole('@overload\ndef f(x: int) -> int: ...\n', 'f(')).toBe(false);
    expect(sole('def f():\n    pass\n\n\nf()\n', 'f()\n')).toBe(false); // a use, not the declaration
    expect(sole('x = 1\n', 'x')).toBe(false); // only def and class names
  });
});
