import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parsePlan } from '../../src/plan/parse.js';
import { validatePlan } from '../../src/plan/validate.js';

const FRAGMENTS = [
  '## Phase 1: Title {#phase}',
  '### Execution Steps {#execution-steps}',
  '#### Step 1: One {#step-1}',
  '##### Step 1.1: Sub',
  '###### Step 1.1a: Deep',
  '#### Step 2 Summary',
  '#### step three',
  '#### Step PRE-6 — Pre',
  '**Tasks:**',
  '**Tests:**',
  '**Checkpoint:**',
  '**Refactors:**',
  '**Depends on:** #step-1, Step 2, none',
  '**Commit:** `feat: x`',
  '**References:** [D01] x, (#context)',
  '**Unit tests:**',
  '- [ ] item',
  '  - [x] nested',
  '* [X] star',
  '1. [ ] ordered',
  '- [ ] `rename-symbol --at a.ts:1:1 --to b`',
  '- [ ] `move-symbol`',
  '```',
  '~~~md',
  '<div>',
  '| Field | Value |',
  '|---|---|',
  '| Owner | <owner> |',
  '> quote',
  '#### [D01] Decision (DECIDED) {#d01}',
  '{#Bad_Anchor}',
  '',
  '    indented code',
  '---',
];

const markdownLike = fc
  .array(
    fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom(...FRAGMENTS) },
      { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
      { weight: 1, arbitrary: fc.string({ maxLength: 40 }) },
    ),
    { maxLength: 60 },
  )
  .chain((lines) => fc.constantFrom('\n', '\r\n', '\r').map((eol) => lines.join(eol)));

describe('parser properties', () => {
  it('never throws and always returns hashes and located diagnostics on markdown-like input', () => {
    fc.assert(
      fc.property(markdownLike, (src) => {
        const plan = parsePlan(src);
        const { diagnostics } = validatePlan(plan, 'strict');
        expect(plan.diagnostics.some((d) => d.code === 'E000')).toBe(false);
        expect(plan.structure_hash).toMatch(/^[0-9a-f]{64}$/);
        for (const d of plan.diagnostics) expect(d.line).toBeGreaterThan(0);
        expect(diagnostics.length).toBeGreaterThanOrEqual(plan.diagnostics.length);
      }),
      { numRuns: 300 },
    );
  });

  it('never throws on arbitrary bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 2000 }), (bytes) => {
        expect(parsePlan(bytes).diagnostics.some((d) => d.code === 'E000')).toBe(false);
      }),
      { numRuns: 200 },
    );
  });
});

/** A plan's structure, rendered with any prose. */
interface Model {
  steps: { sub: boolean; tasks: number; tests: number; checkpoints: number; deps: number[] }[];
  implicit: boolean;
}

const modelArb: fc.Arbitrary<Model> = fc.record({
  steps: fc.array(
    fc.record({
      sub: fc.boolean(),
      tasks: fc.nat(3),
      tests: fc.nat(3),
      checkpoints: fc.nat(2),
      deps: fc.array(fc.nat(7), { maxLength: 2 }),
    }),
    { minLength: 1, maxLength: 8 },
  ),
  implicit: fc.boolean(),
});

const prose = fc.stringMatching(/^[A-Za-z][A-Za-z0-9 ,.;()]{0,30}$/).map((s) => s.trim() || 'x');
const proseArb = fc.record({ title: prose, intro: prose, words: fc.array(prose, { minLength: 200, maxLength: 200 }) });

function render(m: Model, p: { title: string; intro: string; words: string[] }, extraItemIn = -1): string {
  let w = 0;
  const word = () => p.words[w++ % p.words.length]!;
  const out = [`## Phase 1: ${p.title}`, '', p.intro, '', '### Execution Steps', ''];
  let top = 0;
  let sub = 0;
  const ids = m.steps.map((s, i) => {
    if (!s.sub || i === 0) {
      top++;
      sub = 0;
      return `${top}`;
    }
    sub++;
    return `${top}.${sub}`;
  });
  m.steps.forEach((s, i) => {
    const id = ids[i]!;
    const level = id.includes('.') ? 5 : 4;
    out.push(`${'#'.repeat(level)} Step ${id}: ${word()}`, '');
    if (!m.implicit) {
      const deps = s.deps.map((d) => ids[d % ids.length]!).map((d) => `#step-${d.replace(/\./g, '-')}`);
      out.push(`**Depends on:** ${deps.length ? deps.join(', ') : 'none'}`, '');
    }
    out.push(`**Commit:** \`${word()}\``, '', `**References:** ${word()}`, '');
    const list = (label: string, n: number) => {
      out.push(`**${label}:**`);
      for (let k = 0; k < n; k++) out.push(`- [ ] ${word()}`);
      out.push('');
    };
    list('Tasks', s.tasks + (i === extraItemIn ? 1 : 0));
    list('Tests', s.tests);
    list('Checkpoint', s.checkpoints);
    out.push(word(), '');
  });
  out.push('### Deliverables', '', word(), '');
  return out.join('\n');
}

describe('structure hash properties', () => {
  it('does not change when prose changes', () => {
    fc.assert(
      fc.property(modelArb, proseArb, proseArb, (m, a, b) => {
        expect(parsePlan(render(m, b)).structure_hash).toBe(parsePlan(render(m, a)).structure_hash);
      }),
      { numRuns: 150 },
    );
  });

  it('changes when an item is added to any step', () => {
    fc.assert(
      fc.property(modelArb, proseArb, fc.nat(), (m, p, k) => {
        const i = k % m.steps.length;
        expect(parsePlan(render(m, p, i)).structure_hash).not.toBe(parsePlan(render(m, p)).structure_hash);
      }),
      { numRuns: 150 },
    );
  });
});
