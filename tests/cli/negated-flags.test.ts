/**
 * `--no-x` flags through the built CLI. Commander stores `--no-x` as `x: false`, so a table field named
 * `no_x` must be read from there; each negated flag here is shown to change what the command does.
 */
import { describe, expect, it } from 'vitest';
import { INPUT_TABLES } from '../../src/contract/inputs/index.js';
import { flagOf } from '../../src/contract/inputs/fields.js';
import { implementerScript, planText, runJsonl, runRepo, step } from '../run/helpers.js';

/** Every negated flag of every table, as `command --no-x`: each must have a behaviour test below. */
const TESTED = ['run --no-checkpoints'];

describe('negated flags', () => {
  it('every --no-* flag of the input tables has a behaviour test here', () => {
    const negated = Object.values(INPUT_TABLES).flatMap((t) =>
      Object.entries(t.fields)
        .filter(([n, f]) => f.arg === undefined && flagOf(n, f).startsWith('--no-'))
        .map(([n, f]) => `${t.command} ${flagOf(n, f)}`),
    );
    expect(negated.sort()).toEqual([...TESTED].sort());
  });

  it('run --no-checkpoints does not run checkpoint commands', () => {
    // The checkpoint always fails: only a run that skips it can complete the step.
    const plan = planText([step(1, 'Base', { checkpoint: 'exit 7' })]);
    const impl = implementerScript();

    const checked = runJsonl(runRepo(plan), ['demo', '--implementer', impl.argv, '--max-attempts', '1']);
    expect(checked.code).not.toBe(0);
    expect(checked.events.at(-1)).toMatchObject({ type: 'summary', status: 'error' });
    expect(checked.events.at(-1).failed_steps[0].reason).toMatch(/CheckpointFailed/);

    const skipped = runJsonl(runRepo(plan), [
      'demo',
      ...['--implementer', impl.argv, '--max-attempts', '1', '--no-checkpoints'],
    ]);
    expect(skipped.code, skipped.stdout + skipped.stderr).toBe(0);
    expect(skipped.events.at(-1)).toMatchObject({ type: 'summary', status: 'ok', steps_completed: ['step-1'] });
  });
});
