/**
 * Two runs of different plans in one repository at once (docs/run.md §1.8: each plan has its own run lock):
 * what the other plan's live run moves — its branches, their config, its worktrees — is no outside write of
 * this run's agents (docs/agents.md §1.6), while a `tugplan/` name of no live run still is.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gitRunner } from '../../src/git/exec.js';
import { outsideChanges, snapshotOutside, type OutsideScope } from '../../src/run/outside-check.js';
import { git, tempDir, tempRepo } from '../helpers/repo.js';
import { planText, runJsonl, runRepo, startRun, step, waitFor } from './helpers.js';

const THREE = planText([step(1, 'One'), step(2, 'Two', { deps: [1] }), step(3, 'Three', { deps: [2] })]);

/**
 * Sleeps 2 s and writes `<step>.txt`; plan a's first step first says it started (`started`) and waits (at
 * most 60 s) for plan b's worker tree, so that b's run makes its branches and worktree while a's implementer
 * runs.
 */
function implementer(root: string): { argv: string; started: string } {
  const dir = tempDir('tugcode-impl-');
  const started = join(dir, 'a-started');
  const script = join(dir, 'impl.sh');
  writeFileSync(
    script,
    `#!/bin/sh
cat > /dev/null
case "$TUG_WORKTREE:$TUG_STEP" in
  *tugplan__a--*:step-1)
    touch '${started}'
    n=0
    while [ ! -d '${root}/.tugtree/tugplan__b--w1' ] && [ $n -lt 600 ]; do sleep 0.1; n=$((n + 1)); done ;;
esac
sleep 2
echo "$TUG_STEP" > "$TUG_WORKTREE/$TUG_STEP.txt"
`,
    { mode: 0o755 },
  );
  return { argv: JSON.stringify(script), started };
}

const outsideOf = (events: any[]) =>
  events.filter(
    (e) => e.reason_code === 'OutsideWrite' || e.error?.code === 'OutsideWrite' || e.code === 'GitDirChanged',
  );

describe('two plans run at once', () => {
  it("each run leaves the other's branches, branch config and worktrees alone: both complete", async () => {
    const root = runRepo(THREE, 'a', { '.tugtool/tugplan-b.md': THREE });
    const impl = implementer(root);
    const a = startRun(root, ['a', '--implementer', impl.argv]);
    // b starts while a's first implementer runs (it waits for b's tree).
    await waitFor(() => existsSync(impl.started), 60_000, "a's first implementer");
    const b = runJsonl(root, ['b', '--implementer', impl.argv]);
    const ra = await a.done;
    expect(outsideOf(b.events)).toEqual([]);
    expect(outsideOf(ra.events)).toEqual([]);
    expect(b.code, b.stderr).toBe(0);
    expect(ra.code, ra.stderr).toBe(0);
    for (const r of [ra, b])
      expect(r.events.filter((e) => e.type === 'step_completed').map((e) => e.step_anchor)).toEqual([
        'step-1',
        'step-2',
        'step-3',
      ]);
  }, 120_000);

  it('a tugplan/ branch of no live run is an outside write, even beside a planted run lock', () => {
    const root = runRepo(planText([step(1, 'One')]), 'demo', { '.tugtool/tugplan-yyy.md': THREE });
    const dir = tempDir('tugcode-impl-');
    const script = join(dir, 'impl.sh');
    // zzz: no such plan, a lock planted naming the driver (alive) as its holder; yyy: a plan that is not running.
    writeFileSync(
      script,
      `#!/bin/sh
cat > /dev/null
git -C "$TUG_WORKTREE" update-ref refs/heads/tugplan/zzz--w1 HEAD
git -C "$TUG_WORKTREE" update-ref refs/heads/tugplan/yyy HEAD
git -C "$TUG_WORKTREE" config branch.tugplan/zzz--w1.tugbase evil
mkdir -p '${root}/.tugtool/run-zzz.lock'
printf '{"host":"%s","pid":%s,"started_at":"x","token":"t"}' "$(hostname)" "$PPID" > '${root}/.tugtool/run-zzz.lock/holder.json'
echo "$TUG_STEP" > "$TUG_WORKTREE/$TUG_STEP.txt"
`,
      { mode: 0o755 },
    );
    const r = runJsonl(root, ['demo', '--implementer', JSON.stringify(script), '--max-attempts', '1']);
    expect(r.code, r.stderr).toBe(4);
    const failed = r.events.find((e) => e.type === 'attempt_failed');
    expect(failed?.reason_code, r.stdout + r.stderr).toBe('OutsideWrite');
    for (const what of [
      'ref refs/heads/tugplan/zzz--w1',
      'ref refs/heads/tugplan/yyy',
      '.git/config: branch.tugplan/zzz--w1.tugbase',
    ])
      expect(failed?.reason).toContain(what);
    expect(existsSync(join(root, '.tugtool/run-zzz.lock'))).toBe(true);
    expect(git(root, 'rev-parse', '--verify', '-q', 'refs/heads/tugplan/zzz--w1').trim()).not.toBe('');
  });
});

describe("the snapshot beside another plan's run", () => {
  it('leaves out what that run moves when it was live at either end of the span, and only then', async () => {
    const root = tempRepo({ 'src.txt': 'one\n' });
    const worker = join(root, '.tugtree', 'tugplan__demo--w1');
    git(root, 'worktree', 'add', '-q', '-b', 'tugplan/demo--w1', worker);
    let live = new Set<string>();
    const scope: OutsideScope = {
      mainRoot: root,
      commonDir: join(root, '.git'),
      worktree: worker,
      runRefs: (ref) => ref === 'refs/heads/tugplan/demo' || ref.startsWith('refs/heads/tugplan/demo--w'),
      runWorktrees: (path) => path === worker,
      baseRef: 'refs/heads/main',
      otherRuns: async () => live,
    };
    const g = gitRunner({ ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@e' });
    const snap = () => snapshotOutside(g, scope);
    const b1 = join(root, '.tugtree', 'tugplan__b--w1');
    // b starts within the span: live at its end only.
    let before = await snap();
    live = new Set(['b']);
    git(root, 'branch', 'tugplan/b');
    git(root, 'worktree', 'add', '-q', '-b', 'tugplan/b--w1', b1);
    git(root, 'config', 'branch.tugplan/b--w1.tugbase', 'main');
    expect(outsideChanges(before, await snap())).toEqual([]);
    // b works and ends within the span: live at its start only.
    before = await snap();
    writeFileSync(join(b1, 'b.txt'), 'b\n');
    git(b1, 'add', 'b.txt');
    git(b1, 'commit', '-q', '-m', 'b');
    git(root, 'branch', '-f', 'tugplan/b', 'tugplan/b--w1');
    live = new Set();
    expect(outsideChanges(before, await snap())).toEqual([]);
    // No run of b now: its tree, branches and config are anyone's, and a change shows; so do another slug's names.
    before = await snap();
    writeFileSync(join(b1, 'late.txt'), 'late\n');
    git(root, 'branch', '-f', 'tugplan/b', 'main');
    git(root, 'branch', 'tugplan/c--w1');
    git(root, 'config', 'branch.tugplan/b--w1.tugbase', 'other');
    expect(outsideChanges(before, await snap())).toEqual([
      '.git/config: branch.tugplan/b--w1.tugbase',
      'ref refs/heads/tugplan/b',
      'ref refs/heads/tugplan/c--w1',
      `worktree ${b1}: late.txt`,
    ]);
    // Live b excuses b's names only: not c's, not a branch of b's that is not a run's, not other config.
    live = new Set(['b']);
    before = await snap();
    git(root, 'branch', '-f', 'tugplan/c--w1', 'tugplan/b--w1');
    git(root, 'branch', 'tugplan/b--mine');
    git(root, 'branch', 'tugplan/b--w1x');
    git(root, 'config', 'alias.zz', '!true');
    git(root, 'config', 'branch.main.tugbase', 'x');
    git(root, 'branch', '-f', 'tugplan/b', 'tugplan/b--w1');
    expect(outsideChanges(before, await snap())).toEqual([
      '.git/config: alias.zz',
      '.git/config: branch.main.tugbase',
      'ref refs/heads/tugplan/b--mine',
      'ref refs/heads/tugplan/b--w1x',
      'ref refs/heads/tugplan/c--w1',
    ]);
  });
});
