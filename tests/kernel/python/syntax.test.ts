/**
 * The Python tokenizer and the syntactic facts the kernel derives from it (05-kernel.md §6.5–6.6):
 * identifiers at a position (f-string fields included, strings and comments excluded), declaration and
 * reference kinds, classes with bases and methods, and the scans.
 */
import { describe, it, expect } from 'vitest';
import { PyModule, quickRefKind } from '../../../src/kernel/backends/python/pymodule.js';

const at = (src: string, needle: string, nth = 0) => {
  let i = -1;
  for (let k = 0; k <= nth; k++) i = src.indexOf(needle, i + 1);
  if (i === -1) throw new Error(`${needle} not found`);
  return i;
};

describe('identifiers', () => {
  const src =
    'x = f"{value!r:>{width}} {{value}}"  # value in a comment\ny = "value"\ndef g(a, *b, c=1, **d): return a\n';
  const m = new PyModule(src);

  it('finds names inside f-string replacement fields, not in literal text, strings or comments', () => {
    expect(m.tok.identifierAt(at(src, 'value'))?.text).toBe('value');
    expect(m.tok.identifierAt(at(src, 'value', 1))).toBeNull(); // {{value}} is literal text
    expect(m.tok.identifierAt(at(src, 'value', 2))).toBeNull(); // comment
    expect(m.tok.identifierAt(at(src, 'value', 3))).toBeNull(); // plain string
  });

  it('prefers the identifier starting at the offset and refuses keywords', () => {
    expect(m.tok.identifierAt(at(src, 'g('))?.text).toBe('g');
    expect(m.tok.identifierAt(at(src, '(a') + 1)?.text).toBe('a');
    expect(m.tok.identifierAt(at(src, 'def'))).toBeNull();
    expect(m.tok.identifierAt(at(src, 'return'))).toBeNull();
  });

  it('treats soft keywords and non-ASCII names as identifiers', () => {
    const s = 'match = 1\ncafé = match\n';
    const mm = new PyModule(s);
    expect(mm.tok.identifierAt(0)?.text).toBe('match');
    expect(mm.tok.identifierAt(at(s, 'café'))?.text).toBe('café');
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
    '__all__ = ["main"]',
  ].join('\n');
  const m = new PyModule(src);

  it('classifies declarations by their syntactic context', () => {
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
  });

  it('classifies references as import, call, attribute or plain reference', () => {
    expect(m.refKind(at(src, 'thing'))).toBe('import');
    expect(m.refKind(at(src, 'Base()'))).toBe('call');
    expect(m.refKind(at(src, '.run') + 1)).toBe('call');
    expect(m.refKind(at(src, 'decorate'))).toBe('call');
    expect(m.refKind(at(src, 'argv)'))).toBe('reference');
    expect(m.refKind(at(src, '"main"') + 1)).toBe('import');
    expect(m.refKind(at(src, 'state'))).toBe('attribute');
  });

  it('agrees with the tokenizer whenever the text-only reference kind answers', () => {
    const multi = src + '\nfrom pkg import (\n    thing,\n    main,\n)\nvalue = combine(\n    main,\n    total)\n';
    const mm = new PyModule(multi);
    let answered = 0;
    for (const tk of mm.tok.tokens) {
      if (tk.type !== 'name' || tk.inFString) continue;
      const q = quickRefKind(multi, tk.start, tk.end);
      if (q === null) continue;
      answered++;
      expect([tk.text, q]).toEqual([tk.text, mm.refKind(tk.start)]);
    }
    expect(answered).toBeGreaterThan(20);
    expect(quickRefKind(multi, multi.lastIndexOf('thing'), multi.lastIndexOf('thing') + 5)).toBeNull();
  });

  it('lists classes with their base names (keyword arguments skipped) and direct methods', () => {
    expect(m.classes).toHaveLength(1);
    const c = m.classes[0]!;
    expect(c.bases.map((b) => b.text)).toEqual(['Root', 'Generic']);
    expect([...c.methods.keys()]).toEqual(['run']);
    expect(m.classOfMethod(at(src, 'run'))?.name).toBe('Base');
    expect(m.classOfMethod(at(src, 'inner'))).toBeNull();
  });
});

describe('scans', () => {
  const src = [
    'from helpers import *',
    'import importlib',
    'class Dyn:',
    '    def __getattr__(self, name): return 1',
    'def f(o):',
    '    setattr(o, "process", 1)',
    '    v = globals()["process"]',
    '    exec("process()")',
    '    importlib.import_module("m")',
    '    o.process()',
    '    return getattr(o, "process", None), "process", b"process", f"process"',
  ].join('\n');
  const m = new PyModule(src);

  it('reports every dynamic pattern, custom attribute protocol and star import', () => {
    expect(m.scanSites().map((s) => [s.code, s.pattern])).toEqual([
      ['StarImport', 'from helpers import *'],
      ['CustomAttributeProtocol', 'def __getattr__'],
      ['DynamicAttributeAccess', 'setattr('],
      ['DynamicNameLookup', 'globals()['],
      ['DynamicCodeExecution', 'exec('],
      ['DynamicCodeExecution', 'importlib.import_module('],
      ['DynamicAttributeAccess', 'getattr('],
    ]);
  });

  it('finds string literals equal to a name (bytes excluded), member accesses and getattr-family arguments', () => {
    expect(m.stringLiterals('process').map((s) => src.slice(s.start16 - 1, s.end16 + 1))).toEqual([
      '"process"',
      '"process"',
      '"process"',
      '"process"',
      '"process"',
    ]);
    expect(m.memberAccesses('process')).toHaveLength(1);
    expect(m.attrStringArgs('process').map((s) => s.start16)).toEqual([
      at(src, '"process", 1') + 1,
      at(src, '"process", None') + 1,
    ]);
  });
});
