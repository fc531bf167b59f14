/**
 * Rust syntax on tree-sitter trees (docs/kernel.md §6.5, Rust column), without rust-analyzer: the identifier
 * at a position, declaration kinds and reference kinds, on non-ASCII text with UTF-16 offsets.
 */
import { beforeAll, describe, it, expect } from 'vitest';
import { RsFile } from '../../../src/kernel/scans/rust.js';
import { loadSyntax, type Syntax } from '../../../src/kernel/scans/tree-sitter.js';
import { offsetOf } from '../helpers.js';

let syntax: Syntax;
beforeAll(async () => {
  syntax = await loadSyntax('rust');
});
const rs = (src: string) => new RsFile(syntax, src);
const at = offsetOf;

const SRC = [
  'use crate::geometry::{Shape as Form, area};',
  'pub struct Point { pub x: f64, label: String }',
  'union Bits { raw: u32 }',
  'pub enum Color { Red, Custom(u8) }',
  'pub trait Draw { type Canvas; fn draw(&self); fn name(&self) -> String { String::new() } }',
  'impl Draw for Point { type Canvas = (); fn draw(&self) { self.x.abs(); } }',
  'mod inner {}',
  'macro_rules! twice { ($e:expr) => { helper($e) + helper($e) }; }',
  'const LIMIT: u32 = 3;',
  'static NAME: &str = "naïve 🎉";',
  'type Alias = Point;',
  "fn process<'a>(items: &'a [i32], (lo, hi): (i32, i32)) -> i32 {",
  '    let total = |v: i32| v + lo;',
  '    let p = Point { x: 1.0, label: String::new() };',
  '    println!("{}", area(p.x));',
  '    twice!(items.len());',
  '    p.label.len() as i32 + total(hi) + geometry::area::<f64>(1.0) + p.x.method::<u8>()',
  '}',
].join('\n');

describe('rust identifiers', () => {
  it('finds identifiers, type, field and raw identifiers, not keywords, lifetimes or literals', () => {
    const m = rs(SRC + '\nfn r#match() {}\n');
    expect(m.identifierAt(at(SRC, 'Point'))?.text).toBe('Point');
    expect(m.identifierAt(at(SRC, 'x:'))?.text).toBe('x');
    expect(m.identifierAt(at(SRC, 'Point {') + 5)?.text).toBe('Point'); // right after the name
    expect(m.identifierAt(at(SRC, 'self.x'))).toBeNull();
    expect(m.identifierAt(at(SRC, 'crate'))).toBeNull();
    expect(rs('impl P { fn new() -> Self { Self::make() } }').identifierAt(21)).toBeNull(); // Self
    expect(m.identifierAt(at(SRC, "'a") + 1)).toBeNull();
    expect(m.identifierAt(at(SRC, 'naïve'))).toBeNull();
    expect(m.identifierAt(at(SRC + '\nfn r#match() {}\n', 'r#match'))?.text).toBe('r#match');
  });

  it('gives UTF-16 offsets after non-ASCII text', () => {
    const s = '// naïve café 🎉\nfn été() -> i32 { /* é */ été() }\n';
    const m = rs(s);
    const call = s.lastIndexOf('été');
    expect(m.identifierAt(call)).toEqual({ start16: call, end16: call + 3, text: 'été' });
    expect(m.refKind(call)).toBe('call');
    expect(m.declKind(s.indexOf('été'))).toBe('function');
  });
});

describe('rust kinds', () => {
  it('classifies declarations per the §6.5 table', () => {
    const m = rs(SRC);
    const kind = (needle: string, nth = 0) => m.declKind(at(SRC, needle, nth));
    expect(kind('Form')).toBe('import');
    expect(kind('Point')).toBe('class');
    expect(kind('x:')).toBe('property');
    expect(kind('label:')).toBe('property');
    expect(kind('Bits')).toBe('class');
    expect(kind('Color')).toBe('enum');
    expect(kind('Red')).toBe('enum_member');
    expect(kind('Custom')).toBe('enum_member');
    expect(kind('Draw')).toBe('interface');
    expect(kind('Canvas')).toBe('type');
    expect(kind('draw')).toBe('method');
    expect(kind('name(')).toBe('method');
    expect(kind('draw', 1)).toBe('method');
    expect(kind('inner')).toBe('module');
    expect(kind('twice')).toBe('function');
    expect(kind('LIMIT')).toBe('variable');
    expect(kind('NAME')).toBe('variable');
    expect(kind('Alias')).toBe('type');
    expect(kind('process')).toBe('function');
    expect(kind('items')).toBe('parameter');
    expect(kind('lo,')).toBe('parameter');
    expect(kind('total')).toBe('variable');
  });

  it('classifies references as import, call, attribute or plain reference', () => {
    const m = rs(SRC);
    const ref = (needle: string, nth = 0, shift = 0) => m.refKind(at(SRC, needle, nth) + shift);
    expect(ref('geometry')).toBe('import');
    expect(ref('area}')).toBe('import');
    expect(ref('Shape')).toBe('import');
    expect(ref('abs')).toBe('call');
    expect(ref('self.x', 0, 5)).toBe('attribute');
    expect(ref('helper')).toBe('call'); // in a macro body: followed by (…)
    expect(ref('area(p')).toBe('call'); // in a macro invocation's tokens
    expect(ref('p.x', 0, 2)).toBe('attribute'); // in a macro invocation's tokens
    expect(ref('twice!(')).toBe('call');
    expect(ref('len()')).toBe('call');
    expect(ref('label.len', 0)).toBe('attribute');
    expect(ref('total(hi')).toBe('call');
    expect(ref('hi)')).toBe('reference');
    expect(ref('area::<f64>')).toBe('call');
    expect(ref('geometry::area::<f64>')).toBe('reference');
    expect(ref('method')).toBe('call');
    expect(ref('Point {', 1)).toBe('reference');
    expect(ref('new()', 1)).toBe('call');
    expect(ref('String::new', 1)).toBe('reference');
  });
});
