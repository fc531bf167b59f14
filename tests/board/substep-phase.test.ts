/**
 * The board beside a run (`run --board`, docs/board.md) says which substep a running step's phase is for,
 * as the run's own lines do (docs/run.md §1.3): the card's `phase_substep`, null for the step's own phases.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stepText } from '../helpers/plan.js';
import { holdingImplementer, planText, runRepo, startRun } from '../run/helpers.js';
import { http, own, whereOf } from './helpers.js';
import { until } from './page.js';

const PLAN = planText([
  stepText({ id: '1', title: 'Parent', commit: 'feat: parent', tasks: ['write parent'] }),
  stepText({ id: '1.1', level: 5, title: 'First', commit: 'feat: first', tasks: ['write first'] }),
]);

describe('tugcode run --board: a substep on the card', () => {
  it("shows the substep a running step's phase is for, then none for the step's own", async () => {
    const root = runRepo(PLAN);
    const impl = holdingImplementer();
    for (const s of ['step-1-1', 'step-1']) writeFileSync(join(impl.hold, `${s}-a1`), '');
    const run = startRun(root, ['demo', '--implementer', impl.argv, '--board', '--heartbeat', '600']);
    try {
      const w = whereOf(
        await until('the board line', () => {
          if (run.child.exitCode !== null) throw new Error(`run ended: ${JSON.stringify(run.events().at(-1))}`);
          return run.events().find((e) => e.type === 'board');
        }),
      );
      const card = async () =>
        (await http(w.base, `/api/snapshot?token=${w.token}`, { headers: own(w) })).json?.snapshot?.plans[0]?.cards[0];
      const sub = await until('step-1-1 in its implementer', async () => {
        const c = await card();
        return c?.phase === 'implementer' && c.phase_substep === 'step-1-1' ? c : null;
      });
      expect(sub).toMatchObject({ anchor: 'step-1', lane: 'running' });
      rmSync(join(impl.hold, 'step-1-1-a1'));
      const own1 = await until("step-1's own implementer", async () => {
        const c = await card();
        return c?.phase === 'implementer' && c.phase_substep === null ? c : null;
      });
      expect(own1).toMatchObject({ anchor: 'step-1', lane: 'running' });
      rmSync(join(impl.hold, 'step-1-a1'));
      const r = await run.done;
      expect(r.code, r.stderr).toBe(0);
    } finally {
      rmSync(impl.hold, { recursive: true, force: true });
      if (run.child.exitCode === null) run.child.kill('SIGKILL');
    }
  }, 90_000);
});
