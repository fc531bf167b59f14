/**
 * A worker tree its agent switched to a branch of its own, or detached (docs/run.md §1.1 items 3 and 4.9):
 * the failure handler puts it back on its worker branch, so the next attempt works, and a tree an earlier
 * run left so is adopted and put back, never refused as WorktreeExists. The agent's branch stays.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git } from '../helpers/repo.js';
import { nodeImplementer, planText, runJsonl, runRepo, step, tugJson } from './helpers.js';

const PLAN = '.tugtool/tugplan-demo.md';
const TREE = '.tugtree/tugplan__demo--w1';

/**
 * Writes the step's file; with the marker `<how>-<step>` in its directory, first switches the tree (once):
 * `rogue` checks out a branch of its own (an OutsideWrite: a ref the run does not move), `detach` detaches
 * HEAD and exits 1 (a ref-less switch the outside check does not see).
 */
function switchingImplementer() {
  return nodeImplementer(`
import { execFileSync } from 'node:child_process';
for (const how of ['rogue', 'detach']) {
  const marker = join(dir, how + '-' + step);
  if (!existsSync(marker)) continue;
  execFileSync('git', how === 'rogue' ? ['checkout', '-q', '-b', 'rogue-' + step] : ['checkout', '-q', '--detach'], { cwd: wt });
  execFileSync('rm', [marker]);
  if (how === 'detach') process.exit(1);
}
writeFileSync(join(wt, step + '.txt'), step + '\\n');
`);
}

const ONE = planText([step(1, 'Base', { checkpoint: 'test -f step-1.txt' })]);

describe('a worker tree left on another branch', () => {
  for (const how of ['rogue', 'detach'] as const) {
    it(`${how}: the attempt fails, the tree goes back on its worker branch and the next attempt completes the step`, () => {
      const root = runRepo(ONE);
      const impl = switchingImplementer();
      writeFileSync(join(impl.dir, `${how}-step-1`), '');
      const r = runJsonl(root, [
        PLAN,
        '--workers',
        '1',
        '--max-attempts',
        '3',
        '--implementer',
        impl.argv,
        '--keep-worktrees',
      ]);
      // An outside write is the run's error at its end (docs/agents.md §1.6), the step done all the same.
      if (how === 'rogue') expect(r.events.at(-1)).toMatchObject({ status: 'error', error: { code: 'OutsideWrite' } });
      else expect(r.code, r.stderr).toBe(0);
      const failed = r.events.filter((e) => e.type === 'attempt_failed');
      expect(failed).toMatchObject([{ step_anchor: 'step-1', attempt: 1 }]);
      expect(r.events.filter((e) => e.type === 'step_completed')).toMatchObject([{ step_anchor: 'step-1' }]);
      expect(r.events.filter((e) => e.type === 'warning' && e.code === 'WorkerBranchRestored')).toHaveLength(1);
      expect(git(join(root, TREE), 'symbolic-ref', 'HEAD').trim()).toBe('refs/heads/tugplan/demo--w1');
      // The agent's branch is the user's to delete.
      if (how === 'rogue') expect(git(root, 'branch', '--list', 'rogue-step-1').trim()).toBe('rogue-step-1');
    });
  }

  for (const how of ['rogue', 'detach'] as const) {
    it(`${how}: a tree an earlier run left off its worker branch is adopted and put back; the next run completes`, () => {
      const root = runRepo(ONE);
      const impl = switchingImplementer();
      writeFileSync(join(impl.dir, `${how}-step-1`), '');
      const first = runJsonl(root, [PLAN, '--workers', '1', '--max-attempts', '1', '--implementer', impl.argv]);
      expect(first.code, first.stderr).toBe(4);
      // What an earlier version left: the tree still off its worker branch after the failure.
      const tree = join(root, TREE);
      expect(existsSync(tree)).toBe(true);
      if (how === 'rogue') git(tree, 'checkout', '-q', 'rogue-step-1');
      else git(tree, 'checkout', '-q', '--detach');
      expect(tugJson(root, ['state', 'reset', PLAN, 'step-1']).code).toBe(0);
      const second = runJsonl(root, [PLAN, '--workers', '1', '--implementer', impl.argv]);
      expect(second.code, second.stderr).toBe(0);
      expect(second.events.filter((e) => e.type === 'step_completed')).toMatchObject([{ step_anchor: 'step-1' }]);
      expect(second.events.some((e) => e.type === 'warning' && e.code === 'WorkerBranchRestored')).toBe(true);
      if (how === 'rogue') expect(git(root, 'branch', '--list', 'rogue-step-1').trim()).toBe('rogue-step-1');
    });
  }

  it("a tree left on the run's integration branch is put back, and the warning never says to delete that branch", () => {
    const root = runRepo(ONE);
    const impl = switchingImplementer();
    writeFileSync(join(impl.dir, 'detach-step-1'), '');
    expect(runJsonl(root, [PLAN, '--workers', '1', '--max-attempts', '1', '--implementer', impl.argv]).code).toBe(4);
    const tree = join(root, TREE);
    git(tree, 'checkout', '-q', 'tugplan/demo');
    expect(tugJson(root, ['state', 'reset', PLAN, 'step-1']).code).toBe(0);
    const second = runJsonl(root, [PLAN, '--workers', '1', '--implementer', impl.argv]);
    expect(second.code, second.stderr).toBe(0);
    const warned = second.events.filter((e) => e.type === 'warning' && e.code === 'WorkerBranchRestored');
    expect(warned).toHaveLength(1);
    expect(warned[0].message).toMatch(
      /was on branch tugplan\/demo, not its worker branch; put back on tugplan\/demo--w1$/,
    );
    expect(git(root, 'branch', '--list', 'tugplan/demo').trim()).toBe('tugplan/demo');
  });
});
