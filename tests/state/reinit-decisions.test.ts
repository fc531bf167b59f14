/**
 * A person's part survives a re-initialisation (docs/state.md §3.11): after `state init --force` from a plan
 * edited elsewhere, a step waiting for a decision still waits, and an approved one still carries its kept
 * commit, as long as its own work (items, refactor rows, dependencies, substeps) is the same. A step whose
 * work changed starts over, since the decision was about other work.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { OpsContext, newCall } from '../../src/ops/context.js';
import { stateLog, stateShow } from '../../src/ops/state-read.js';
import { stateClaim, stateDecide, stateInit } from '../../src/ops/state-write.js';
import { BACKENDS, backend } from '../pg/backend.js';
import { planText, type StepSpec } from '../helpers/plan.js';
import { addWorktree } from './cli-helpers.js';
import { planRepo } from './helpers.js';

const SHA = 'b'.repeat(40);
const PATH = '.tugtool/tugplan-demo.md';
const STEPS: StepSpec[] = [
  { id: '1', deps: [], tasks: ['one'] },
  { id: '2', deps: [], tasks: ['two'] },
  { id: '3', deps: ['step-1'], tasks: ['three'] },
];

describe.each(BACKENDS)('state init --force and the decisions of people [%s]', (kind) => {
  it('keeps a wait and an approval on unchanged steps, and drops them on a step whose work changed', async () => {
    const b = await backend(kind);
    const root = planRepo({ [PATH]: planText(STEPS) });
    const w = addWorktree(root, 'one');
    const ops = new OpsContext({ cwd: root, env: { ...process.env, ...b.env } });
    try {
      const call = newCall('test');
      await stateInit(ops, { plan: 'demo' }, call);
      const store = await ops.store(call);
      const sc = await ops.stateCall(call);
      // step-1 and step-2 escalated by their reviewers; a person approves step-2.
      for (const step of ['step-1', 'step-2']) {
        const c = await stateClaim(ops, { plan: 'demo', worktree: w, step }, call);
        if (!c.claimed) throw new Error(`${step} not claimed`);
        await store.escalate(sc, {
          plan: 'demo',
          step,
          worktree: w,
          attempt: c.attempt,
          review_commit: SHA,
          reason: 'unsure',
        });
      }
      await stateDecide(ops, { plan: 'demo', step: 'step-2', approve: true }, newCall('state decide'));

      const steps = async () =>
        Object.fromEntries(
          ((await stateShow(ops, { plan: 'demo', items: 'none' }, call)).plans[0]?.steps ?? []).map((s: any) => [
            s.anchor,
            { status: s.status, human_decision: s.human_decision ?? null, review_commit: s.review_commit ?? null },
          ]),
        );
      const reinit = async (specs: StepSpec[]) => {
        writeFileSync(join(root, PATH), planText(specs));
        return stateInit(ops, { plan: 'demo', force: true }, newCall('state init'));
      };

      // A step added elsewhere: both decisions stand.
      expect(await reinit([...STEPS, { id: '4', deps: [], tasks: ['four'] }])).toMatchObject({ reinitialized: true });
      expect(await steps()).toMatchObject({
        'step-1': { status: 'needs_human', review_commit: SHA },
        'step-2': { status: 'pending', human_decision: 'approved', review_commit: SHA },
        'step-3': { status: 'pending' },
        'step-4': { status: 'pending' },
      });
      const log = await stateLog(ops, { plan: 'demo' }, call);
      expect(log.events.at(-1)?.details).toMatchObject({ reinitialized: true, kept_decisions: ['step-1', 'step-2'] });

      // step-1's task changed: its wait was about other work, so it starts over; step-2's approval stands.
      await reinit([{ ...STEPS[0]!, tasks: ['one, done differently'] }, STEPS[1]!, STEPS[2]!]);
      expect(await steps()).toMatchObject({
        'step-1': { status: 'pending', human_decision: null, review_commit: null },
        'step-2': { status: 'pending', human_decision: 'approved', review_commit: SHA },
      });

      // A new dependency of step-2 changes what it builds on: the approval goes too.
      await reinit([{ ...STEPS[0]!, tasks: ['one, done differently'] }, { ...STEPS[1]!, deps: ['step-1'] }, STEPS[2]!]);
      expect(await steps()).toMatchObject({
        'step-2': { status: 'pending', human_decision: null, review_commit: null },
      });
    } finally {
      await ops.close();
    }
  });
});
