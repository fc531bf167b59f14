/**
 * A step whose commit is on the integration branch already is never implemented again (docs/run.md §1,
 * docs/run.md §1.5): a `complete` refused after the fast-forward (an outside
 * `state reset --force` in that window) is settled at once by reconcile, and a claimed step whose
 * `Tug-Step` commit is on the branch is completed from it instead of being implemented.
 */
import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI } from '../helpers/cli.js';
import { git, tempDir } from '../helpers/repo.js';
import { sql } from '../state/helpers.js';
import { implementerScript, planText, runJsonl, runRepo, seenBy, step, stepCommits } from './helpers.js';

const PLAN = planText([step(1, 'One'), step(2, 'Two', { deps: [1] })]);
const ZERO = '0'.repeat(40);

const steps = (root: string) =>
  sql<{ anchor: string; status: string; commit_hash: string | null; completed_via: string | null }>(
    root,
    'SELECT anchor, status, commit_hash, completed_via FROM steps ORDER BY step_index',
  );

describe('tugcode run: a step already on the integration branch', () => {
  it('a state reset --force between the fast-forward and complete does not run the step twice', () => {
    const root = runRepo(PLAN);
    const impl = implementerScript();
    // A reference-transaction hook: when step-1's commit lands on tugplan/demo, reset step-1 from outside,
    // once, before the driver's `complete` (git runs the hook inside the driver's update-ref).
    const scratch = tempDir('tugcode-hook-');
    const marker = join(scratch, 'reset.json');
    const hook = join(root, '.git', 'hooks', 'reference-transaction');
    writeFileSync(
      hook,
      `#!/bin/sh
[ "$1" = committed ] || exit 0
while read old new ref; do
  [ "$ref" = refs/heads/tugplan/demo ] && [ "$old" != ${ZERO} ] && [ ! -e '${marker}' ] || continue
  git log -1 --format=%B "$new" | grep -q '^Tug-Step: step-1$' || continue
  (unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE GIT_PREFIX; cd '${root}' && '${process.execPath}' '${CLI}' state reset demo step-1 --force --json > '${marker}')
done
exit 0
`,
    );
    chmodSync(hook, 0o755);
    const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv]);
    expect(r.events.at(-1), r.stderr).toMatchObject({ type: 'summary', status: 'ok' });
    expect(r.code).toBe(0);
    // The outside reset did land in the window: it ended w1's live claim.
    expect(JSON.parse(readFileSync(marker, 'utf8'))).toMatchObject({
      reset: true,
      step_anchor: 'step-1',
      previous_status: 'in_progress',
    });
    expect(stepCommits(root, 'tugplan/demo')).toEqual(['step-1', 'step-2']);
    expect(seenBy(impl.seen)['step-1']).toHaveLength(1);
    expect(r.events.filter((e) => e.type === 'claimed').map((e) => e.step_anchor)).toEqual(['step-1', 'step-2']);
    const first = git(root, 'rev-list', '--reverse', 'main..tugplan/demo').split('\n')[0];
    expect(steps(root)[0]).toEqual({
      anchor: 'step-1',
      status: 'completed',
      commit_hash: first,
      completed_via: 'reconcile',
    });
  });

  it('a claimed step whose commit is on the branch is completed from it, not implemented again', () => {
    const root = runRepo(PLAN);
    const impl = implementerScript();
    // A crash after the fast-forward, before `complete`; then the worker tree is removed, so the next run
    // adopts nothing and its w1 (the same path) resumes the still-live claim on step-1.
    const first = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv], {
      TUGCODE_RUN_FAULT: 'after-integrate:step-1',
    });
    expect(first.code, first.stderr).toBeNull();
    const w1 = first.events.find((e) => e.type === 'claimed');
    expect(w1).toBeDefined();
    const tree = git(root, 'worktree', 'list', '--porcelain')
      .split('\n')
      .filter((l) => l.startsWith('worktree ') && l.includes('--w1'))[0]!
      .slice('worktree '.length);
    git(root, 'worktree', 'remove', '--force', tree);
    expect(existsSync(tree)).toBe(false);
    expect(steps(root)[0]!.status).toBe('in_progress');

    const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv]);
    expect(r.events.at(-1), r.stderr).toMatchObject({ type: 'summary', status: 'ok' });
    expect(r.code).toBe(0);
    expect(r.events.find((e) => e.type === 'claimed')).toMatchObject({ step_anchor: 'step-1', resumed: true });
    expect(stepCommits(root, 'tugplan/demo')).toEqual(['step-1', 'step-2']);
    expect(seenBy(impl.seen)['step-1']).toHaveLength(1);
    const hash = git(root, 'rev-list', '--reverse', 'main..tugplan/demo').split('\n')[0];
    expect(steps(root)[0]).toMatchObject({ anchor: 'step-1', status: 'completed', commit_hash: hash });
    rmSync(tree, { recursive: true, force: true });
  });

  // A commit someone else puts on the integration branch during the run (from its loose object, or packed)
  // is no step's completion: the branch is the run's (docs/agents.md §1.6), so the attempt that ran meanwhile
  // fails OutsideWrite naming the ref, and the step the commit names is not settled from it.
  for (const packed of [false, true])
    it(`a step whose commit an outside actor puts on the branch during the run is not settled from it${packed ? ' (packed)' : ''}`, () => {
      const root = runRepo(PLAN);
      const scratch = tempDir('tugcode-impl-');
      const seen = join(scratch, 'seen');
      const script = join(scratch, 'impl.sh');
      // step-1's implementer commits "step-2" onto tugplan/demo (its tree unchanged) from outside the run.
      writeFileSync(
        script,
        `#!/bin/sh
cat > /dev/null
echo "$TUG_STEP" >> '${seen}'
if [ "$TUG_STEP" = step-1 ]; then
  cd "$TUG_REPO_ROOT" || exit 1
  tip=$(git rev-parse refs/heads/tugplan/demo)
  new=$(printf 'feat: two, from outside\n\nTug-Step: step-2\nTug-Plan: .tugtool/tugplan-demo.md\n' | git commit-tree "$tip^{tree}" -p "$tip")
  git update-ref refs/heads/tugplan/demo "$new" "$tip" || exit 1
  ${packed ? 'git gc -q || exit 1' : ''}
fi
echo "$TUG_STEP" > "$TUG_WORKTREE/$TUG_STEP.txt"
`,
        { mode: 0o755 },
      );
      const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', JSON.stringify(script)]);
      expect(r.events.at(-1), r.stderr).toMatchObject({
        type: 'summary',
        status: 'error',
        error: { code: 'OutsideWrite', details: { step_anchor: 'step-1', changed: ['ref refs/heads/tugplan/demo'] } },
      });
      expect(readFileSync(seen, 'utf8').trim().split('\n')).toEqual(['step-1']);
      const outside = git(root, 'log', '-1', '--format=%H', '--grep=^Tug-Step: step-2$', 'tugplan/demo').trim();
      // Nothing undone: the commit stays the branch's tip; no step is completed from it, none built on it.
      expect(git(root, 'rev-parse', 'tugplan/demo').trim()).toBe(outside);
      expect(steps(root)[1]).toMatchObject({ anchor: 'step-2', status: 'pending', commit_hash: null });
      expect(r.events.filter((e) => e.type === 'claimed').map((e) => e.step_anchor)).toEqual(['step-1']);
    });
});
