/**
 * The step brief (docs/run.md §2) from a parsed plan.
 */
import { describe, expect, it } from 'vitest';
import { parsePlan } from '../../src/plan/parse.js';
import { isTugError } from '../../src/contract/errors.js';
import { itemKey, stepBrief } from '../../src/run/brief.js';

const step = (n: string, anchor: string, level: string, deps: string, extra = '') => `
${level} Step ${n}: Title of ${anchor} {#${anchor}}

**Depends on:** ${deps}

**Commit:** \`feat: ${anchor}\`

**References:** [D01] Decision, (#context)

**Tasks:**
- [ ] Task one of ${anchor}
- [x] Task two of ${anchor}
${extra}
**Checkpoint:**
- [ ] \`npm test\`
`;

const PLAN = `## Phase 1.0: Demo {#phase-demo}

**Purpose:** A demo.

### Context {#context}

Context.

### Design Decisions {#design-decisions}

#### [D01] Decision (DECIDED) {#d01-decision}

Text.

### Execution Steps {#execution-steps}
${step('1', 'step-1', '####', 'none')}
${step('2', 'step-2', '####', '#step-1')}
${step('2.1', 'step-2-1', '#####', 'none', '\n**Tests:**\n- [ ] Test of step-2-1\n')}
${step('2.2', 'step-2-2', '#####', '#step-2-1')}
${step('3', 'step-3', '####', '#step-2')}
`;

describe('stepBrief', () => {
  const plan = parsePlan(PLAN);

  it('parses the fixture plan without errors', () => {
    expect(plan.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(plan.steps.map((s) => s.anchor)).toEqual(['step-1', 'step-2', 'step-2-1', 'step-2-2', 'step-3']);
  });

  it('describes a step with its substeps in order, items with their statuses, and earlier failures', () => {
    const statuses = new Map([
      [itemKey('step-2', 'task', 1), 'completed' as const],
      [itemKey('step-2-1', 'test', 0), 'deferred' as const],
    ]);
    const b = stepBrief(plan, 'step-2', {
      plan_path: '.tugtool/tugplan-demo.md',
      attempt: 2,
      statuses,
      previous_failures: [{ attempt: 1, reason: 'ImplementerFailed exit 1' }],
    });
    const items = (a: string) => [
      { kind: 'task', ordinal: 0, text: `Task one of ${a}`, status: 'open' },
      { kind: 'task', ordinal: 1, text: `Task two of ${a}`, status: 'open' },
    ];
    const common = (a: string) => ({
      plan_path: '.tugtool/tugplan-demo.md',
      step_anchor: a,
      title: `Title of ${a}`,
      attempt: 2,
      commit_message: `feat: ${a}`,
      references: '[D01] Decision, (#context)',
    });
    expect(b).toEqual({
      ...common('step-2'),
      depends_on: ['step-1'],
      items: [
        items('step-2')[0],
        { ...items('step-2')[1], status: 'completed' },
        { kind: 'checkpoint', ordinal: 0, text: '`npm test`', status: 'open' },
      ],
      substeps: [
        {
          ...common('step-2-1'),
          depends_on: plan.edges.filter(([f]) => f === 'step-2-1').map(([, t]) => t),
          items: [
            ...items('step-2-1'),
            { kind: 'test', ordinal: 0, text: 'Test of step-2-1', status: 'deferred' },
            { kind: 'checkpoint', ordinal: 0, text: '`npm test`', status: 'open' },
          ],
          substeps: [],
          previous_failures: [],
        },
        {
          ...common('step-2-2'),
          depends_on: ['step-2-1'],
          items: [...items('step-2-2'), { kind: 'checkpoint', ordinal: 0, text: '`npm test`', status: 'open' }],
          substeps: [],
          previous_failures: [],
        },
      ],
      previous_failures: [{ attempt: 1, reason: 'ImplementerFailed exit 1' }],
    });
    // The brief is plain JSON (it goes to stdin and to TUG_STEP_JSON as is).
    expect(JSON.parse(JSON.stringify(b))).toEqual(b);
  });

  it('defaults every item to open and failures to none', () => {
    const b = stepBrief(plan, 'step-3', { plan_path: 'p.md', attempt: 1 });
    expect(b.items.map((i) => i.status)).toEqual(['open', 'open', 'open']);
    expect(b).toMatchObject({ depends_on: ['step-2'], substeps: [], previous_failures: [] });
  });

  it('throws StepNotFound for an anchor that is not a step', () => {
    let e: unknown;
    try {
      stepBrief(plan, 'step-9', { plan_path: 'p.md', attempt: 1 });
    } catch (x) {
      e = x;
    }
    expect(isTugError(e) && e.code).toBe('StepNotFound');
  });
});
