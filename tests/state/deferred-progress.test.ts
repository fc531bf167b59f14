/**
 * A deferred item is closed, not done (docs/state.md §2, §5): a task added to the plan under a step already
 * completed becomes deferred at `state init --force`, and `state show`, `state list` and `state update` count
 * it in the total, not as done, and name it apart — the step no longer reads 100 %.
 */
import { describe, expect, it } from 'vitest';
import { git, writeFiles } from '../helpers/repo.js';
import { DEMO_PATH, planRepo, planText, type StepSpec } from './helpers.js';
import { st, stText } from './cli-helpers.js';

const STEPS: StepSpec[] = [
  { id: '1', title: 'One', deps: [], tasks: ['first', 'second'] },
  { id: '2', title: 'Two', deps: ['step-1'], tasks: ['third'] },
];

/** step-1 completed by hand, then a task added under it in the plan and the state re-initialized. */
function lateTask(): string {
  const root = planRepo({ [DEMO_PATH]: planText(STEPS) });
  for (const args of [
    ['init', 'demo'],
    ['claim', 'demo'],
    ['start', 'demo', 'step-1'],
    ['update', 'demo', 'step-1', '--all-tasks', 'completed'],
    ['complete', 'demo', 'step-1'],
  ])
    expect(st(root, args).json.status, args.join(' ')).toBe('ok');
  const late = [{ ...STEPS[0]!, tasks: [...STEPS[0]!.tasks!, 'added later'] }, STEPS[1]!];
  writeFiles(root, { [DEMO_PATH]: planText(late) });
  git(root, 'commit', '-qam', 'plan: a task under step-1');
  expect(st(root, ['init', 'demo', '--force']).json.status).toBe('ok');
  return root;
}

describe('a deferred item is not done', () => {
  it('state show: the added task is deferred, and the step reads 2/3 (1 deferred), not 3/3 100 %', () => {
    const root = lateTask();
    const step1 = st(root, ['show', 'demo']).json.plans[0].steps[0];
    expect(step1).toMatchObject({ anchor: 'step-1', status: 'completed' });
    expect(step1.counts.tasks).toEqual({ open: 0, in_progress: 0, completed: 2, deferred: 1 });
    const text = stText(root, ['show', 'demo']).stdout;
    expect(text).toContain('Step 1: One [completed]\n  Tasks:       2/3  ████████░░░░  66% (1 deferred)\n');
    expect(text).not.toContain('3/3');
    // The items themselves, with the reason, when listed.
    expect(stText(root, ['show', 'demo', '--items', 'all']).stdout).toContain(
      'task 2 [~] added later (deferred: added to a completed step by state init --force)',
    );
  });

  it('state list and state update count it apart too', () => {
    const root = lateTask();
    expect(st(root, ['list']).json.plans[0]).toMatchObject({ items_completed: 3, items_total: 4, items_deferred: 1 });
    expect(stText(root, ['list']).stdout).toContain('2/4 (1 deferred)');

    expect(st(root, ['claim', 'demo']).json.step_anchor).toBe('step-2');
    const upd = stText(root, ['update', 'demo', 'step-2', '--task', '0', 'deferred', '--reason', 'not now']);
    expect(upd.stdout).toContain('Updated 1 item(s) of step-2: tasks 0/1 (1 deferred), tests 0/0, checkpoints 0/0');
  });
});
