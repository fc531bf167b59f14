/**
 * The usage of an interrupted run (docs/run.md §7.1): an implementer that wrote TUG_USAGE_OUT and is still
 * running when the run is stopped. SIGINT/SIGTERM: recorded under the claim before it is released, with
 * its `usage` event. SIGKILL of the driver: the next run records what the file holds when it adopts the
 * worker's claim. Real git, real state, the built CLI, real signals.
 */
import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stepText } from '../helpers/plan.js';
import { nodeImplementer, planText, runJsonl, runRepo, startRun, step, tugJson, waitUntil } from './helpers.js';

const PLAN = '.tugtool/tugplan-demo.md';
const ONE = planText([step(1, 'Base', { checkpoint: 'test -f step-1.txt' })]);
const SUB = planText([
  stepText({ id: '1', title: 'Base', commit: 'feat: base', tasks: ['write base'] }),
  stepText({ id: '1.1', level: 5, title: 'Part', commit: 'feat: part', tasks: ['write part'] }),
]);
const REPORT = { input_tokens: 1000, output_tokens: 100, cost_usd: 0.5 };

/** Reports REPORT, then, while the file `hold` is in its directory, waits (the run is signalled meanwhile). */
function reportingImplementer() {
  return nodeImplementer(`
writeFileSync(process.env.TUG_USAGE_OUT, JSON.stringify(${JSON.stringify(REPORT)}));
writeFileSync(join(dir, 'started-a' + attempt), String(process.pid));
while (existsSync(join(dir, 'hold'))) await sleep(50);
writeFileSync(join(wt, step + '.txt'), step + '\\n');
`);
}

function planUsage(root: string): any {
  const r = tugJson(root, ['state', 'show', PLAN]);
  expect(r.code, r.stderr).toBe(0);
  return r.json.plans[0].usage;
}

const usageFiles = (root: string) =>
  readdirSync(join(root, '.tugtool', 'logs', 'demo')).filter((f) => f.endsWith('.usage.json'));

describe('the usage of an interrupted run', () => {
  for (const [sig, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    it(`${sig}: the implementer's report is recorded under the claim before it is released`, async () => {
      const root = runRepo(ONE);
      const impl = reportingImplementer();
      writeFileSync(join(impl.dir, 'hold'), '');
      const run = startRun(root, [PLAN, '--workers', '1', '--implementer', impl.argv]);
      await waitUntil('the implementer reported', () => existsSync(join(impl.dir, 'started-a1')));
      run.child.kill(sig);
      const r = await run.done;
      expect(r.code, r.stderr).toBe(code);
      const usage = r.events.filter((e) => e.type === 'usage');
      expect(usage).toMatchObject([{ step_anchor: 'step-1', role: 'implementer', attempt: 1, usage: REPORT }]);
      expect(r.events.some((e) => e.type === 'warning' && e.code === 'UsageNotRecorded')).toBe(false);
      expect(r.events.at(-1)).toMatchObject({ usage: { tokens: 1100, cost_usd: 0.5, reports: 1 } });
      expect(planUsage(root)).toMatchObject({ tokens: 1100, cost_usd: 0.5, reports: 1 });
      // The claim went back all the same, and the report is not left to count twice.
      expect(r.events.at(-1).interrupted_steps).toEqual([{ step_anchor: 'step-1', released: true }]);
      expect(usageFiles(root)).toEqual([]);
    });
  }

  it.each([
    ['a step', ONE, 'step-1-brief1.usage.json', 1],
    ['a substep (step-1-1-…, whose name starts with its parent step-1-…)', SUB, 'step-1-1-brief1.usage.json', 2],
  ])(
    'SIGKILL of the driver, %s: the next run records the report the killed run left when it adopts the claim',
    async (_what, plan, left, units) => {
      const root = runRepo(plan);
      const impl = reportingImplementer();
      writeFileSync(join(impl.dir, 'hold'), '');
      const run = startRun(root, [PLAN, '--workers', '1', '--implementer', impl.argv]);
      await waitUntil('the implementer reported', () => existsSync(join(impl.dir, 'started-a1')));
      run.child.kill('SIGKILL');
      await run.done;
      expect(planUsage(root)).toBeNull();
      expect(usageFiles(root)).toEqual([left]);

      rmSync(join(impl.dir, 'hold'));
      const again = runJsonl(root, [PLAN, '--workers', '1', '--implementer', impl.argv]);
      expect(again.code, again.stderr).toBe(0);
      expect(again.events.some((e) => e.type === 'warning' && e.code === 'UsageNotRecorded')).toBe(false);
      // This run's own report is its `usage`; the plan's totals count the killed run's too.
      const summary = again.events.at(-1);
      expect(summary.usage).toMatchObject({ tokens: 1100 * units, reports: units });
      expect(summary.plan_usage).toMatchObject({
        tokens: 1100 * (units + 1),
        cost_usd: 0.5 * (units + 1),
        reports: units + 1,
      });
      expect(planUsage(root)).toMatchObject({ tokens: 1100 * (units + 1), reports: units + 1 });
      expect(usageFiles(root)).toEqual([]);
    },
  );
});
