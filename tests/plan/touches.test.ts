/**
 * `**Touches:**` (docs/plan-format.md §2.5): parsed, validated (E021), lifted from substeps to their
 * top-level step, and when two steps' globs overlap.
 */
import { describe, expect, it } from 'vitest';
import { liftedTouches } from '../../src/plan/lift.js';
import { parsePlan } from '../../src/plan/parse.js';
import { mayDeclareTouches } from '../../src/plan/syntax.js';
import { schedule } from '../../src/run/schedule.js';
import { touchesGlobProblem, touchesOverlap } from '../../src/plan/touches.js';
import { validatePlan } from '../../src/plan/validate.js';
import { planText, stepText } from '../helpers/plan.js';

const plan = (touches: string) =>
  planText([
    stepText({ id: '1', deps: [], tasks: ['a'], body: `**Touches:** ${touches}` }),
    stepText({ id: '2', deps: [], tasks: ['b'] }),
  ]);

describe('Touches', () => {
  it('parses comma-separated globs, backticks dropped; a step without the line has none', () => {
    const p = parsePlan(Buffer.from(plan('src/db/**, `docs/*.md`')));
    expect(p.steps.find((s) => s.anchor === 'step-1')!.touches).toEqual(['src/db/**', 'docs/*.md']);
    expect(p.steps.find((s) => s.anchor === 'step-2')!.touches).toEqual([]);
  });

  it('a comma inside braces, brackets or backticks belongs to its glob', () => {
    const p = parsePlan(Buffer.from(plan('src/*.{ts,tsx}, `lib/{a,b}.js`, test/[a,b].ts, docs/**')));
    expect(p.steps.find((s) => s.anchor === 'step-1')!.touches).toEqual([
      'src/*.{ts,tsx}',
      'lib/{a,b}.js',
      'test/[a,b].ts',
      'docs/**',
    ]);
    expect(validatePlan(p).diagnostics.filter((d) => d.code === 'E021')).toEqual([]);
  });

  it('E021 for a glob that is empty, absolute, leaves the repository or does not balance', () => {
    for (const bad of ['', '/etc/**', 'src/../x', 'src/{a,b', 'x'.repeat(300)]) {
      const p = parsePlan(Buffer.from(plan(bad === '' ? 'a, ' : bad)));
      const codes = validatePlan(p).diagnostics.map((d: { code: string }) => d.code);
      expect(codes, bad).toContain('E021');
    }
    expect(touchesGlobProblem('src/**/*.{ts,tsx}')).toBeNull();
  });

  it('overlap is conservative: shared bases and literal paths matched by the other glob overlap', () => {
    expect(touchesOverlap(['src/db/**'], ['src/db/schema.ts'])).toBe(true);
    expect(touchesOverlap(['src/db/**'], ['src/**/*.ts'])).toBe(true);
    expect(touchesOverlap(['**/*.ts'], ['docs/**'])).toBe(true);
    expect(touchesOverlap(['**/*.ts'], ['docs/x.md'])).toBe(false);
    expect(touchesOverlap(['src/db/**'], ['src/ui/**'])).toBe(false);
    expect(touchesOverlap(['a.txt'], ['b.txt'])).toBe(false);
    expect(touchesOverlap([], ['a.txt'])).toBe(false);
  });

  it("a substep's Touches count for its top-level step: lifted, valid, and in the dry run's pairs", () => {
    const sub = (id: string, touches: string) =>
      stepText({ id, level: 5, tasks: ['s'], body: `**Touches:** ${touches}` });
    const p = parsePlan(
      Buffer.from(
        planText([
          stepText({ id: '1', deps: [], tasks: ['a'] }),
          sub('1.1', 'src/db/**'),
          stepText({ id: '2', deps: [], tasks: ['b'], body: '**Touches:** lib/**, src/db/schema.ts' }),
          sub('2.1', 'src/db/schema.ts, notes/a.md'),
          stepText({ id: '2.2', level: 5, tasks: ['c'] }),
          sub('2.2.1', 'lib/x.ts'),
          stepText({ id: '3', deps: [], tasks: ['d'] }),
          sub('3.1', 'notes/b.md'),
        ]),
      ),
    );
    expect(validatePlan(p).diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    const lifted = liftedTouches(p);
    // Own globs first, then the substeps' in document order (nested ones too), duplicates dropped.
    expect(lifted.get('step-1')).toEqual(['src/db/**']);
    expect(lifted.get('step-2')).toEqual(['lib/**', 'src/db/schema.ts', 'notes/a.md', 'lib/x.ts']);
    expect(lifted.get('step-3')).toEqual(['notes/b.md']);
    // A substep keeps its own.
    expect(lifted.get('step-2-1')).toEqual(['src/db/schema.ts', 'notes/a.md']);
    expect(lifted.get('step-2-2')).toEqual([]);
    // step-1 and step-2 meet in src/db; step-3 (notes/b.md) meets neither.
    expect(schedule(p, { implementer: null, checkpoints: false }).apart).toEqual([['step-1', 'step-2']]);
  });

  it('mayDeclareTouches: true for every spelling of the label the parser reads, false without one', () => {
    for (const label of ['**Touches:**', '**TOUCHES :**', '__touches:__', '**Touches:**\n']) {
      const text = plan('src/**').replace('**Touches:**', label);
      expect(parsePlan(Buffer.from(text)).steps[0]!.touches, label).toEqual(['src/**']);
      expect(mayDeclareTouches(Buffer.from(text)), label).toBe(true);
    }
    const none = planText([stepText({ id: '1', deps: [], tasks: ['a'] })]);
    expect(mayDeclareTouches(Buffer.from(none))).toBe(false);
  });
});
