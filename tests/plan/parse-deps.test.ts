import { describe, expect, it } from 'vitest';
import { liftedDependencies, topLevelOf } from '../../src/plan/lift.js';
import { structureOf } from '../../src/plan/structure.js';
import { sha256Hex } from '../../src/kernel/ids.js';
import { doc, parse, step } from './helpers.js';

describe('Depends on (rule 7)', () => {
  it('resolves #anchor, bare anchor and "Step <id>" tokens separated by commas or spaces', () => {
    const p = parse(doc`
      #### Step 1: One {#one}
      #### Step 2.1: Two
      #### Step PRE-6: Pre
      #### Step 4: Four

      **Depends on:** #one, step-2-1 Step PRE-6
    `);
    expect(step(p, 'step-4').depends_on).toEqual(['one', 'step-2-1', 'step-pre-6']);
    expect(p.diagnostics).toEqual([]);
  });

  it('reads a markdown link to a step anchor as that anchor: [Step 1](#one), [the cache](#step-2-1)', () => {
    const p = parse(doc`
      #### Step 1: One {#one}
      #### Step 2.1: Two
      #### Step 4: Four

      **Depends on:** [Step 1](#one), [the cache step](#step-2-1)
    `);
    expect(step(p, 'step-4').depends_on).toEqual(['one', 'step-2-1']);
    expect(p.diagnostics).toEqual([]);
  });

  it('merges several Depends-on lines of one step, without duplicates', () => {
    const p = parse(doc`
      #### Step 1: One
      #### Step 2: Two
      #### Step 3: Three

      **Depends on:** #step-1

      **Depends on:** #step-2, #step-1
    `);
    expect(step(p, 'step-3').depends_on).toEqual(['step-1', 'step-2']);
    expect(step(p, 'step-3').depends_line).toBe(5);
  });

  it('treats none as no dependency and reports an unresolvable token as E010 on its line', () => {
    const p = parse(doc`
      #### Step 1: One

      **Depends on:** none
      #### Step 2: Two

      **Depends on:** #step-1, #context, Step 9
    `);
    expect(step(p, 'step-1').depends_on).toEqual([]);
    expect(step(p, 'step-2').depends_on).toEqual(['step-1']);
    expect(p.diagnostics.map((d) => [d.code, d.line, d.anchor])).toEqual([
      ['E010', 6, 'step-2'],
      ['E010', 6, 'step-2'],
    ]);
    expect(p.diagnostics[1]!.message).toContain('Step 9');
  });

  it('resolves forward references', () => {
    const p = parse('#### Step 1: One\n\n**Depends on:** #step-2\n#### Step 2: Two\n');
    expect(step(p, 'step-1').depends_on).toEqual(['step-2']);
  });
});

describe('implicit order and edges (rule 8)', () => {
  it('makes top-level steps sequential when the plan has no Depends-on line, never substeps', () => {
    const p = parse(doc`
      #### Step 1: One
      #### Step 2: Two
      ##### Step 2.1: Sub
      ##### Step 2.2: Sub
      #### Step 3: Three
    `);
    expect(p.implicit_sequential).toBe(true);
    expect(p.edges).toEqual([
      ['step-2', 'step-1'],
      ['step-3', 'step-2'],
    ]);
    expect(p.steps.every((s) => s.depends_on.length === 0)).toBe(true);
  });

  it('uses only declared edges once any step has a Depends-on line, even "none"', () => {
    const p = parse('#### Step 1: One\n\n**Depends on:** none\n#### Step 2: Two\n');
    expect(p.implicit_sequential).toBe(false);
    expect(p.edges).toEqual([]);
  });
});

describe('lifting', () => {
  const plan = parse(doc`
    #### Step 1: One
    ##### Step 1.1: One one
    #### Step 2: Two

    **Depends on:** #step-1-1
    ##### Step 2.1: Two one

    **Depends on:** #step-2-2, #step-1
    ##### Step 2.2: Two two
    #### Step 3: Three

    **Depends on:** #step-2
  `);

  it('finds the top-level ancestor of any step', () => {
    expect(topLevelOf(plan, 'step-2-1')).toBe('step-2');
    expect(topLevelOf(plan, 'step-3')).toBe('step-3');
    expect(topLevelOf(plan, 'nope')).toBeNull();
  });

  it('lifts cross-subtree dependencies to top-level steps and drops those inside the subtree', () => {
    expect(Object.fromEntries(liftedDependencies(plan))).toEqual({
      'step-1': [],
      'step-2': ['step-1'],
      'step-3': ['step-2'],
    });
  });
});

describe('structure hash and plan hash', () => {
  const base = doc`
    ## Phase 1: Title
    Intro prose.
    #### Step 1: One

    **Commit:** \`feat: one\`

    **References:** (#context)

    **Tasks:**
    - [ ] task one

    **Refactors:**
    - [ ] \`organize-imports --file a.ts\`
    #### Step 2: Two
    ##### Step 2.1: Sub

    **Depends on:** #step-1-x
  `;

  it('hashes anchors, parents, lifted edges, per-kind counts and refactor op_texts', () => {
    const p = parse(base.replace('#step-1-x', '#step-1'));
    expect(structureOf(p)).toEqual({
      v: 1,
      steps: [
        {
          anchor: 'step-1',
          parent: null,
          counts: { task: 1, test: 0, checkpoint: 0 },
          refactors: ['organize-imports --file a.ts'],
        },
        { anchor: 'step-2', parent: null, counts: { task: 0, test: 0, checkpoint: 0 }, refactors: [] },
        { anchor: 'step-2-1', parent: 'step-2', counts: { task: 0, test: 0, checkpoint: 0 }, refactors: [] },
      ],
      edges: ['step-2 -> step-1'],
    });
    expect(p.structure_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('hashes the file bytes as plan_hash, for strings and bytes alike', () => {
    const text = base;
    expect(parse(text).plan_hash).toBe(sha256Hex(Buffer.from(text, 'utf8')));
    expect(parse(new Uint8Array(Buffer.from(text, 'utf8'))).plan_hash).toBe(parse(text).plan_hash);
  });

  it('ignores prose changes: titles, item texts, commit messages, references, text outside steps', () => {
    const a = parse(base);
    const b = parse(
      base
        .replace('Title', 'Another title')
        .replace('Intro prose.', 'Different intro.')
        .replace('One', 'Uno')
        .replace('task one', 'the first task, reworded')
        .replace('feat: one', 'feat: uno')
        .replace('(#context)', '(#elsewhere)'),
    );
    expect(b.structure_hash).toBe(a.structure_hash);
    expect(b.plan_hash).not.toBe(a.plan_hash);
  });

  it('changes when an item, a refactor, a step or a dependency changes', () => {
    const a = parse(base).structure_hash;
    expect(parse(base.replace('- [ ] task one', '- [ ] task one\n- [ ] task two')).structure_hash).not.toBe(a);
    expect(parse(base.replace('--file a.ts', '--file b.ts')).structure_hash).not.toBe(a);
    expect(parse(base + '#### Step 3: Three\n').structure_hash).not.toBe(a);
    expect(parse(base.replace('#step-1-x', '#step-1')).structure_hash).not.toBe(a);
  });
});
