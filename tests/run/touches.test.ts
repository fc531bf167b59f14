/**
 * `**Touches:**` keeps overlapping steps apart (docs/state.md §3.12), as users run it: two workers, three
 * independent steps, two of which touch the same files. The two never run at the same time (from the
 * event stream); the third runs beside either; `--dry-run` names the pair; the claim rule holds on both
 * backends, and `--step` says which running step is in the way.
 */
import { describe, expect, it } from 'vitest';
import { OpsContext, newCall } from '../../src/ops/context.js';
import { stateClaim, stateInit } from '../../src/ops/state-write.js';
import { BACKENDS, backend } from '../pg/backend.js';
import { addWorktree, st, stText } from '../state/cli-helpers.js';
import { planRepo } from '../state/helpers.js';
import { planText, stepText } from '../helpers/plan.js';
import { runCli } from '../helpers/cli.js';
import { runJsonl, runRepo, tugJson } from './helpers.js';

/**
 * Runs the plan with two workers whose implementer lingers a little (so they overlap whenever the claim rule
 * lets them), checks from the event stream that step-1 and step-2 never ran together, and tells whether
 * step-3 ran beside one of them.
 */
function runApart(root: string): { together: boolean; claimed: string[] } {
  const dry = tugJson(root, ['run', 'demo', '--dry-run', '--implementer', 'true']);
  expect(dry.json.apart, dry.stderr).toEqual([['step-1', 'step-2']]);
  const r = runJsonl(root, [
    'demo',
    '--workers',
    '2',
    '--implementer',
    'sh -c "sleep 0.3; echo $TUG_STEP > $TUG_STEP.txt"',
  ]);
  expect(r.code, r.stdout + r.stderr).toBe(0);
  const running = new Set<string>();
  let together = false;
  for (const e of r.events) {
    if (e.type === 'claimed') {
      running.add(e.step_anchor);
      expect(running.has('step-1') && running.has('step-2'), 'step-1 and step-2 ran together').toBe(false);
      if (running.has('step-3') && running.size > 1) together = true;
    }
    if (e.type === 'step_completed' || e.type === 'attempt_failed') running.delete(e.step_anchor);
  }
  return { together, claimed: r.events.filter((e) => e.type === 'claimed').map((e) => e.step_anchor) };
}

const touching = (n: number, glob: string) =>
  stepText({ id: String(n), deps: [], commit: `feat: step ${n}`, tasks: [`write ${n}`], body: `**Touches:** ${glob}` });

describe('Touches in tugcode run', () => {
  it('two steps with overlapping Touches never run together; the dry run names them', () => {
    const plan = planText([touching(1, 'src/db/**'), touching(2, 'src/db/schema.ts'), touching(3, 'docs/**')]);
    const root = runRepo(plan, 'demo');
    expect(runApart(root).together).toBe(true);
  });
});

describe('Touches in tugcode run --dry-run', () => {
  it('leaves out overlapping pairs that their dependencies already order, directly or not', () => {
    const dep = (n: number, deps: string[], glob: string) =>
      stepText({ id: String(n), deps, commit: `feat: step ${n}`, tasks: [`write ${n}`], body: `**Touches:** ${glob}` });
    // step-1 → step-2 → step-3 all touch src/db: a chain, so they never run together anyway. step-4 is
    // free of the chain and overlaps each of them.
    const plan = planText([
      dep(1, [], 'src/db/**'),
      dep(2, ['step-1'], 'src/db/schema.ts'),
      dep(3, ['step-2'], 'src/**'),
      dep(4, [], 'src/db/*.ts'),
    ]);
    const root = runRepo(plan, 'demo');
    const dry = tugJson(root, ['run', 'demo', '--dry-run', '--implementer', 'true']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.json.apart).toEqual([
      ['step-1', 'step-4'],
      ['step-2', 'step-4'],
      ['step-3', 'step-4'],
    ]);
    const text = runCli(['run', 'demo', '--dry-run', '--implementer', 'true'], { cwd: root });
    expect(text.stdout.split('\n').filter((l) => l.startsWith('never together'))).toEqual([
      'never together (Touches overlap): step-1, step-4',
      'never together (Touches overlap): step-2, step-4',
      'never together (Touches overlap): step-3, step-4',
    ]);
  });
});

describe('Touches on substeps in tugcode run', () => {
  it('two steps whose substeps touch the same file never run together; the dry run names them', () => {
    const sub = (id: string, glob: string) =>
      stepText({ id, level: 5, commit: `feat: substep ${id}`, tasks: [`write ${id}`], body: `**Touches:** ${glob}` });
    const top = (n: number) => stepText({ id: String(n), deps: [], commit: `feat: step ${n}`, tasks: [`write ${n}`] });
    const plan = planText([top(1), sub('1.1', 'src/db/schema.ts'), top(2), sub('2.1', 'src/db/**'), top(3)]);
    const root = runRepo(plan, 'demo');
    const { together, claimed } = runApart(root);
    // The rule held back only the overlapping pair: step-3 ran beside one of them.
    expect(together).toBe(true);
    expect(claimed.sort()).toEqual(['step-1', 'step-2', 'step-3']);
  });
});

describe.each(BACKENDS)('the Touches claim rule [%s]', (kind) => {
  it('a ready step that overlaps a running one waits; steps without Touches never do', async () => {
    const b = await backend(kind);
    const root = planRepo({
      '.tugtool/tugplan-demo.md': planText([
        stepText({ id: '0', deps: [], tasks: ['a'], body: '**Touches:** src/db/**' }),
        stepText({ id: '1', deps: [], tasks: ['b'], body: '**Touches:** src/db/schema.ts' }),
        stepText({ id: '2', deps: [], tasks: ['c'] }),
      ]),
    });
    const [w1, w2, w3] = [addWorktree(root, 'one'), addWorktree(root, 'two'), addWorktree(root, 'three')];
    const ops = new OpsContext({ cwd: root, env: { ...process.env, ...b.env } });
    try {
      const call = newCall('state claim');
      await stateInit(ops, { plan: 'demo' }, call);
      expect(await stateClaim(ops, { plan: 'demo', worktree: w1 }, call)).toMatchObject({ step_anchor: 'step-0' });
      expect(await stateClaim(ops, { plan: 'demo', worktree: w2, step: 'step-1' }, call)).toMatchObject({
        claimed: false,
        reason: 'not_ready',
        touches_overlap: 'step-0',
      });
      // step-1 is skipped for step-2, which declares no Touches.
      expect(await stateClaim(ops, { plan: 'demo', worktree: w2 }, call)).toMatchObject({ step_anchor: 'step-2' });
      // Nothing left for w3, and the answer says which ready step waits for which running one.
      const none = await stateClaim(ops, { plan: 'demo', worktree: w3 }, call);
      expect(none).toMatchObject({
        claimed: false,
        reason: 'no_ready_steps',
        touches_held: [{ step_anchor: 'step-1', overlaps: 'step-0' }],
      });
      // The CLI says it too: in its JSON (checked against the command's schema) and in its text.
      const env = { TUGCODE_NOW: new Date().toISOString(), ...b.env };
      expect(st(root, ['claim', 'demo', '--worktree', w3], { env }).json).toMatchObject({
        touches_held: [{ step_anchor: 'step-1', overlaps: 'step-0' }],
      });
      expect(stText(root, ['claim', 'demo', '--worktree', w3], { env }).stdout).toContain(
        'Held back by Touches: step-1 (overlaps step-0)',
      );
    } finally {
      await ops.close();
    }
  });
});
