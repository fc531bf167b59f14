/**
 * Labels written without a blank line before them (docs/plan-format.md §2.1): markdown reads them as the
 * text of the block above. P011 names each such line, and an E010 that a glued label causes says why.
 */
import { describe, expect, it } from 'vitest';
import { parsePlan } from '../../src/plan/parse.js';
import { validatePlan } from '../../src/plan/validate.js';

const PLAN = [
  '## Phase 1.0: Glued {#phase-glued}', // 1
  '', // 2
  '### Execution Steps {#execution-steps}', // 3
  '', // 4
  '#### Step 1: First {#step-1}', // 5
  '**Commit:** `feat: one`', // 6
  '**References:** (#execution-steps)', // 7
  '**Tasks:**', // 8
  '- [ ] do one', // 9
  '**Checkpoint:**', // 10
  '- [ ] `true`', // 11
  '', // 12
  '#### Step 2: Second {#step-2}', // 13
  '**Depends on:** #step-1', // 14
  '**Tasks:**', // 15
  '- [ ] do two', // 16
  '',
].join('\n');

describe('labels glued to the line above', () => {
  const { diagnostics } = validatePlan(parsePlan(PLAN), 'normal');
  const p011 = diagnostics.filter((d) => d.code === 'P011');

  it('draw P011 on each glued label, naming its line and the blank line it needs', () => {
    expect(p011.map((d) => [d.line, d.anchor])).toEqual([
      [7, 'step-1'],
      [8, 'step-1'],
      [10, 'step-1'],
      [15, 'step-2'],
    ]);
    expect(p011.every((d) => d.severity === 'warning')).toBe(true);
    expect(p011[0]!.message).toBe(
      '**References:** on line 7 is glued to the line above, so it is read as part of the **Commit:** paragraph, not as a label: put a blank line before it (docs/plan-format.md §2.1)',
    );
    expect(p011[2]!.message).toContain('part of the list item of line 9');
  });

  it('an E010 caused by a glued label says so', () => {
    const e010 = diagnostics.filter((d) => d.code === 'E010');
    expect(e010).toHaveLength(1);
    expect(e010[0]).toMatchObject({ line: 14, anchor: 'step-2' });
    expect(e010[0]!.message).toBe(
      'step-2 depends on "**Tasks:**", which names no step: it is the label on line 15, glued to the Depends on line; put a blank line before it (docs/plan-format.md §2.1)',
    );
  });

  it('with blank lines before the labels, nothing of the kind', () => {
    const fixed = PLAN.replace(/\n(\*\*)/g, '\n\n$1');
    const d = validatePlan(parsePlan(fixed), 'normal').diagnostics;
    expect(d.filter((x) => ['P011', 'E010', 'P008'].includes(x.code))).toEqual([]);
    // Step 1 now has its References and its checkpoint (step 2 has neither, written or not).
    expect(d.filter((x) => x.anchor === 'step-1' && ['W003', 'W004'].includes(x.code))).toEqual([]);
    // Bold text that is no label is left alone.
    const prose = PLAN.replace('**References:** (#execution-steps)', '**Note:** the same line');
    expect(validatePlan(parsePlan(prose)).diagnostics.filter((x) => x.code === 'P011' && x.line === 7)).toEqual([]);
  });
});
