import { describe, expect, it } from 'vitest';
import { codes, counts, doc, parse, step } from './helpers.js';

describe('checklist sections (rule 5)', () => {
  it('starts sections at Tasks, Tests, Checkpoint and Checkpoints labels, case-insensitively', () => {
    const p = parse(doc`
      #### Step 1: One
      **Tasks:**
      - [ ] t

      **tests:**
      - [ ] u

      **Checkpoints:**
      - [ ] c1

      **CHECKPOINT:**
      - [ ] c2
    `);
    expect(step(p, 'step-1').items.map((i) => [i.kind, i.text])).toEqual([
      ['task', 't'],
      ['test', 'u'],
      ['checkpoint', 'c1'],
      ['checkpoint', 'c2'],
    ]);
  });

  it('accepts label headings, with or without a leading "Step <id>" and an anchor', () => {
    const p = parse(doc`
      #### Step 4: Four
      ##### Step 4.2: Sub
      ###### Tasks
      - [ ] a task
      ###### Step 4.2 Tests {#step-4-2-tests}
      - [ ] a test
      ###### Checkpoint
      - [ ] a checkpoint
    `);
    expect(counts(step(p, 'step-4-2'))).toEqual({ task: 1, test: 1, checkpoint: 1 });
  });

  it('gives a label heading at the level of a finished substep to the enclosing step', () => {
    const p = parse(doc`
      #### Step 4: Four
      ##### Step 4.1: Sub
      ###### Step 4.1a: Subsub
      **Tasks:**
      - [ ] deep task
      ###### Step 4.1 Checkpoint
      - [ ] checkpoint of 4.1
    `);
    expect(counts(step(p, 'step-4-1a'))).toEqual({ task: 1, test: 0, checkpoint: 0 });
    expect(counts(step(p, 'step-4-1'))).toEqual({ task: 0, test: 0, checkpoint: 1 });
  });

  it('keeps a section open across unknown labels and ends it at known labels and non-label headings', () => {
    const p = parse(doc`
      #### Step 1: One
      **Tests:**
      - [ ] a

      **Unit tests:**
      - [ ] b

      **Commit:** \`x\`

      - [ ] after commit

      **Tests:**
      - [ ] c
      ##### Notes
      - [ ] after heading
    `);
    const s = step(p, 'step-1');
    expect(s.items.map((i) => [i.kind, i.text])).toEqual([
      ['test', 'a'],
      ['test', 'b'],
      ['task', 'after commit'],
      ['test', 'c'],
      ['task', 'after heading'],
    ]);
    expect(p.diagnostics.map((d) => [d.code, d.line])).toEqual([
      ['P008', 10],
      ['P008', 15],
    ]);
  });

  it('requires the bold label text to end with a colon and to start the paragraph', () => {
    const p = parse(doc`
      #### Step 1: One
      **Tasks:**
      - [ ] a

      **Tests**: not a label
      - [ ] b

      Text before **Tests:**
      - [ ] c
    `);
    expect(step(p, 'step-1').items.map((i) => i.kind)).toEqual(['task', 'task', 'task']);
  });

  it('reads a label line right under a list item as a lazy continuation of that item, as markdown does', () => {
    const p = parse('#### Step 1: One\n**Tasks:**\n- [ ] a\n**Tests:**\n- [ ] b\n');
    expect(step(p, 'step-1').items.map((i) => [i.kind, i.text])).toEqual([
      ['task', 'a **Tests:**'],
      ['task', 'b'],
    ]);
  });

  it('ignores label-like bold text inside list items', () => {
    const p = parse(doc`
      #### Step 1: One
      **Tasks:**
      - **Tests:** warn
      - [ ] still a task
    `);
    expect(step(p, 'step-1').items.map((i) => i.kind)).toEqual(['task']);
  });
});

describe('checkbox items (rule 6)', () => {
  it('collects checkboxes of every list style at any depth with kind, ordinal, depth, text, checked and line', () => {
    const p = parse(doc`
      #### Step 1: One
      **Tasks:**
      - [ ] first
        continued on the next line
        - [x] nested
          * [X] deeper
      + [ ] plus
      1. [ ] ordered
      - not a checkbox
      - [~] not a checkbox either

      **Tests:**
      - [ ] a test
    `);
    const s = step(p, 'step-1');
    expect(s.items).toEqual([
      { kind: 'task', ordinal: 0, depth: 0, text: 'first continued on the next line', checked: false, line: 3 },
      { kind: 'task', ordinal: 1, depth: 1, text: 'nested', checked: true, line: 5 },
      { kind: 'task', ordinal: 2, depth: 2, text: 'deeper', checked: true, line: 6 },
      { kind: 'task', ordinal: 3, depth: 0, text: 'plus', checked: false, line: 7 },
      { kind: 'task', ordinal: 4, depth: 0, text: 'ordered', checked: false, line: 8 },
      { kind: 'test', ordinal: 0, depth: 0, text: 'a test', checked: false, line: 13 },
    ]);
  });

  it('normalizes CRLF and trims each source line of the first paragraph only', () => {
    const p = parse('#### Step 1: One\r\n**Tasks:**\r\n- [ ]   spaced   \r\n     more  \r\n\r\n  second paragraph\r\n');
    expect(step(p, 'step-1').items.map((i) => [i.text, i.line])).toEqual([['spaced more', 3]]);
  });

  it('keeps inline markup of the item text as written', () => {
    const p = parse('#### Step 1: One\n**Tasks:**\n- [ ] Run `npm test` and **check** [docs](x.md)\n');
    expect(step(p, 'step-1').items[0]!.text).toBe('Run `npm test` and **check** [docs](x.md)');
  });

  it('counts checkboxes in a step outside any section as tasks with P008, and ignores those outside steps', () => {
    const p = parse(doc`
      - [ ] before any step
      #### Step 1: One
      - [ ] stray

      **Tasks:**
      - [ ] task
    `);
    expect(step(p, 'step-1').items.map((i) => [i.kind, i.ordinal, i.text])).toEqual([
      ['task', 0, 'stray'],
      ['task', 1, 'task'],
    ]);
    expect(p.diagnostics).toEqual([
      expect.objectContaining({ code: 'P008', severity: 'warning', line: 3, anchor: 'step-1' }),
    ]);
  });

  it('gives checkboxes under a substep heading to the substep', () => {
    const p = parse(doc`
      #### Step 2: Two
      **Tasks:**
      - [ ] parent task
      ##### Step 2.1: Sub
      **Tasks:**
      - [ ] sub task
    `);
    expect(step(p, 'step-2').items.map((i) => i.text)).toEqual(['parent task']);
    expect(step(p, 'step-2-1').items.map((i) => i.text)).toEqual(['sub task']);
  });
});

describe('refactors (rule 13)', () => {
  it('puts Refactors checkboxes into refactors[] with the single code span as command, never into items', () => {
    const p = parse(doc`
      #### Step 1: One
      **Refactors:**
      - [ ] \`  rename-symbol --symbol src/a.ts::f --to g  \` then commentary
      - [ ] no code span
      - [ ] \`one\` and \`two\`

      **Tasks:**
      - [ ] task
    `);
    const s = step(p, 'step-1');
    expect(s.refactors).toEqual([
      {
        ordinal: 0,
        text: '`  rename-symbol --symbol src/a.ts::f --to g  ` then commentary',
        command: 'rename-symbol --symbol src/a.ts::f --to g',
        line: 3,
      },
      { ordinal: 1, text: 'no code span', command: null, line: 4 },
      { ordinal: 2, text: '`one` and `two`', command: null, line: 5 },
    ]);
    expect(s.items.map((i) => i.text)).toEqual(['task']);
  });

  it('accepts a Refactors label heading', () => {
    const p = parse('#### Step 1: One\n##### Refactors\n- [ ] `organize-imports --file a.ts`\n');
    expect(step(p, 'step-1').refactors.map((r) => r.command)).toEqual(['organize-imports --file a.ts']);
  });
});

describe('commit, references, purpose, metadata, decisions (rules 9–12)', () => {
  it('reads the commit message from the code span, or the bare text, and N/A as no message', () => {
    const p = parse(doc`
      #### Step 1: One
      **Commit:** \`feat(cli): add hello\`
      #### Step 2: Two
      **Commit:** docs: bare text
      #### Step 3: Three
      **Commit:** N/A (verification only)
      #### Step 4: Four
      **Commit:** \`N/A\`
    `);
    expect(p.steps.map((s) => s.commit_message)).toEqual(['feat(cli): add hello', 'docs: bare text', null, null]);
    // N/A declines the commit itself; a missing message does not (the driver then uses a default one).
    expect(p.steps.map((s) => s.no_commit ?? false)).toEqual([false, false, true, true]);
    expect(parse('#### Step 1: One\n**Commit:**\n').steps[0]!.no_commit).toBeUndefined();
  });

  it('reads the whole References paragraph across lines', () => {
    const p = parse('#### Step 1: One\n**References:** [D01] Constant greeting,\n  Spec S01, (#context,\n#strategy)\n');
    expect(step(p, 'step-1').references).toBe('[D01] Constant greeting, Spec S01, (#context, #strategy)');
  });

  it('reads the purpose before the steps', () => {
    const p = parse('## T\n\n**Purpose:** Ship a hello\nsubcommand.\n');
    expect(p.purpose).toBe('Ship a hello subcommand.');
  });

  it('reads the first Field | Value table as metadata with lowercased keys, unknown fields kept', () => {
    const p = parse(doc`
      | Field | Value |
      |------|-------|
      | Owner | ada |
      | Status | active |
      | Target branch | main |
      | Last updated | 2026-03-01 |
      | Reviewer | bob |

      | Field | Value |
      |---|---|
      | Owner | ignored |

      | Name | Value |
      |---|---|
      | Owner | other table |
    `);
    expect(p.metadata).toEqual({
      owner: 'ada',
      status: 'active',
      'target branch': 'main',
      'last updated': '2026-03-01',
      reviewer: 'bob',
    });
  });

  it('collects [Dnn] and [Qnn] headings with title, status and anchor', () => {
    const p = parse(doc`
      #### [D01] Steps start at 1, not 0 (DECIDED) {#d01-steps}
      #### [Q02] Open question (OPEN)
      #### [D03] No status
    `);
    expect(p.decisions).toEqual([
      { id: 'D01', title: 'Steps start at 1, not 0', status: 'DECIDED', anchor: 'd01-steps', line: 1 },
      { id: 'Q02', title: 'Open question', status: 'OPEN', anchor: null, line: 2 },
      { id: 'D03', title: 'No status', status: null, anchor: null, line: 3 },
    ]);
  });
});

describe('parse diagnostics', () => {
  it('sorts diagnostics by line', () => {
    const p = parse(doc`
      ### Execution Steps
      #### Step 1: One
      **Depends on:** #nope
      - [ ] stray
      #### step two
    `);
    expect(p.diagnostics.map((d) => [d.code, d.line])).toEqual([
      ['E010', 3],
      ['P008', 4],
      ['P001', 5],
    ]);
    expect(codes(p)).toHaveLength(3);
  });
});
