import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as kernel from '../../src/kernel/ids.js';
import { parsePlan } from '../../src/plan/parse.js';
import { structureOf } from '../../src/plan/structure.js';
import * as util from '../../src/util/hash.js';

// The kernel holds the one rule; src/util/hash.ts (used by the plan) re-exports it.
describe.each([
  ['kernel', kernel],
  ['util', util],
])('canonical JSON (%s)', (_name, { canonicalJson, sha256Canonical, sha256Hex }) => {
  it('sorts keys recursively, keeps array order and writes no whitespace', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: 'x' } })).toBe(
      '{"a":{"c":"x","d":[3,{"y":2,"z":1}]},"b":1}',
    );
  });

  it('drops undefined members and writes null for undefined slots and non-finite numbers, like JSON.stringify', () => {
    expect(canonicalJson({ a: undefined, b: [undefined, NaN, Infinity], c: null })).toBe(
      '{"b":[null,null,null],"c":null}',
    );
  });

  it('escapes strings as JSON does and keeps non-ASCII as UTF-8', () => {
    expect(canonicalJson({ é: 'a"b\n—' })).toBe('{"é":"a\\"b\\n—"}');
  });

  it('gives equal text for equal values built in a different key order', () => {
    expect(canonicalJson({ x: 1, y: { b: 2, a: 1 } })).toBe(canonicalJson({ y: { a: 1, b: 2 }, x: 1 }));
  });

  it('refuses cyclic values', () => {
    const a: Record<string, unknown> = {};
    a.self = a;
    expect(() => canonicalJson(a)).toThrow(/cyclic/);
  });

  it('hashes strings as UTF-8 and canonical JSON of values', () => {
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sha256Hex(new Uint8Array([0x61, 0x62, 0x63]))).toBe(sha256Hex('abc'));
    expect(sha256Canonical({ b: 1, a: 2 })).toBe(sha256Hex('{"a":2,"b":1}'));
  });
});

describe('the two copies of canonical JSON', () => {
  it('give the same text for the structure of every fixture plan and for assorted values', () => {
    const dir = join(import.meta.dirname, '..', 'fixtures', 'plans');
    const values: unknown[] = readdirSync(dir)
      .filter((f) => f.endsWith('.md'))
      .map((f) => structureOf(parsePlan(readFileSync(join(dir, f)))));
    values.push(
      { z: [1, -0, 1.5e300, 'ä\u0000"', null, true, false, { b: undefined, a: [undefined] }], A: 10n, é: {} },
      [[], {}, '', 0, NaN, -Infinity],
      { toJSON: () => ({ y: 1, x: 2 }) },
      new Date(0),
    );
    for (const v of values) expect(util.canonicalJson(v)).toBe(kernel.canonicalJson(v));
  });
});
