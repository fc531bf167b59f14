/**
 * The running plan is the run's contract (docs/run.md §2, docs/agents.md §1): an implementer that changes
 * it in its worktree — a step added, or prose only — fails its attempt `PlanEdited` (counted toward
 * --max-attempts), the worker's reset discards the edit, nothing of it reaches the integration branch, and
 * the next run does not stop on PlanDrift. `.tugtool/config.toml` is held the same way; a new plan under
 * `.tugtool/` is the step's file like any other. Real repositories, the built CLI, scripted implementers.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkSchema } from '../helpers/cli.js';
import { runEventSchema } from '../../src/contract/schemas/run.js';
import { git, tempDir } from '../helpers/repo.js';
import { sql } from '../state/helpers.js';
import { nodeImplementer, planText, runJsonl, runRepo, step, stepCommits } from './helpers.js';
import { conflictRepo, ok, racingImplementer, resolverScript } from './resolve-helpers.js';

const PLAN_PATH = '.tugtool/tugplan-demo.md';
const PLAN = planText([step(1, 'Base'), step(2, 'Next', { deps: [1] })]);

/** Writes its step file; on step-1's attempts up to `upTo`, also runs `edit` (plan: process.env.TUG_PLAN_ABS). */
function editingImplementer(edit: string, upTo = 99) {
  return nodeImplementer(`
writeFileSync(join(wt, step + '.txt'), step + '\\n');
if (step === 'step-1' && attempt <= ${upTo}) { const plan = process.env.TUG_PLAN_ABS; ${edit} }
`);
}

const ADD_STEP = `appendFileSync(plan, '\\n#### Step 99: Sneaky {#step-99}\\n\\n**Tasks:**\\n- [ ] sneaky\\n');`;

describe('tugcode run: an implementer that edits the running plan', () => {
  it('adding a step fails the attempt PlanEdited; with --max-attempts 1 the step fails, nothing integrates, and the next run does not loop', () => {
    const root = runRepo(PLAN);
    const impl = editingImplementer(ADD_STEP);
    const r = runJsonl(root, ['demo', '--workers', '1', '--max-attempts', '1', '--implementer', impl.argv]);
    for (const e of r.events) checkSchema(runEventSchema, e);
    const summary = r.events.at(-1);
    expect(r.code, r.stdout + r.stderr).toBe(4);
    expect(summary.error.code).toBe('PlanIncomplete');
    expect(summary.failed_steps.map((f: { step_anchor: string }) => f.step_anchor)).toEqual(['step-1']);
    const failures = r.events.filter((e) => e.type === 'attempt_failed');
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatchObject({ step_anchor: 'step-1', attempt: 1, reason_code: 'PlanEdited' });
    for (const word of ['step-1', 'the implementer', 'attempt 1', PLAN_PATH, 'main checkout'])
      expect(failures[0].reason).toContain(word);
    expect(JSON.stringify(r.events)).not.toContain('PlanDrift');
    expect(
      sql<{ status: string; failures: number }>(root, `SELECT status, failures FROM steps WHERE anchor = 'step-1'`)[0],
    ).toMatchObject({
      status: 'failed',
      failures: 1,
    });
    // Nothing of the step reached the integration branch; its plan is the committed one.
    expect(stepCommits(root, 'tugplan/demo')).toEqual([]);
    expect(git(root, 'show', `tugplan/demo:${PLAN_PATH}`)).toBe(readFileSync(join(root, PLAN_PATH), 'utf8'));
    expect(readFileSync(join(root, PLAN_PATH), 'utf8')).toBe(PLAN);

    // Running again: no PlanDrift, no attempt paid for — the failed step waits for a reset.
    const again = runJsonl(root, ['demo', '--workers', '1', '--max-attempts', '1', '--implementer', impl.argv]);
    expect(again.code, again.stdout + again.stderr).toBe(4);
    expect(again.events.at(-1).error.code).toBe('PlanIncomplete');
    expect(again.events.filter((e) => e.type === 'claimed')).toEqual([]);
    expect(JSON.stringify(again.events)).not.toContain('PlanDrift');
  });

  it('a later attempt that leaves the plan alone completes the step: the reset dropped the edit', () => {
    const root = runRepo(PLAN);
    const impl = editingImplementer(ADD_STEP, 1);
    const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const failures = r.events.filter((e) => e.type === 'attempt_failed');
    expect(failures.map((f) => [f.step_anchor, f.attempt, f.reason_code])).toEqual([['step-1', 1, 'PlanEdited']]);
    expect(stepCommits(root, 'tugplan/demo')).toEqual(['step-1', 'step-2']);
    expect(git(root, 'show', `tugplan/demo:${PLAN_PATH}`)).toBe(PLAN);
    expect(git(root, 'diff', '--name-only', 'main', 'tugplan/demo')).not.toContain(PLAN_PATH);
  });

  it('a prose-only edit fails the same way, and nothing is integrated', () => {
    const root = runRepo(PLAN);
    const impl = editingImplementer(
      `writeFileSync(plan, readFileSync(plan, 'utf8').replace('write base', 'write base (and more)'));`,
    );
    const r = runJsonl(root, ['demo', '--workers', '1', '--max-attempts', '1', '--implementer', impl.argv]);
    expect(r.code, r.stdout + r.stderr).toBe(4);
    const failures = r.events.filter((e) => e.type === 'attempt_failed');
    expect(failures.map((f) => [f.step_anchor, f.reason_code])).toEqual([['step-1', 'PlanEdited']]);
    expect(stepCommits(root, 'tugplan/demo')).toEqual([]);
    expect(git(root, 'show', `tugplan/demo:${PLAN_PATH}`)).toBe(PLAN);
  });

  it('.tugtool/config.toml is the contract too; a new plan under .tugtool/ is the step’s own file', () => {
    const root = runRepo(PLAN);
    const config = nodeImplementer(`
writeFileSync(join(wt, step + '.txt'), step + '\\n');
appendFileSync(join(wt, '.tugtool', 'config.toml'), '\\n# widened\\n');
`);
    const c = runJsonl(root, ['demo', '--workers', '1', '--max-attempts', '1', '--implementer', config.argv]);
    expect(c.code, c.stdout + c.stderr).toBe(4);
    const failures = c.events.filter((e) => e.type === 'attempt_failed');
    expect(failures.map((f) => [f.step_anchor, f.reason_code])).toEqual([['step-1', 'PlanEdited']]);
    expect(failures[0].reason).toContain('.tugtool/config.toml');
    expect(stepCommits(root, 'tugplan/demo')).toEqual([]);

    const other = runRepo(PLAN);
    const later = nodeImplementer(`
writeFileSync(join(wt, step + '.txt'), step + '\\n');
if (step === 'step-2') writeFileSync(join(wt, '.tugtool', 'tugplan-later.md'), '# Later work\\n');
`);
    const r = runJsonl(other, ['demo', '--workers', '1', '--implementer', later.argv]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.events.filter((e) => e.type === 'attempt_failed')).toEqual([]);
    expect(git(other, 'show', 'tugplan/demo:.tugtool/tugplan-later.md')).toBe('# Later work\n');
  });

  it('a resolver that edits the plan fails the attempt PlanEdited naming it and its log; the redo integrates no edit', () => {
    const counter = join(tempDir('tugcode-count-'), 'count');
    const root = conflictRepo(counter);
    const plan = readFileSync(join(root, PLAN_PATH), 'utf8');
    const impl = racingImplementer();
    const merge = resolverScript('merge');
    const res = `sh -c ${JSON.stringify(`printf '\\nmore prose\\n' >> "$TUG_PLAN_ABS"; exec ${merge.argv}`)}`;
    const r = runJsonl(root, ['demo', '--workers', '2', '--implementer', impl.argv, '--resolver', res]);
    ok(r);
    const failed = r.events.filter((e) => e.type === 'attempt_failed');
    expect(failed).toEqual([expect.objectContaining({ step_anchor: 'step-3', attempt: 1, reason_code: 'PlanEdited' })]);
    expect(failed[0].reason).toContain('the resolver of attempt 1');
    expect(failed[0].logs).toEqual(['.tugtool/logs/demo/step-3-resolve1-attempt1.log']);
    expect(stepCommits(root, 'tugplan/demo')).toEqual(['step-1', 'step-2', 'step-3']);
    expect(git(root, 'show', `tugplan/demo:${PLAN_PATH}`)).toBe(plan);
  });
});
