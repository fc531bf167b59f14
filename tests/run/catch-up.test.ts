/**
 * A worker's uncommitted work moves onto an integration tip that moved while it worked (`git reset --keep`,
 * run/worktrees.ts catchUpTree), so its commit integrates as a fast-forward. Whenever git could not do that
 * without a merge, the tree must be exactly as the implementer left it (the integration then rebases). In a
 * run the move happens beside the outside snapshot when nothing runs between the implementer and the commit,
 * and at the commit when checkpoints do (they see the tree the implementer left).
 */
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gitRunner } from '../../src/git/exec.js';
import { catchUpTree, type WorkerTree } from '../../src/run/worktrees.js';
import { stepText } from '../helpers/plan.js';
import { git, tempDir, tempRepo } from '../helpers/repo.js';
import { planText, runJsonl, runRepo } from './helpers.js';

/** main with a.txt and c.txt; a worker worktree at main; the integration tip one commit on (changing c.txt). */
function setup(tipFiles: Record<string, string> = { 'c.txt': 'c from the other worker\n' }) {
  const root = tempRepo({ 'a.txt': 'a\n', 'c.txt': 'c\n' });
  const base = git(root, 'rev-parse', 'HEAD').trim();
  const W = join(tempDir(), 'w1');
  git(root, 'worktree', 'add', '-q', '-b', 'worker', W, base);
  // The other worker's step, integrated while this one worked.
  const other = join(tempDir(), 'w2');
  git(root, 'worktree', 'add', '-q', '-b', 'integration', other, base);
  for (const [f, text] of Object.entries(tipFiles)) writeFileSync(join(other, f), text);
  git(other, 'add', '-A');
  git(other, 'commit', '-q', '-m', 'other step');
  const tip = git(other, 'rev-parse', 'HEAD').trim();
  const tree: WorkerTree = { worker: 'w1', k: 1, path: W, branch: 'worker', base };
  return { W, base, tip, tree, g: gitRunner(process.env) };
}

const status = (W: string) => git(W, 'status', '--porcelain', '--untracked-files=all');

describe('catching a worker tree up with a moved integration tip', () => {
  it('moves the uncommitted work onto the tip: changes, new files and the other step all there', async () => {
    const { W, tip, tree, g } = setup();
    writeFileSync(join(W, 'a.txt'), 'a changed here\n');
    writeFileSync(join(W, 'b.txt'), 'new here\n');
    expect(await catchUpTree(g, tree, tip)).toBe(true);
    expect(git(W, 'rev-parse', 'HEAD').trim()).toBe(tip);
    expect(tree.base).toBe(tip);
    expect(readFileSync(join(W, 'c.txt'), 'utf8')).toBe('c from the other worker\n');
    expect(readFileSync(join(W, 'a.txt'), 'utf8')).toBe('a changed here\n');
    expect(status(W).split('\n').filter(Boolean).sort()).toEqual([' M a.txt', '?? b.txt']);
  });

  it('leaves the tree as it was when a file changed on both sides', async () => {
    const { W, base, tip, tree, g } = setup();
    writeFileSync(join(W, 'c.txt'), 'c changed here too\n');
    const before = status(W);
    expect(await catchUpTree(g, tree, tip)).toBe(false);
    expect(git(W, 'rev-parse', 'HEAD').trim()).toBe(base);
    expect(tree.base).toBe(base);
    expect(readFileSync(join(W, 'c.txt'), 'utf8')).toBe('c changed here too\n');
    expect(status(W)).toBe(before);
  });

  it('leaves the tree as it was when an untracked file is in the way', async () => {
    const { W, base, tip, tree, g } = setup({ 'd.txt': 'd from the other worker\n' });
    writeFileSync(join(W, 'd.txt'), 'd made here\n');
    expect(await catchUpTree(g, tree, tip)).toBe(false);
    expect(git(W, 'rev-parse', 'HEAD').trim()).toBe(base);
    expect(readFileSync(join(W, 'd.txt'), 'utf8')).toBe('d made here\n');
  });

  it('never drops commits the implementer made itself', async () => {
    const { W, tip, tree, g } = setup();
    writeFileSync(join(W, 'a.txt'), 'committed by the implementer\n');
    git(W, 'commit', '-q', '-am', 'implementer commit');
    const head = git(W, 'rev-parse', 'HEAD').trim();
    expect(await catchUpTree(g, tree, tip)).toBe(false);
    expect(git(W, 'rev-parse', 'HEAD').trim()).toBe(head);
  });

  it('does nothing when the tip did not move', async () => {
    const { W, base, tree, g } = setup();
    writeFileSync(join(W, 'a.txt'), 'a changed here\n');
    expect(await catchUpTree(g, tree, base)).toBe(false);
    expect(existsSync(join(W, 'c.txt'))).toBe(true);
    expect(git(W, 'rev-parse', 'HEAD').trim()).toBe(base);
  });
});

/**
 * Two independent steps, two workers: step-2's implementer writes only once step-1 is on tugplan/demo, so
 * step-2's work must move onto that tip before its commit. `checkpoint`: step-2's checkpoint, run in its tree.
 */
function racingRun(checkpoint?: string) {
  const two = (n: number, o: { checkpoints?: string[] } = {}) =>
    stepText({ id: String(n), title: `Step ${n}`, deps: [], commit: `feat: step ${n}`, tasks: ['write it'], ...o });
  const root = runRepo(planText([two(1), two(2, checkpoint ? { checkpoints: [`\`${checkpoint}\``] } : {})]));
  const script = join(tempDir('tugcode-impl-'), 'impl.sh');
  writeFileSync(
    script,
    `#!/bin/sh
cat > /dev/null
if [ "$TUG_STEP" = step-2 ]; then
  i=0
  until git -C "$TUG_REPO_ROOT" log --format=%B tugplan/demo | grep -q '^Tug-Step: step-1$' || [ $i -ge 600 ]; do
    sleep 0.05; i=$((i + 1))
  done
fi
echo "$TUG_STEP" > "$TUG_WORKTREE/$TUG_STEP.txt"
`,
  );
  chmodSync(script, 0o755);
  const r = runJsonl(root, ['demo', '--workers', '2', '--keep-worktrees', '--implementer', JSON.stringify(script)]);
  expect(r.events.at(-1), r.stderr).toMatchObject({ type: 'summary', status: 'ok' });
  const branch = r.events.find((e) => e.type === 'claimed' && e.step_anchor === 'step-2').worker;
  return { root, reflog: git(root, 'reflog', 'show', '--format=%gs', `tugplan/demo--${branch}`) };
}

describe('catching up in a run', () => {
  it("moves step-2's work onto the tip step-1 made, so its integration needs no rebase", () => {
    const { root, reflog } = racingRun();
    expect(reflog).toMatch(/^reset: moving to /m);
    expect(reflog).not.toMatch(/rebase/);
    expect(git(root, 'log', '--format=%s', 'tugplan/demo').split('\n').slice(0, 2)).toEqual([
      'feat: step 2',
      'feat: step 1',
    ]);
  });

  it("runs step-2's checkpoint on the tree its implementer left, before the work moves onto the tip", () => {
    // step-1.txt is on the tip only: the checkpoint fails when the tree moved before it ran.
    const { reflog } = racingRun('test ! -e step-1.txt');
    expect(reflog).toMatch(/^reset: moving to /m);
  });
});
