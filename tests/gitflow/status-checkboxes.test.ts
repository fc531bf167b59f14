/**
 * `tugcode status` of a plan without state reads progress from its checkboxes (docs/git.md §6), on every
 * call for every such plan: linear in the steps. No timing: the test counts how often the step list is read
 * (the check used to scan every step once per top-level step and once per ancestor).
 */
import { describe, expect, it } from 'vitest';
import { fromCheckboxes } from '../../src/gitflow/status.js';
import { parsePlan } from '../../src/plan/parse.js';
import type { ParsedPlan } from '../../src/plan/types.js';

function plan(tops: number, subs: number, checkedUpTo: number): string {
  let s = '## Phase 1.0: Many {#phase-many}\n\n### Execution Steps {#execution-steps}\n\n';
  for (let i = 1; i <= tops; i++) {
    s += `#### Step ${i}: Top ${i} {#step-${i}}\n\n**Tasks:**\n- [${i <= checkedUpTo ? 'x' : ' '}] top ${i}\n\n`;
    for (let j = 1; j <= subs; j++)
      s += `##### Step ${i}.${j}: Sub {#step-${i}-${j}}\n\n**Tasks:**\n- [${i <= checkedUpTo ? 'x' : ' '}] sub ${j}\n\n`;
  }
  return s;
}

/** The plan with its step list wrapped to count element reads. */
function counted(p: ParsedPlan): { plan: ParsedPlan; reads: () => number } {
  let n = 0;
  const steps = new Proxy(p.steps, {
    get(target, key, receiver) {
      if (typeof key === 'string' && /^\d+$/.test(key)) n++;
      return Reflect.get(target, key, receiver);
    },
  });
  return { plan: { ...p, steps }, reads: () => n };
}

describe('status from checkboxes', () => {
  it('counts a top-level step done when it and its substeps are all checked', () => {
    const line = fromCheckboxes(parsePlan(plan(4, 2, 3)), '.tugtool/tugplan-many.md');
    expect([line.steps_completed, line.steps_total, line.status]).toEqual([3, 4, 'active']);
    const all = fromCheckboxes(parsePlan(plan(2, 3, 2)), '.tugtool/tugplan-many.md');
    expect([all.steps_completed, all.steps_total, all.status]).toEqual([2, 2, 'done']);
  });

  it('reads the step list a constant number of times per step', () => {
    const p = parsePlan(plan(1000, 2, 500));
    expect(p.steps).toHaveLength(3000);
    const { plan: c, reads } = counted(p);
    const line = fromCheckboxes(c, '.tugtool/tugplan-many.md');
    expect([line.steps_completed, line.steps_total]).toEqual([500, 1000]);
    expect(reads()).toBeLessThanOrEqual(5 * p.steps.length);
  });
});
