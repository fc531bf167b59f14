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
