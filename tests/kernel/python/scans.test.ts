/**
 * The Python scans on tree-sitter trees (docs/kernel.md §6.6): dynamic patterns, custom attribute protocols
 * and star imports; string literals equal to a name; `.name` accesses; getattr-family string arguments.
 * Candidates come from the text; a file whose lines lex independently is confirmed on its candidate lines
 * only, which must agree with the whole-file tree.
 */
import { beforeAll, describe, it, expect } from 'vitest';
import { readFileSync } from 'node:fs';
import { PyFile } from '../../../src/kernel/scans/python.js';
import {
  confirmNames,
  linesLexIndependently,
  nameCandidates,
  quickNames,
} from '../../../src/kernel/scans/python-names.js';
import { decodeFile } from '../../../src/kernel/patch/positions.js';
import { fixtureFiles } from './fixture-files.js';
import { mayHaveSites } from '../../../src/kernel/scans/python-scan.js';
import {
  clearSyntaxCache,
  loadSyntax,
  syntaxCacheSize,
  TREE_CACHE_MAX_TREES,
  type Syntax,
} from '../../../src/kernel/scans/tree-sitter.js';
import { offsetOf } from '../helpers.js';

let syntax: Syntax;
beforeAll(async () => {
  syntax = await loadSyntax('python');
});
const py = (src: string) => new PyFile(syntax, src);
const at = offsetOf;
const lineOf = (src: string, o: number) => src.slice(0, o).split('\n').length;

/** A dynamic-attribute example with twelve sites, in the shape of the earlier Rust tool's dynamic_attr case. */
const DYNAMIC = [
  'class Config:',
  '    def __init__(self):',
  '        self.process_data = True',
  '    def __getattr__(self, name):',
  '        return getattr(self._inner, name)',
  '    def __setattr__(self, name, value):',
  '        object.__setattr__(self, name, value)',
  '',
  'def get_setting(obj, name):',
  '    return getattr(obj, name)',
  'def set_setting(obj, name, value):',
  '    setattr(obj, name, value)',
  'def has_setting(obj, name):',
  '    return hasattr(obj, name) and delattr(obj, name)',
  'def lookup(name):',
  '    return globals()[name] or locals()[name] or vars()[name]',
  'def run(code):',
  '    exec(code)',
  '    return eval(code)',
  '',
  'value = get_setting(Config(), "process_data")',
].join('\n');

describe('dynamic patterns', () => {
  it('finds every site of the dynamic-attribute example, each at its call or def name', () => {
    const sites = py(DYNAMIC).scanSites();
    expect(sites.map((s) => [s.code, s.pattern, lineOf(DYNAMIC, s.start16)])).toEqual([
      ['CustomAttributeProtocol', 'def __getattr__', 4],
      ['DynamicAttributeAccess', 'getattr(', 5],
      ['CustomAttributeProtocol', 'def __setattr__', 6],
      ['DynamicAttributeAccess', 'getattr(', 10],
      ['DynamicAttributeAccess', 'setattr(', 12],
      ['DynamicAttributeAccess', 'hasattr(', 14],
      ['DynamicAttributeAccess', 'delattr(', 14],
      ['DynamicNameLookup', 'globals()[', 16],
      ['DynamicNameLookup', 'locals()[', 16],
      ['DynamicNameLookup', 'vars()[', 16],
      ['DynamicCodeExecution', 'exec(', 18],
      ['DynamicCodeExecution', 'eval(', 19],
    ]);
    expect(sites.every((s) => DYNAMIC.slice(s.start16, s.end16) === s.pattern.replace(/^def |\(.*$/g, ''))).toBe(true);
    // Twelve sites; `object.__setattr__(…)` is a method call, not the builtin, and no site.
    expect(sites).toHaveLength(12);
    expect(mayHaveSites(DYNAMIC)).toBe(true);
  });

  it('finds the one site of the dynamic_attr fixture', () => {
    const src = readFileSync('tests/kernel/fixtures/python/edge_cases/dynamic_attr/dynamic_attr.py', 'utf8');
    const sites = py(src).scanSites();
    expect(
      sites.map((s) => [s.code, s.pattern, lineOf(src, s.start16), s.start16 - src.lastIndexOf('\n', s.start16)]),
    ).toEqual([['DynamicAttributeAccess', 'getattr(', 6, 12]]);
  });

  it('reports star imports, imports chosen at run time and dunder protocols only in class scope', () => {
    const src = [
      'from helpers import *',
      'from . import *',
      'import importlib',
      'from importlib import import_module',
      'def __getattr__(name): return 1',
      'class Dyn:',
      '    if True:',
      '        def __getattribute__(self, n): return 1',
      'def f(o):',
      '    importlib.import_module("m")',
      '    import_module("n")',
      '    __import__("p")',
      '    o.eval("x")',
      '    vars(o)["x"]',
      '    g = globals()',
    ].join('\n');
    expect(
      py(src)
        .scanSites()
        .map((s) => [s.code, s.pattern, src.slice(s.start16, s.end16)]),
    ).toEqual([
      ['StarImport', 'from helpers import *', 'from helpers import *'],
      ['StarImport', 'from . import *', 'from . import *'],
      ['CustomAttributeProtocol', 'def __getattribute__', '__getattribute__'],
      ['DynamicCodeExecution', 'importlib.import_module(', 'importlib'],
      ['DynamicCodeExecution', 'import_module(', 'import_module'],
      ['DynamicCodeExecution', '__import__(', '__import__'],
    ]);
  });

  it('skips parsing text without any site word', () => {
    expect(mayHaveSites('def evaluate(variables):\n    return execute(globals_map)\n')).toBe(false);
    expect(mayHaveSites('x = getattr (o, "a")\n')).toBe(true);
  });
});

describe('names in strings and member accesses', () => {
  const src = [
    'from helpers import *',
    'def f(o):',
    '    setattr(o, "process", 1)',
    '    o.process()',
    '    o . process',
    '    o.processed, o.process_all',
    '    return getattr(o, "process", None), "process", b"process", f"process", "processing"',
    '# "process" in a comment',
    "x = {'process': 1}",
  ].join('\n');

  it('finds string literals equal to a name (bytes excluded), member accesses and getattr-family arguments', () => {
    const m = py(src);
    expect(m.stringLiterals('process').map((s) => src.slice(s.start16 - 1, s.end16 + 1))).toEqual([
      '"process"',
      '"process"',
      '"process"',
      '"process"',
      "'process'",
    ]);
    expect(m.memberAccesses('process').map((s) => s.start16)).toEqual([
      at(src, '.process()') + 1,
      at(src, '. process') + 2,
    ]);
    expect(m.attrStringArgs('process').map((s) => s.start16)).toEqual([
      at(src, '"process", 1') + 1,
      at(src, '"process", None') + 1,
    ]);
  });

  it('leaves out covered candidates without parsing them', () => {
    const m = py(src);
    const first = at(src, '"process"') + 1;
    expect(m.stringLiterals('process', (o) => o === first)).toHaveLength(4);
    expect(m.memberAccesses('process', () => true)).toEqual([]);
  });

  it('gives the same answers from candidate lines as from the whole file', () => {
    expect(linesLexIndependently(src)).toBe(true);
    // A triple-quoted string at the end forces a whole-file parse without moving any offset.
    const whole = src + '\n"""\nx\n"""\n';
    expect(linesLexIndependently(whole)).toBe(false);
    // Many candidate lines, between lines without any.
    const many = Array.from({ length: 60 }, (_, i) =>
      i % 3 === 0
        ? `v${i} = o.process("process") + 1`
        : i % 3 === 1
          ? `w${i} = "é" * ${i}`
          : `x${i} = ["process", o.process]`,
    ).join('\n');
    for (const [a, b] of [
      [src, whole],
      [many, many + '\n"""\nx\n"""\n'],
    ])
      for (const name of ['process', 'o', 'processed']) {
        expect(py(a!).stringLiterals(name)).toEqual(py(b!).stringLiterals(name));
        expect(py(a!).memberAccesses(name)).toEqual(py(b!).memberAccesses(name));
      }
    expect(py(many).stringLiterals('process')).toHaveLength(40);
    expect(py(many).memberAccesses('process')).toHaveLength(40);
    // The line-local path leaves no whole-file tree behind; the fallback does.
    clearSyntaxCache();
    py(many).stringLiterals('process');
    expect(syntaxCacheSize()).toBe(0);
    py(many + '\n"""\nx\n"""\n').stringLiterals('process');
    expect(syntaxCacheSize()).toBe(1);
  });

  it('falls back to the whole file when a candidate line does not parse alone', () => {
    const s = 'table = {\n    "process": 1,\n}\nif mode == "process":\n    o.process()\n';
    expect(linesLexIndependently(s)).toBe(true);
    const m = py(s);
    expect(m.stringLiterals('process').map((x) => lineOf(s, x.start16))).toEqual([2, 4]);
    expect(m.memberAccesses('process').map((x) => lineOf(s, x.start16))).toEqual([5]);
  });

  it('sees a string that a triple-quoted or continued string hides only on the whole tree', () => {
    const s = 'doc = """\nx = "process"\n"""\ncont = \'a \\\n"process" b\'\nreal = "process"\n';
    expect(linesLexIndependently(s)).toBe(false);
    expect(
      py(s)
        .stringLiterals('process')
        .map((x) => lineOf(s, x.start16)),
    ).toEqual([6]);
  });
});

describe('name scans over many files', () => {
  it('confirms many files in one batch with the answers of one file at a time', () => {
    const files = [
      'a = o.process("process")\n',
      'class K:\n    def f(self):\n        return self.process, "process"',
      'table = {\n    "process": o.process,\n}\n', // a line that does not parse alone
      'doc = """\n"process"\n"""\nx = o.process\n', // not line-local
      "t = ('process', b'process', o.processed)\n",
      'nothing = 1\n',
    ];
    const alone = files.map((f) => [py(f).stringLiterals('process'), py(f).memberAccesses('process')]);
    clearSyntaxCache();
    const batch = files.map((f) => py(f));
    PyFile.prefetchNameSites(
      syntax,
      batch.map((file) => ({ file })),
      'process',
      ['strings', 'members'],
    );
    // Only the two files that could not be confirmed line by line were parsed whole.
    expect(syntaxCacheSize()).toBe(2);
    expect(batch.map((m) => [m.stringLiterals('process'), m.memberAccesses('process')])).toEqual(alone);
    expect(syntaxCacheSize()).toBe(2);
    expect(alone.map(([s, m]) => [s!.length, m!.length])).toEqual([
      [1, 1],
      [1, 1],
      [1, 1],
      [0, 1],
      [1, 0],
      [0, 0],
    ]);
  });

  it('parses nothing when every candidate is covered', () => {
    clearSyntaxCache();
    const m = py('a = o.process("process")\n');
    const all = () => true;
    PyFile.prefetchNameSites(
      syntax,
      [
        { file: m, covered: all },
        { file: py('b = o.process\n'), covered: all },
      ],
      'process',
      ['strings', 'members'],
    );
    expect([m.stringLiterals('process', all), m.memberAccesses('process', all), syntaxCacheSize()]).toEqual([
      [],
      [],
      0,
    ]);
  });
});

describe('the text-decided name sites', () => {
  const tricky = [
    'from .process import process',
    'import pkg.process as process',
    'x = o.process + o . process + (a).process + b[0].process',
    'y = 1 .process + f(o).process  # o.process in a comment',
    'z = "process" + b"process" + rb"process" + f"process" + Rb"process" + u"process" + fr"process"',
    "w = 'process' + 'o.process' + \"it's\" + o.process",
    'v = {"a": o.process, "process": 1}',
    'match cmd:',
    '    case Color.process:',
    '        pass',
    '    case "process":',
    '        pass',
    '@deco.process',
    'def f(process=o.process): return process',
    'elif_ = x if y else"process"',
  ].join('\n');

  function agree(path: string, text: string): number {
    const file = py(text);
    if (!file.linesLexIndependently) return 0;
    let decided = 0;
    const names = new Set(file.tree((root) => root.descendantsOfType('identifier').map((n) => n!.text)));
    for (const name of names) {
      const cand = nameCandidates(text, name);
      if (!cand.lineLocal) continue;
      const { known, rest } = quickNames(text, name, cand);
      // A closing triple-quoted string makes the file parse whole, with the same offsets.
      const tree = confirmNames(syntax, py(text + '\n"""\n"""\n'), name, cand);
      for (const kind of ['strings', 'members'] as const) {
        const undecided = new Set(rest[kind]);
        const truth = new Set(tree[kind].map((s) => s.start16));
        for (const o of cand[kind]) {
          if (undecided.has(o)) continue;
          decided++;
          expect([path, name, kind, o, known[kind].some((s) => s.start16 === o)]).toEqual([
            path,
            name,
            kind,
            o,
            truth.has(o),
          ]);
        }
      }
    }
    return decided;
  }

  it('agrees with the tree on every candidate it decides, in every Python fixture and tricky lines', () => {
    // A module in the benchmark's shape: names in strings and member accesses on most lines.
    const module = Array.from({ length: 8 }, (_, i) =>
      [
        `class Service${i}:`,
        '    def load(self, text: str) -> int:',
        '        c = parse_config(text)',
        '        self.reg.register("load", c)',
        `        return len(parse_config(text + "\\nload=${i}").values) + self.load(text) + s.query("load")`,
      ].join('\n'),
    ).join('\n');
    let decided = agree('tricky', tricky) + agree('module', module);
    for (const path of fixtureFiles()) {
      const f = decodeFile(path, readFileSync(path));
      if (f) decided += agree(path, f.text);
    }
    expect(decided).toBeGreaterThan(30);
  });

  it('leaves import, case, prefixed and commented candidates to the tree', () => {
    const cand = nameCandidates(tricky, 'process');
    const { known, rest } = quickNames(tricky, 'process', cand);
    const lines = (xs: number[]) => [...new Set(xs.map((o) => lineOf(tricky, o)))];
    expect(lines(rest.members)).toEqual([1, 2, 4, 6, 7, 9]);
    // A quote before a string candidate (later literals of a line, dict keys) or an unknown prefix.
    expect(lines(rest.strings)).toEqual([5, 7, 15]);
    expect(lines(known.strings.map((x) => x.start16))).toEqual([5, 6, 11]);
  });
});

describe('the tree cache', () => {
  it('keeps at most its bound of trees, deleting the evicted ones', () => {
    clearSyntaxCache();
    for (let i = 0; i < TREE_CACHE_MAX_TREES + 10; i++) py(`x${i} = ${i}\n`).identifierAt(0);
    expect(syntaxCacheSize()).toBe(TREE_CACHE_MAX_TREES);
    // Evicted trees are gone; asking again parses anew and still answers.
    expect(py('x0 = 0\n').identifierAt(0)?.text).toBe('x0');
  });
});
