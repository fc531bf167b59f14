/**
 * Size and depth limits of the parser (issue 11, "Also fix" 5). No timing assertions: the item ordinals
 * used to be counted by rescanning every earlier item (quadratic), and lists nested deeper than
 * markdown-it's limit silently dropped the rest of the plan.
 */
import { describe, expect, it } from 'vitest';
import { parsePlan } from '../../src/plan/parse.js';
import { validatePlan } from '../../src/plan/validate.js';

describe('one step with 100k checklist items', () => {
  it('parses every item with its ordinal and line, and the step after them', () => {
    const n = 100_000;
    const lines = ['### Execution Steps', '', '#### Step 1: Many {#step-1}', '', '**Tasks:**'];
    for (let i = 0; i < n; i++) lines.push(`- [${i % 3 === 0 ? 'x' : ' '}] task ${i}`);
    lines.push(
      '',
      '**Tests:**',
      '- [ ] t0',
      '- [ ] t1',
      '',
      '#### Step 2: After {#step-2}',
      '',
      '**Tasks:**',
      '- [ ] last',
    );
    const plan = parsePlan(lines.join('\n') + '\n');
    expect(plan.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(plan.steps.map((s) => s.anchor)).toEqual(['step-1', 'step-2']);
    const items = plan.steps[0]!.items;
    expect(items).toHaveLength(n + 2);
    const tasks = items.filter((it) => it.kind === 'task');
    expect(tasks).toHaveLength(n);
    expect(tasks.every((it, k) => it.ordinal === k && it.text === `task ${k}` && it.line === 6 + k)).toBe(true);
    expect(tasks.filter((it) => it.checked)).toHaveLength(Math.ceil(n / 3));
    expect(items.filter((it) => it.kind === 'test').map((it) => [it.ordinal, it.text])).toEqual([
      [0, 't0'],
      [1, 't1'],
    ]);
    expect(plan.steps[1]!.items.map((it) => [it.kind, it.ordinal, it.text])).toEqual([['task', 0, 'last']]);
  });
});

describe('lists nested beyond the nesting limit', () => {
  const deepList = (depth: number): string => {
    let s = '### Execution Steps\n\n#### Step 1: One {#step-1}\n\n**Tasks:**\n';
    for (let i = 0; i < depth; i++) s += '  '.repeat(i) + `- [ ] item ${i}\n`;
    return s + '\n#### Step 2: Two {#step-2}\n\n**Tasks:**\n- [ ] x\n';
  };

  it('parses 49 levels completely, later steps included', () => {
    const plan = parsePlan(deepList(49));
    expect(plan.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(plan.steps.map((s) => [s.anchor, s.items.length])).toEqual([
      ['step-1', 49],
      ['step-2', 1],
    ]);
    expect(plan.steps[0]!.items.every((it, k) => it.depth === k)).toBe(true);
  });

  it('reports the first line it cannot read as an error (E002), so the plan is invalid, not silently cut', () => {
    for (const depth of [50, 60, 500]) {
      const plan = parsePlan(deepList(depth));
      const { valid, diagnostics } = validatePlan(plan, 'lenient');
      expect(valid).toBe(false);
      // Item 49 is on line 6 + 49: the 50th list level is the first one markdown-it does not read.
      expect(diagnostics.map((d) => [d.code, d.line])).toEqual([['E002', 55]]);
      expect(diagnostics[0]!.message).toMatch(/nested too deeply.*line 55/);
    }
  });

  it('reports block quotes nested beyond the limit the same way', () => {
    let s = '#### Step 1: One\n\n**Tasks:**\n- [ ] a\n\n';
    s += '>'.repeat(150) + ' deep\n\n#### Step 2: Two\n';
    const plan = parsePlan(s);
    expect(plan.diagnostics.map((d) => [d.code, d.line])).toEqual([['E002', 6]]);
  });
});
