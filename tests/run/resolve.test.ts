/**
 * Conflicts resolved in the same attempt (docs/run.md §1.9): two steps edit the same line of `shared.txt`
 * in parallel; step-3's implementer waits (polling git) until step-2's commit is on the integration branch,
 * so step-3's rebase always conflicts. A resolver script merges it in the same attempt (no redo, its
 * checkpoint run again), or fails to (markers left) and the attempt is redone as before; the same through
 * `--remote` with a push rejected by another host's commit; a driver SIGKILLed while the resolver runs is
 * healed by the next run. Real git, the built CLI.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, tempDir } from '../helpers/repo.js';
import {
  groupAlive,
  nodeImplementer,
  remoteWithClones,
  runJsonl,
  startRun,
  stepCommits,
  waitUntil,
} from './helpers.js';
import {
  conflictRepo,
  failures,
  lines,
  ok,
  racingImplementer,
  resolutionArtifacts as artifacts,
  resolverScript,
} from './resolve-helpers.js';

describe('tugcode run: a conflict resolved in the same attempt', () => {
  it('the resolver merges it: attempt 1 only, checkpoints re-run, both commits on the integration branch', () => {
    const counter = join(tempDir('tugcode-count-'), 'count');
    const root = conflictRepo(counter);
    const impl = racingImplementer();
    const res = resolverScript('merge');
    const r = runJsonl(root, ['demo', '--workers', '2', '--implementer', impl.argv, '--resolver', res.argv]);
    ok(r);

    // No attempt failed; step-3 was claimed once, at attempt 1; the implementer ran once per step.
    expect(r.events.filter((e) => e.type === 'attempt_failed')).toEqual([]);
    expect(r.events.filter((e) => e.type === 'claimed' && e.step_anchor === 'step-3')).toEqual([
      expect.objectContaining({ attempt: 1 }),
    ]);
    expect(lines(join(impl.dir, 'calls')).sort()).toEqual([
      'step-1 1 implement',
      'step-2 1 implement',
      'step-3 1 implement',
    ]);
    const conflict = r.events.filter((e) => e.type === 'conflict' || e.type === 'conflict_resolved');
    expect(conflict).toEqual([
      expect.objectContaining({ type: 'conflict', step_anchor: 'step-3', files: ['shared.txt'] }),
      expect.objectContaining({ type: 'conflict_resolved', step_anchor: 'step-3', files: ['shared.txt'], round: 1 }),
    ]);
    const phases = r.events.filter((e) => e.type === 'phase' && e.step_anchor === 'step-3').map((e) => e.phase);
    expect(phases.slice(phases.indexOf('resolve'))).toEqual(['resolve', 'checkpoints', 'integrate', 'complete']);
    expect(r.events.at(-1).conflicts_resolved).toEqual([{ step_anchor: 'step-3', files: ['shared.txt'], round: 1 }]);

    // The checkpoint ran after the implementer and again on the merged tree.
    expect(lines(counter)).toEqual(['run', 'run']);

    // The resolver's brief: the step's, plus the conflict with the integrated step that touched the file.
    const [brief] = res.briefs();
    const tip2 = git(root, 'log', '-1', '--format=%H', '--grep=^Tug-Step: step-2$', 'tugplan/demo').trim();
    expect(brief).toMatchObject({
      step_anchor: 'step-3',
      attempt: 1,
      conflict: {
        onto: tip2,
        files: ['shared.txt'],
        integrated: [{ step_anchor: 'step-2', commit: tip2, subject: 'feat: left' }],
      },
    });
    expect(res.briefs()).toHaveLength(1);

    // One commit per step, the merge in step-3's; its trailers kept; nothing failed.
    expect(stepCommits(root, 'tugplan/demo')).toEqual(['step-1', 'step-2', 'step-3']);
    expect(git(root, 'show', 'tugplan/demo:shared.txt')).toBe('top\nmiddle from step-2\nmiddle from step-3\nbottom\n');
    expect(git(root, 'log', '-1', '--format=%s', 'tugplan/demo')).toBe('feat: right\n');
    expect(failures(root)).toEqual({ 'step-1': 0, 'step-2': 0, 'step-3': 0 });
    expect(artifacts(root)).toEqual([
      {
        step_anchor: 'step-3',
        summary: 'round 1: resolved shared.txt',
        content: expect.stringContaining('merged shared.txt'),
      },
    ]);
  });

  it('markers left: resolve_rounds used up, the rebase aborted, the attempt fails IntegrationConflict and is redone', () => {
    const counter = join(tempDir('tugcode-count-'), 'count');
    const root = conflictRepo(counter, { '.tugtool/config.toml': '[run]\nresolve_rounds = 2\n' });
    const impl = racingImplementer();
    const res = resolverScript('leave');
    const r = runJsonl(root, ['demo', '--workers', '2', '--implementer', impl.argv, '--resolver', res.argv]);
    ok(r);

    const failed = r.events.filter((e) => e.type === 'attempt_failed');
    expect(failed).toEqual([
      expect.objectContaining({ step_anchor: 'step-3', attempt: 1, reason_code: 'IntegrationConflict' }),
    ]);
    expect(failed[0].reason).toMatch(/conflicted in shared\.txt; 2 resolution round\(s\) did not merge it/);
    expect(failed[0].reason).toContain('round 1: conflict markers left in shared.txt:2');
    expect(failed[0].reason).toContain('round 2: conflict markers left in shared.txt:2');
    // The resolver's logs, where its output went (docs/run.md §1.3), not the implementer's.
    expect(failed[0].logs).toEqual([
      '.tugtool/logs/demo/step-3-resolve1-attempt1.log',
      '.tugtool/logs/demo/step-3-resolve2-attempt1.log',
    ]);
    expect(r.events.filter((e) => e.type === 'conflict_resolved')).toEqual([]);
    expect(r.events.filter((e) => e.type === 'conflict')).toHaveLength(1);
    expect(r.events.at(-1).conflicts_resolved).toBeUndefined();
    // Two resolver runs, then the redo on the newer tip (no conflict there); the checkpoint never re-ran early.
    expect(res.briefs()).toHaveLength(2);
    expect(lines(join(impl.dir, 'calls')).filter((l) => l.startsWith('step-3'))).toEqual([
      'step-3 1 implement',
      'step-3 2 implement',
    ]);
    expect(lines(counter)).toEqual(['run', 'run']);
    expect(artifacts(root).map((a) => a.summary)).toEqual([
      'round 1 failed: conflict markers left in shared.txt:2',
      'round 2 failed: conflict markers left in shared.txt:2',
    ]);
    expect(stepCommits(root, 'tugplan/demo')).toEqual(['step-1', 'step-2', 'step-3']);
    expect(git(root, 'show', 'tugplan/demo:shared.txt')).toBe('top\nmiddle from step-3\nbottom\n');
    expect(failures(root)).toEqual({ 'step-1': 0, 'step-2': 0, 'step-3': 1 });
  });

  it('a resolver that continues the rebase itself: the attempt fails IntegrationConflict saying so, naming its log', () => {
    const counter = join(tempDir('tugcode-count-'), 'count');
    const root = conflictRepo(counter, { '.tugtool/config.toml': '[run]\nresolve_rounds = 1\n' });
    const impl = racingImplementer();
    const res = resolverScript('continue');
    const r = runJsonl(root, ['demo', '--workers', '2', '--implementer', impl.argv, '--resolver', res.argv]);
    ok(r);
    const failed = r.events.filter((e) => e.type === 'attempt_failed');
    expect(failed).toEqual([
      expect.objectContaining({ step_anchor: 'step-3', attempt: 1, reason_code: 'IntegrationConflict' }),
    ]);
    expect(failed[0].reason).toMatch(
      /^rebase onto tugplan\/demo conflicted in shared\.txt; 1 resolution round\(s\) did not merge it: round 1: the resolver ran git itself/,
    );
    expect(failed[0].logs).toEqual(['.tugtool/logs/demo/step-3-resolve1-attempt1.log']);
    expect(stepCommits(root, 'tugplan/demo')).toEqual(['step-1', 'step-2', 'step-3']);
  });

  it('without --resolver the implementer resolves (the brief says conflict); --resolve-rounds 0 redoes as before', () => {
    const counter = join(tempDir('tugcode-count-'), 'count');
    const merging = nodeImplementer(`
const brief = JSON.parse(readFileSync(process.env.TUG_STEP_JSON, 'utf8'));
appendFileSync(join(dir, 'calls'), step + ' ' + attempt + (brief.conflict ? ' resolve' : ' implement') + '\\n');
if (brief.conflict) {
  const text = readFileSync(join(wt, 'shared.txt'), 'utf8');
  writeFileSync(join(wt, 'shared.txt'), text.split('\\n').filter((l) => !/^(<{7}|={7}|>{7})/.test(l)).join('\\n'));
} else {
  writeFileSync(join(wt, step + '.txt'), step + '\\n');
  if (step !== 'step-1') {
    if (step === 'step-3' && attempt === 1) {
      const { execFileSync } = await import('node:child_process');
      const until = Date.now() + 60000;
      while (!execFileSync('git', ['-C', process.env.TUG_REPO_ROOT, 'log', '--format=%(trailers:key=Tug-Step,valueonly)', 'tugplan/demo'], { encoding: 'utf8' }).includes('step-2') && Date.now() < until) await sleep(50);
    }
    const lines = readFileSync(join(wt, 'shared.txt'), 'utf8').split('\\n');
    lines[1] = 'middle from ' + step;
    writeFileSync(join(wt, 'shared.txt'), lines.join('\\n'));
  }
}
`);
    const root = conflictRepo(counter);
    const r = runJsonl(root, ['demo', '--workers', '2', '--implementer', merging.argv]);
    ok(r);
    expect(r.events.filter((e) => e.type === 'attempt_failed')).toEqual([]);
    expect(lines(join(merging.dir, 'calls')).filter((l) => l.startsWith('step-3'))).toEqual([
      'step-3 1 implement',
      'step-3 1 resolve',
    ]);
    expect(git(root, 'show', 'tugplan/demo:shared.txt')).toBe('top\nmiddle from step-2\nmiddle from step-3\nbottom\n');

    // The same plan with resolution turned off: today's redo, the implementer never asked to resolve.
    const counter0 = join(tempDir('tugcode-count-'), 'count');
    const root0 = conflictRepo(counter0);
    const impl0 = racingImplementer();
    const r0 = runJsonl(root0, ['demo', '--workers', '2', '--implementer', impl0.argv, '--resolve-rounds', '0']);
    ok(r0);
    expect(r0.events.filter((e) => e.type === 'attempt_failed')).toEqual([
      expect.objectContaining({
        step_anchor: 'step-3',
        reason_code: 'IntegrationConflict',
        reason: 'rebase onto tugplan/demo conflicted in shared.txt',
      }),
    ]);
    expect(r0.events.filter((e) => e.type === 'conflict')).toEqual([]);
    expect(lines(join(impl0.dir, 'calls')).filter((l) => l.endsWith('resolve'))).toEqual([]);
  });
});

describe('tugcode run --remote: a push rejected by another host, then a conflict', () => {
  it('fetch, rebase, the conflict resolved, pushed in the same attempt', () => {
    const counter = join(tempDir('tugcode-count-'), 'count');
    const seed = conflictRepo(counter);
    const { dir, remote, clone, other } = remoteWithClones(seed, ['clone', 'other']);
    // When step-2's commit is pushed, another host's commit to the same line lands on the remote first.
    const marker = join(dir, 'pushed');
    const hook = join(clone, '.git', 'hooks', 'pre-push');
    writeFileSync(
      hook,
      `#!/bin/sh
while read -r lref lsha rref rsha; do
  git log -1 --format=%B "$lsha" | grep -q '^Tug-Step: step-2$' || continue
  [ -e '${marker}' ] && exit 0
  touch '${marker}'
  cd '${other}' && unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE &&
  git fetch -q origin && git checkout -q -B tugplan/demo origin/tugplan/demo &&
  printf 'top\\nmiddle from the other host\\nbottom\\n' > shared.txt && git add shared.txt &&
  git -c user.name=o -c user.email=o@e commit -q -m 'other host' && git push -q origin tugplan/demo
done
exit 0
`,
    );
    chmodSync(hook, 0o755);
    const impl = racingImplementer({ gitDir: remote });
    const res = resolverScript('merge');
    const r = runJsonl(clone, [
      'demo',
      '--workers',
      '1',
      '--implementer',
      impl.argv,
      '--resolver',
      res.argv,
      '--remote',
      'origin',
    ]);
    ok(r);
    expect(existsSync(marker)).toBe(true);
    expect(r.events.filter((e) => e.type === 'attempt_failed')).toEqual([]);
    expect(r.events.filter((e) => e.type === 'conflict_resolved')).toEqual([
      expect.objectContaining({ step_anchor: 'step-2', files: ['shared.txt'], round: 1 }),
    ]);
    // The integrated commit the resolver merged with carries no Tug-Step trailer: named by its subject.
    const [brief] = res.briefs();
    expect(brief.conflict.integrated).toEqual([
      { step_anchor: null, commit: expect.stringMatching(/^[0-9a-f]{40}$/), subject: 'other host' },
    ]);
    const subjects = git(remote, 'log', '--format=%s', 'tugplan/demo').split('\n').filter(Boolean);
    expect(subjects).toContain('other host');
    const step2 = git(remote, 'log', '-1', '--format=%H', '--grep=^Tug-Step: step-2$', 'tugplan/demo').trim();
    expect(git(remote, 'show', `${step2}:shared.txt`)).toBe(
      'top\nmiddle from the other host\nmiddle from step-2\nbottom\n',
    );
    expect(
      git(remote, 'log', '--format=%(trailers:key=Tug-Step,valueonly)', 'tugplan/demo')
        .split('\n')
        .filter(Boolean)
        .sort(),
    ).toEqual(['step-1', 'step-2', 'step-3']);
    expect(git(clone, 'rev-parse', 'tugplan/demo').trim()).toBe(git(remote, 'rev-parse', 'tugplan/demo').trim());
  });
});

describe('a driver SIGKILLed during a resolution', () => {
  it('the next run aborts the stopped rebase, ends the orphaned resolver, and does the step once', async () => {
    const counter = join(tempDir('tugcode-count-'), 'count');
    const root = conflictRepo(counter);
    const impl = racingImplementer();
    const res = resolverScript('merge', { hold: true });
    const args = ['demo', '--workers', '2', '--implementer', impl.argv, '--resolver', res.argv];
    const first = startRun(root, args);
    const pid = Number(
      await waitUntil(
        'the resolver to start',
        () => existsSync(join(res.dir, 'started')) && readFileSync(join(res.dir, 'started'), 'utf8'),
      ),
    );
    first.child.kill('SIGKILL');
    await first.done;
    // Left behind: a worker tree mid-rebase (detached HEAD) and the resolver still running in it.
    const tree = readdirSync(join(root, '.tugtree'))
      .map((d) => join(root, '.tugtree', d))
      .find((w) => git(w, 'status').includes('rebase'));
    expect(tree, 'a worker tree left mid-rebase').toBeDefined();
    expect(groupAlive(pid)).toBe(true);

    const again = runJsonl(root, args, { TUGCODE_NOW: new Date(Date.now() + 3_600_000).toISOString() });
    ok(again);
    // The orphan was ended before the tree was reused; the tree is on its branch again.
    expect(groupAlive(pid)).toBe(false);
    expect(res.briefs()).toHaveLength(1);
    // step-3 done once: one step_completed across the runs, one commit, its work redone on the newer tip.
    const completed = [...first.events(), ...again.events].filter((e) => e.type === 'step_completed');
    expect(completed.filter((e) => e.step_anchor === 'step-3')).toHaveLength(1);
    expect(stepCommits(root, 'tugplan/demo')).toEqual(['step-1', 'step-2', 'step-3']);
    expect(git(root, 'show', 'tugplan/demo:shared.txt')).toBe('top\nmiddle from step-3\nbottom\n');
    expect(git(root, 'worktree', 'list', '--porcelain')).not.toContain('detached');
  }, 120_000);

  it('killed with the resolution staged and the rebase not continued: healed the same way', () => {
    const counter = join(tempDir('tugcode-count-'), 'count');
    const root = conflictRepo(counter);
    const impl = racingImplementer();
    const res = resolverScript('merge');
    const args = ['demo', '--workers', '2', '--implementer', impl.argv, '--resolver', res.argv];
    const first = runJsonl(root, args, { TUGCODE_RUN_FAULT: 'after-resolve:step-3' });
    expect(first.code).toBeNull(); // SIGKILL
    expect(first.events.filter((e) => e.type === 'conflict_resolved')).toHaveLength(1);
    const again = runJsonl(root, args, { TUGCODE_NOW: new Date(Date.now() + 3_600_000).toISOString() });
    ok(again);
    expect(
      [...first.events, ...again.events]
        .filter((e) => e.type === 'step_completed')
        .map((e) => e.step_anchor)
        .sort(),
    ).toEqual(['step-1', 'step-2', 'step-3']);
    expect(stepCommits(root, 'tugplan/demo')).toEqual(['step-1', 'step-2', 'step-3']);
    expect(git(root, 'show', 'tugplan/demo:shared.txt')).toBe('top\nmiddle from step-3\nbottom\n');
  }, 120_000);
});
