/**
 * The parser and validator never throw and never hang: every input gives a plan, problems become
 * diagnostics with line numbers. (No timing assertions here; speed is the bench's job.)
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parsePlan } from '../../src/plan/parse.js';
import { validatePlan } from '../../src/plan/validate.js';
import type { ParsedPlan } from '../../src/plan/types.js';

function parseAndValidate(src: string | Uint8Array): {
  plan: ParsedPlan;
  diagnostics: ReturnType<typeof validatePlan>['diagnostics'];
} {
  const plan = parsePlan(src);
  const { diagnostics } = validatePlan(plan, 'strict');
  expect(plan.plan_hash).toMatch(/^[0-9a-f]{64}$/);
  expect(plan.structure_hash).toMatch(/^[0-9a-f]{64}$/);
  expect(plan.diagnostics.some((d) => d.code === 'E000')).toBe(false);
  return { plan, diagnostics };
}

describe('bad input', () => {
  it('parses random binary bytes into a plan without steps (E001)', () => {
    const { plan, diagnostics } = parseAndValidate(randomBytes(64 * 1024));
    expect(plan.steps).toEqual([]);
    expect(diagnostics.map((d) => d.code)).toContain('E001');
  });

  it('decodes invalid UTF-8 with replacement characters, reports it (E005) and keeps the plan hash of the raw bytes', () => {
    const bytes = new Uint8Array([
      ...Buffer.from('#### Step 1: caf'),
      0xc3,
      0x28,
      0xff,
      0x0a,
      0x00,
      0x0a,
      ...Buffer.from('**Tasks:**\n- [ ] x\n'),
    ]);
    const { plan, diagnostics } = parseAndValidate(bytes);
    expect(plan.steps.map((s) => [s.anchor, s.title])).toEqual([['step-1', 'caf\uFFFD(\uFFFD']]);
    expect(plan.steps[0]!.items.map((i) => i.line)).toEqual([4]);
    // ...and says the file is not UTF-8, on the first line that is not (E005, an error: the plan is invalid).
    expect(diagnostics.filter((d) => d.code === 'E005')).toEqual([
      expect.objectContaining({
        severity: 'error',
        line: 1,
        message: expect.stringMatching(/^line 1 is not valid UTF-8/),
      }),
    ]);
    const later = parsePlan(Buffer.concat([Buffer.from('# T\n\nok \u00e9\n'), Buffer.from([0x61, 0xe9, 0x0a])]));
    expect(later.diagnostics.filter((d) => d.code === 'E005').map((d) => d.line)).toEqual([4]);
    expect(parsePlan(Buffer.from('\ufeff# T\n\u00e9\n')).diagnostics.some((d) => d.code === 'E005')).toBe(false);
  });

  it('parses a truncated plan (cut in the middle of a list item and a table)', () => {
    const { plan } = parseAndValidate(
      '## T\n| Field | Value |\n|---|---|\n| Owner | a\n#### Step 1: One\n**Tasks:**\n- [ ',
    );
    expect(plan.steps.map((s) => s.anchor)).toEqual(['step-1']);
  });

  it('parses a 10 MB plan', () => {
    const chunk = (n: number) =>
      `#### Step ${n}: Title ${n}\n\n**Depends on:** #step-${Math.max(0, n - 1)}\n\n**Tasks:**\n- [ ] do ${n} with \`code\`\n- [x] more\n\n**Tests:**\n- [ ] test\n\n${'lorem ipsum dolor '.repeat(30)}\n\n`;
    const parts: string[] = ['### Execution Steps\n'];
    let size = 0;
    for (let n = 0; size < 10 * 1024 * 1024; n++) {
      const c = chunk(n);
      parts.push(c);
      size += c.length;
    }
    const { plan, diagnostics } = parseAndValidate(parts.join(''));
    expect(plan.steps.length).toBe(parts.length - 1);
    // step-0 depends on itself: exactly one cycle, reported with its line.
    expect(diagnostics.filter((d) => d.code === 'E011')).toEqual([
      expect.objectContaining({ line: 4, message: 'dependency cycle: step-0 -> step-0' }),
    ]);
  });

  it('a cycle through 30,000 steps is named by its ends, not on a line of megabytes', () => {
    const n = 30_000;
    const steps: string[] = ['### Execution Steps\n'];
    for (let i = 1; i <= n; i++)
      steps.push(`#### Step ${i}: S${i}\n\n**Depends on:** #step-${i === 1 ? n : i - 1}\n\n**Tasks:**\n- [ ] t\n`);
    const cycles = parseAndValidate(steps.join('\n')).diagnostics.filter((d) => d.code === 'E011');
    expect(cycles).toHaveLength(1);
    expect(cycles[0]!.message.length).toBeLessThan(400);
    expect(cycles[0]!.message).toMatch(
      /^dependency cycle: step-1 -> (step-\d+ -> ){9}… \(29988 more\) … -> step-\d+ -> step-\d+ -> step-1$/,
    );
    // A short one is written out whole.
    const short = parseAndValidate(steps.slice(0, 4).join('\n').replace('#step-30000', '#step-3')).diagnostics;
    expect(short.find((d) => d.code === 'E011')!.message).toMatch(
      /^dependency cycle: step-\d -> step-\d -> step-\d -> step-\d$/,
    );
  });

  it('parses 200-level nested lists and blockquotes', () => {
    let lists = '#### Step 1: One\n**Tasks:**\n';
    for (let i = 0; i < 200; i++) lists += '  '.repeat(i) + `- [ ] item ${i}\n`;
    const a = parseAndValidate(lists);
    expect(a.plan.steps[0]!.items.length).toBeGreaterThan(10);
    expect(a.plan.steps[0]!.items.every((it, k) => it.depth === k)).toBe(true);
    let quotes = '#### Step 1: One\n**Tasks:**\n';
    for (let i = 0; i < 200; i++) quotes += '>'.repeat(i) + ` - [ ] item ${i}\n`;
    parseAndValidate(quotes);
    parseAndValidate('#### Step 1: x\n' + '['.repeat(50_000) + ']'.repeat(50_000) + '\n' + '**'.repeat(50_000));
  });

  it('treats everything after an unclosed fence as code, with P009 for step headings inside', () => {
    const { plan, diagnostics } = parseAndValidate('#### Step 1: One\n~~~\n#### Step 2: Two\n- [ ] x\n');
    expect(plan.steps.map((s) => s.anchor)).toEqual(['step-1']);
    expect(diagnostics.filter((d) => d.code === 'P009').map((d) => d.line)).toEqual([3]);
  });

  it('reports duplicate anchors and cycles as diagnostics with line numbers', () => {
    const { diagnostics } = parseAndValidate('#### Step 1: One\n\n**Depends on:** #step-1\n#### Step 1: Again\n');
    expect(diagnostics.filter((d) => d.severity === 'error').map((d) => [d.code, d.line])).toEqual([
      ['E011', 3],
      ['E006', 4],
    ]);
  });

  it('accepts empty input, a lone BOM, NUL bytes and CR-only line ends', () => {
    parseAndValidate('');
    parseAndValidate('\uFEFF');
    const nul = parseAndValidate('\u0000\n#### Step 1: \u0000x\n**Tasks:**\n- [ ] \u0000\n');
    expect(nul.plan.steps.length).toBe(1);
    const cr = parseAndValidate('#### Step 1: One\r**Tasks:**\r- [ ] a\r  b\r');
    expect(cr.plan.steps[0]!.items.map((i) => [i.text, i.line])).toEqual([['a b', 3]]);
  });
});
