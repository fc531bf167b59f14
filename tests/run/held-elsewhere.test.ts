/**
 * A step held outside the run (docs/run.md §1.4): a worktree claimed it by hand. The waiting line and its
 * `waiting` event name the holder and its lease; after a stop the summary says the step was held, by whom,
 * and how to free it, not that the run stopped claiming before it.
 */
import { describe, expect, it } from 'vitest';
import { checkSchema } from '../helpers/cli.js';
import { runEventSchema } from '../../src/contract/schemas/run.js';
import { planText, runRepo, startRun, step, tugJson, waitUntil } from './helpers.js';

function heldRepo() {
  const root = runRepo(planText([step(1, 'One')]), 'hold');
  const wt = tugJson(root, ['worktree', 'create', 'hold']);
  expect(wt.code, wt.stderr).toBe(0);
  const tree = wt.json.worktree_path as string;
  const claim = tugJson(root, ['state', 'claim', 'hold', '--worktree', tree]);
  expect(claim.code, claim.stderr).toBe(0);
  return { root, tree, lease: claim.json.lease_expires_at as string };
}

describe('a run waiting on a step held outside it', () => {
  it('names the holder and its lease in the waiting event and the summary (--json)', async () => {
    const { root, tree, lease } = heldRepo();
    const run = startRun(root, ['hold', '--workers', '1', '--implementer', 'true']);
    const waiting = await waitUntil('a waiting event', () => run.events().find((e) => e.type === 'waiting'));
    run.child.kill('SIGINT');
    const r = await run.done;
    expect(r.code).toBe(130);
    checkSchema(runEventSchema, waiting);
    expect(waiting).toMatchObject({
      claimed_steps: ['step-1'],
      held_by: [{ step_anchor: 'step-1', owner: tree, lease_expires_at: lease, lease_expired: false }],
    });
    const summary = r.events.at(-1);
    checkSchema(runEventSchema, summary);
    expect(summary.held_steps).toEqual([
      { step_anchor: 'step-1', owner: tree, lease_expires_at: lease, lease_expired: false },
    ]);
    expect(summary.not_run_steps).toEqual(['step-1']);
  });

  it('says so in text: the waiting line and the summary row with the command that frees it', async () => {
    const { root, tree, lease } = heldRepo();
    const run = startRun(root, ['hold', '--workers', '1', '--implementer', 'true'], {}, { text: true });
    let stdout = '';
    run.child.stdout.on('data', (d) => (stdout += d));
    await waitUntil('the waiting line', () => stdout.includes('waiting for step-1'));
    run.child.kill('SIGINT');
    const r = await run.done;
    expect(r.code).toBe(130);
    expect(r.stdout).toContain(`w1 waiting for step-1 (held by ${tree}, lease until ${lease})`);
    expect(r.stdout).not.toContain('the run stopped claiming before it');
    expect(r.stdout).toMatch(/step-1\s+held\s+held by /);
    expect(r.stdout).toContain(
      `held by ${tree} until ${lease}: tugcode state release .tugtool/tugplan-hold.md step-1 --worktree ${tree}, ` +
        'or wait for its lease\n',
    );
    expect(r.stdout).toContain('0 completed, 1 held elsewhere · 0 commits');
  });
});
