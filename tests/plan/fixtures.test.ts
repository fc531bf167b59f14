/**
 * One fixture per validator code (tests/fixtures/plans/*.md). The first line of each fixture states what it
 * must produce at the strict level: `<!-- expect: E011 line 28 -->`, `<!-- expect: W006 no line -->` or
 * `<!-- expect: none -->`. Exactly that diagnostic, and nothing else, must come out.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parsePlan } from '../../src/plan/parse.js';
import { validatePlan } from '../../src/plan/validate.js';

const DIR = join(import.meta.dirname, '..', 'fixtures', 'plans');
const files = readdirSync(DIR)
  .filter((f) => f.endsWith('.md'))
  .sort();

const ALL_CODES = [
  'E001',
  'E002',
  'E006',
  'E007',
  'E010',
  'E011',
  'E012',
  'E020',
  'W001',
  'W002',
  'W003',
  'W004',
  'W005',
  'W006',
  'W007',
  'W008',
  'P001',
  'P008',
  'P009',
  'P011',
  'I001',
];

function expectation(text: string): { code: string; line: number | undefined } | null {
  const m = /^<!-- expect: (none|([A-Z]\d{3}) (?:line (\d+)|no line)) -->/.exec(text);
  if (!m) throw new Error('fixture without an expect comment');
  if (m[1] === 'none') return null;
  return { code: m[2]!, line: m[3] ? Number(m[3]) : undefined };
}

describe('validator fixtures', () => {
  it('has a fixture for every validator code', () => {
    const covered = new Set(files.map((f) => expectation(readFileSync(join(DIR, f), 'utf8'))?.code));
    expect(ALL_CODES.filter((c) => !covered.has(c))).toEqual([]);
  });

  for (const f of files) {
    const text = readFileSync(join(DIR, f), 'utf8');
    const want = expectation(text);
    it(`${f} gives ${want ? `${want.code} at line ${want.line ?? '-'}` : 'no diagnostic'}`, () => {
      const { valid, diagnostics } = validatePlan(parsePlan(text), 'strict');
      expect(diagnostics.map((d) => [d.code, d.line])).toEqual(want ? [[want.code, want.line]] : []);
      const severity = want?.code[0];
      expect(valid).toBe(want === null || severity === 'I');
    });
  }
});
