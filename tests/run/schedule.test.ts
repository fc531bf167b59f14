import { describe, expect, it } from 'vitest';
import { schedule, scheduleText } from '../../src/run/schedule.js';
import { doc, parse } from '../plan/helpers.js';

const diamond = parse(doc`
  ## Steps

  #### Step 1: Base

  **Depends on:** none

  **Refactors:**
  - [ ] \`rename-symbol src/a.ts:3:17 newName\`

  **Checkpoint:**
  - [ ] \`npm test\`
  - [ ] \`<your command>\`
  - [ ] run \`npm test\` and read the output
  - [ ] \`a\` then \`b\`

  #### Step 2: Left

  **Depends on:** #step-1

  #### Step 3: Right

  **Depends on:** #step-1

  **Checkpoint:**
  - [ ]  \`\`grep -c \`x\` f\`\`
  - [ ] \` \`

  #### Step 4: Join

  **Depends on:** #step-2, #step-3
`);

describe('schedule', () => {
  it('layers a diamond into waves and follows the lower step_index on the critical path', () => {
    const s = schedule(diamond, { implementer: './impl.sh', checkpoints: true });
    expect(s.waves).toEqual([['step-1'], ['step-2', 'step-3'], ['step-4']]);
    expect(s.critical_path).toEqual(['step-1', 'step-2', 'step-4']);
    expect(s.done).toEqual([]);
    expect(s.steps.map((x) => [x.step_anchor, x.wave, x.depends_on])).toEqual([
      ['step-1', 1, []],
      ['step-2', 2, ['step-1']],
      ['step-3', 2, ['step-1']],
      ['step-4', 3, ['step-2', 'step-3']],
    ]);
    expect(s.steps[0]).toEqual({
      step_anchor: 'step-1',
      title: 'Base',
      wave: 1,
      depends_on: [],
      refactors: ['rename-symbol src/a.ts:3:17 newName'],
      implementer: './impl.sh',
      checkpoint_commands: ['npm test'],
      substeps: [],
    });
    // A double-backtick span may hold a backtick; a blank span is no command.
    expect(s.steps[2]!.checkpoint_commands).toEqual(['grep -c `x` f']);
  });

  it('lists no checkpoint commands when checkpoints are off, and a null implementer as such', () => {
    const s = schedule(diamond, { implementer: null, checkpoints: false });
    expect(s.steps.every((x) => x.checkpoint_commands.length === 0 && x.implementer === null)).toBe(true);
  });

  it('leaves completed steps out and treats their dependents as free', () => {
    const s = schedule(diamond, { implementer: null, checkpoints: true, done: new Set(['step-1', 'step-3']) });
    expect(s.waves).toEqual([['step-2'], ['step-4']]);
    expect(s.critical_path).toEqual(['step-2', 'step-4']);
    expect(s.done).toEqual(['step-1', 'step-3']);
    expect(s.steps.map((x) => x.step_anchor)).toEqual(['step-2', 'step-4']);
    // depends_on still reports every lifted dependency.
    expect(s.steps[1]!.depends_on).toEqual(['step-2', 'step-3']);
  });

  it('breaks critical-path ties by step_index when the longer branch comes later', () => {
    const p = parse(doc`
      #### Step 1: A

      **Depends on:** none
      #### Step 2: B

      **Depends on:** none
      #### Step 3: C

      **Depends on:** #step-2
    `);
    const s = schedule(p, { implementer: null, checkpoints: true });
    expect(s.waves).toEqual([['step-1', 'step-2'], ['step-3']]);
    expect(s.critical_path).toEqual(['step-2', 'step-3']);
  });

  it('schedules top-level steps only, lifting substep dependencies and listing substeps under the parent', () => {
    const p = parse(doc`
      #### Step 1: One

      **Depends on:** none
      #### Step 2: Two

      **Depends on:** none
      ##### Step 2.1: Two-one

      **Depends on:** #step-2-2
      ##### Step 2.2: Two-two

      **Depends on:** #step-1
      #### Step 3: Three

      **Depends on:** #step-2-1
    `);
    const s = schedule(p, { implementer: 'impl', checkpoints: true });
    expect(s.waves).toEqual([['step-1'], ['step-2'], ['step-3']]);
    expect(s.critical_path).toEqual(['step-1', 'step-2', 'step-3']);
    const two = s.steps.find((x) => x.step_anchor === 'step-2')!;
    expect(two.depends_on).toEqual(['step-1']);
    // Inside the claim 2.2 runs before 2.1, which depends on it.
    expect(two.substeps).toEqual(['step-2-2', 'step-2-1']);
    expect(s.steps.find((x) => x.step_anchor === 'step-3')!.depends_on).toEqual(['step-2']);
  });

  it('makes a plan without Depends-on lines sequential', () => {
    const p = parse(doc`
      #### Step 1: One
      #### Step 2: Two
      ##### Step 2.1: Sub
      #### Step 3: Three
    `);
    expect(p.implicit_sequential).toBe(true);
    const s = schedule(p, { implementer: null, checkpoints: true });
    expect(s.waves).toEqual([['step-1'], ['step-2'], ['step-3']]);
    expect(s.critical_path).toEqual(['step-1', 'step-2', 'step-3']);
    expect(s.steps.map((x) => x.substeps)).toEqual([[], ['step-2-1'], []]);
  });

  it('does not hang on a cycle (an invalid plan): the cycle becomes the last wave', () => {
    const p = parse(doc`
      #### Step 1: One

      **Depends on:** none
      #### Step 2: Two

      **Depends on:** #step-3
      #### Step 3: Three

      **Depends on:** #step-2
    `);
    const s = schedule(p, { implementer: null, checkpoints: true });
    expect(s.waves).toEqual([['step-1'], ['step-2', 'step-3']]);
    expect(s.critical_path).toEqual(['step-1']);
  });

  it('gives an empty schedule for a plan without steps', () => {
    const s = schedule(parse('# Nothing\n'), { implementer: null, checkpoints: true });
    expect(s).toEqual({ waves: [], critical_path: [], steps: [], done: [], apart: [] });
    expect(scheduleText(s)).toBe('nothing to run: the plan has no steps\n');
  });
});

describe('scheduleText', () => {
  it('shows the waves, the critical path and what each step runs', () => {
    const text = scheduleText(schedule(diamond, { implementer: './impl.sh', checkpoints: true }));
    expect(text).toBe(
      [
        '4 steps in 3 waves',
        '',
        'wave 1: step-1',
        'wave 2: step-2, step-3',
        'wave 3: step-4',
        'critical path: step-1 → step-2 → step-4 (3 steps)',
        '',
        'step-1  Base  (wave 1)',
        '  depends on:   none',
        '  refactor:     rename-symbol src/a.ts:3:17 newName',
        '  implementer:  ./impl.sh',
        '  checkpoint:   npm test',
        '',
        'step-2  Left  (wave 2)',
        '  depends on:   step-1',
        '  implementer:  ./impl.sh',
        '',
        'step-3  Right  (wave 2)',
        '  depends on:   step-1',
        '  implementer:  ./impl.sh',
        '  checkpoint:   grep -c `x` f',
        '',
        'step-4  Join  (wave 3)',
        '  depends on:   step-2, step-3',
        '  implementer:  ./impl.sh',
        '',
      ].join('\n'),
    );
  });

  it('says so when every step is completed', () => {
    const all = new Set(['step-1', 'step-2', 'step-3', 'step-4']);
    expect(scheduleText(schedule(diamond, { implementer: null, checkpoints: true, done: all }))).toBe(
      'nothing to run: every step is completed\n',
    );
  });
});
