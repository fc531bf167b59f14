import { describe, expect, it } from 'vitest';
import { codes, doc, parse, step } from './helpers.js';

describe('plan title (rule 1)', () => {
  it('takes the first level-1 or level-2 heading without its Phase prefix and anchor', () => {
    expect(parse('## Phase 1.0: Greeting command {#phase-greeting}\n').title).toBe('Greeting command');
    expect(parse('# Phase 26: Extract tug — engine\n## Later\n').title).toBe('Extract tug — engine');
    expect(parse('### Not a title\n## <Plan Title> {#phase-slug}\n').title).toBe('<Plan Title>');
    expect(parse('no headings at all\n').title).toBeNull();
  });
});

describe('step headings (rule 2)', () => {
  it('recognises Step <id> with a colon, an em dash or a hyphen at levels 2 to 6, case-insensitively', () => {
    const p = parse(doc`
      ## Step 1: Colon
      ### step 2 — Em dash
      #### STEP 3 - Hyphen
      ##### Step 4.1a: Letters
      ###### Step PRE-6: Prefix
    `);
    expect(p.steps.map((s) => [s.id, s.title, s.level])).toEqual([
      ['1', 'Colon', 2],
      ['2', 'Em dash', 3],
      ['3', 'Hyphen', 4],
      ['4.1a', 'Letters', 5],
      ['PRE-6', 'Prefix', 6],
    ]);
  });

  it('does not treat "Step 2 Summary", a level-1 heading or a heading without a title as a step', () => {
    const p = parse(doc`
      #### Step 1: Real
      #### Step 2 Summary
      # Step 3: Level one
      #### Step 4:
    `);
    expect(p.steps.map((s) => s.anchor)).toEqual(['step-1']);
  });

  it('counts only step headings inside the first Execution Steps section when the plan has one', () => {
    const p = parse(doc`
      ## Plan
      ### Walkthrough
      ##### Step 1: Agent locates the symbol
      ### 26.5 Execution Steps
      #### Step 1: Real one
      #### Step 2: Another
      ### Deliverables
      #### Step 3: After the scope
    `);
    expect(p.steps.map((s) => s.title)).toEqual(['Real one', 'Another']);
  });

  it('counts every step heading when the plan has no Execution Steps heading', () => {
    const p = parse('## Plan\n### Step 1: a\n### Step 2: b\n');
    expect(p.steps.map((s) => s.anchor)).toEqual(['step-1', 'step-2']);
  });

  it('ignores step headings in code fences (backticks and tildes), inline code and HTML blocks', () => {
    const p = parse(doc`
      ### Execution Steps
      #### Step 1: Real
      \`\`\`md
      #### Step 2: In a backtick fence
      \`\`\`
      ~~~
      #### Step 3: In a tilde fence
      ~~~
      <div>
      #### Step 4: In HTML
      </div>

      \`#### Step 5: inline code\`
    `);
    expect(p.steps.map((s) => s.anchor)).toEqual(['step-1']);
    expect(codes(p)).toEqual(['P009', 'P009']);
    expect(p.diagnostics.map((d) => d.line)).toEqual([4, 7]);
  });
});

describe('anchors (rule 3)', () => {
  it('uses an explicit trailing anchor, else derives step- + the lowercased id with dots as hyphens', () => {
    const p = parse(doc`
      ### Step 1: Explicit {#first-step}
      ### Step 2.1: Derived
      ### Step PRE-6: Prefixed
      ### Step 4.1a: Letter
    `);
    expect(p.steps.map((s) => s.anchor)).toEqual(['first-step', 'step-2-1', 'step-pre-6', 'step-4-1a']);
    expect(step(p, 'first-step').title).toBe('Explicit');
  });

  it('lists every explicit and derived anchor in document order, duplicates kept, including paragraph anchors', () => {
    const p = parse(doc`
      ## Title {#top}
      ### Context {#context}
      **Spec S01: Format** {#s01-format}

      Use \`{#not-an-anchor}\` in code.
      ### Step 1: A
      ### Again {#context}
    `);
    expect(p.anchors).toEqual([
      { anchor: 'top', line: 1 },
      { anchor: 'context', line: 2 },
      { anchor: 's01-format', line: 3 },
      { anchor: 'step-1', line: 6 },
      { anchor: 'context', line: 7 },
    ]);
  });
});

describe('nesting (rule 4) and step_index (rule 14)', () => {
  it('makes a deeper step heading inside a step a substep of the innermost enclosing step', () => {
    const p = parse(doc`
      ### Execution Steps
      #### Step 1: One
      ##### Step 1.1: One one
      ###### Step 1.1a: Deep
      ##### Step 1.2: One two
      #### Step 2: Two
    `);
    expect(p.steps.map((s) => [s.anchor, s.parent_anchor, s.step_index])).toEqual([
      ['step-1', null, 0],
      ['step-1-1', 'step-1', 1],
      ['step-1-1a', 'step-1-1', 2],
      ['step-1-2', 'step-1', 3],
      ['step-2', null, 4],
    ]);
  });

  it('ends a step scope at the next heading of the same or a higher level, so ids never imply a parent', () => {
    const p = parse(doc`
      ### Execution Steps
      #### Step 2: Two
      ##### Step 2.1: Sub
      #### Step 2 Summary
      ##### Step 2.5: After the summary
      #### Step 3: Three
    `);
    expect(step(p, 'step-2-1').parent_anchor).toBe('step-2');
    expect(step(p, 'step-2-5').parent_anchor).toBeNull();
  });

  it('attaches content after the last step scope to no step', () => {
    const p = parse(doc`
      ### Execution Steps
      #### Step 1: One
      **Tasks:**
      - [ ] inside
      ### Deliverables
      - [ ] outside
    `);
    expect(step(p, 'step-1').items.map((i) => i.text)).toEqual(['inside']);
  });

  it('keeps a step open across deeper ordinary headings', () => {
    const p = parse(doc`
      #### Step 1: One
      ###### Notes
      **Tasks:**
      - [ ] still in step 1
    `);
    expect(step(p, 'step-1').items).toHaveLength(1);
  });
});

describe('P001', () => {
  it('warns on headings that start with the word Step but are neither steps nor "Step <id> <words>"', () => {
    const p = parse(doc`
      ### Execution Steps
      #### step three
      #### Step: x
      #### Steps overview
      #### Step 2 Summary
      #### Step 4.2 Tests
      #### Stepping stones
    `);
    expect(p.diagnostics.map((d) => [d.code, d.line])).toEqual([
      ['P001', 2],
      ['P001', 3],
    ]);
  });
});
