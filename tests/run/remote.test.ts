/**
 * `tugcode run --remote` on the embedded state (docs/run.md §1, docs/state.md §8): the integration branch is
 * created on the remote from the base, every step is pushed there fast-forward only, and the clone's own
 * `tugplan/<slug>` mirrors it; a clone that integrated locally before publishes its commits; a remote
 * that moved under the run (another pusher) is rebased onto; an unknown remote is refused.
 */
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, tempDir } from '../helpers/repo.js';
import { implementerScript, nodeImplementer, planText, runJsonl, runRepo, step } from './helpers.js';

const PLAN = planText([step(1, 'Base'), step(2, 'Next', { deps: [1] }), step(3, 'Side', { deps: [1] })]);

/** A bare remote seeded from a repository with the plan, and a clone of it. */
function cloned(): { remote: string; clone: string } {
  const seed = runRepo(PLAN);
  const dir = tempDir('tugcode-remote-');
  const remote = join(dir, 'remote.git');
  git(dir, 'clone', '-q', '--bare', seed, remote);
  const clone = join(dir, 'clone');
  git(dir, 'clone', '-q', remote, clone);
  return { remote, clone };
}

function trailers(cwd: string, ref: string): string[] {
  return git(cwd, 'log', '--reverse', '--format=%(trailers:key=Tug-Step,valueonly)', ref)
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
}

describe('tugcode run --remote (SQLite)', () => {
  it('creates the integration branch on the remote, pushes each step there, mirrors it locally', () => {
    const { remote, clone } = cloned();
    const impl = implementerScript();
    const r = runJsonl(clone, ['demo', '--workers', '2', '--implementer', impl.argv, '--remote', 'origin']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(trailers(remote, 'tugplan/demo')).toEqual(['step-1', expect.any(String), expect.any(String)]);
    expect([...trailers(remote, 'tugplan/demo')].sort()).toEqual(['step-1', 'step-2', 'step-3']);
    const tip = git(remote, 'rev-parse', 'tugplan/demo').trim();
    expect(git(clone, 'rev-parse', 'tugplan/demo').trim()).toBe(tip);
    expect(git(clone, 'rev-parse', 'origin/tugplan/demo').trim()).toBe(tip);
    // The base on the remote is untouched; a second run finds nothing to do.
    expect(git(remote, 'rev-parse', 'main').trim()).toBe(git(clone, 'rev-parse', 'main').trim());
    const again = runJsonl(clone, ['demo', '--implementer', impl.argv, '--remote', 'origin']);
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(git(remote, 'rev-parse', 'tugplan/demo').trim()).toBe(tip);
  });

  it('rebases onto a remote that another pusher moved during the run, never forcing', () => {
    const { remote, clone } = cloned();
    // Another host's clone pushes a commit onto the integration branch while step-1 runs here.
    const other = join(tempDir('tugcode-other-'), 'other');
    git(join(other, '..'), 'clone', '-q', remote, other);
    const impl = nodeImplementer(`
if (step === 'step-1' && !existsSync(join(dir, 'pushed'))) {
  const { execFileSync } = await import('node:child_process');
  const g = (...a) => execFileSync('git', a, { cwd: ${JSON.stringify(other)}, encoding: 'utf8' });
  g('fetch', '-q', 'origin');
  g('checkout', '-q', '-b', 'tugplan/demo', 'origin/tugplan/demo');
  writeFileSync(join(${JSON.stringify(other)}, 'other.txt'), 'other\\n');
  g('add', 'other.txt');
  g('-c', 'user.name=o', '-c', 'user.email=o@e', 'commit', '-q', '-m', 'other host');
  g('push', '-q', 'origin', 'tugplan/demo');
  writeFileSync(join(dir, 'pushed'), '');
}
writeFileSync(join(wt, step + '.txt'), step + '\\n');
`);
    const r = runJsonl(clone, ['demo', '--workers', '1', '--implementer', impl.argv, '--remote', 'origin']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const subjects = git(remote, 'log', '--reverse', '--format=%s', 'tugplan/demo').split('\n').filter(Boolean);
    expect(subjects).toContain('other host'); // kept: the run rebased onto it instead of forcing
    expect([...trailers(remote, 'tugplan/demo')].sort()).toEqual(['step-1', 'step-2', 'step-3']);
    // The later steps saw the other host's file (their worktrees were reset to the remote tip).
    expect(git(remote, 'show', 'tugplan/demo:other.txt')).toBe('other\n');
  });

  it('a push rejected because another host pushed first: fetch, rebase, push again', () => {
    const { remote, clone } = cloned();
    const other = join(tempDir('tugcode-other-'), 'other');
    git(join(other, '..'), 'clone', '-q', remote, other);
    const count = join(tempDir('tugcode-hook-'), 'count');
    writeFileSync(count, '');
    // The first pre-push of the run lets another host's push land between this host's fetch and its push.
    const hook = join(clone, '.git', 'hooks', 'pre-push');
    writeFileSync(
      hook,
      `#!/bin/sh
echo x >> '${count}'
[ "$(wc -l < '${count}')" -eq 2 ] || exit 0
cd '${other}' && unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE &&
git fetch -q origin && git checkout -q -B tugplan/demo origin/tugplan/demo &&
echo other > other.txt && git add other.txt && git -c user.name=o -c user.email=o@e commit -q -m 'other host' &&
git push -q origin tugplan/demo
`,
    );
    chmodSync(hook, 0o755);
    const impl = implementerScript();
    const r = runJsonl(clone, ['demo', '--workers', '1', '--implementer', impl.argv, '--remote', 'origin']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    // 1: the branch created on the remote; 2: step-1, rejected; 3: step-1 again; 4, 5: step-2, step-3.
    expect(readFileSync(count, 'utf8').trim().split('\n')).toHaveLength(5);
    const subjects = git(remote, 'log', '--format=%s', 'tugplan/demo').split('\n').filter(Boolean);
    expect(subjects).toContain('other host');
    expect([...trailers(remote, 'tugplan/demo')].sort()).toEqual(['step-1', 'step-2', 'step-3']);
    expect(r.events.filter((e) => e.type === 'attempt_failed')).toEqual([]);
  });

  it('publishes a clone that integrated locally before; an unknown remote is InvalidArgument', () => {
    const { remote, clone } = cloned();
    const impl = implementerScript();
    const local = runJsonl(clone, ['demo', '--implementer', impl.argv]);
    expect(local.code, local.stdout + local.stderr).toBe(0);
    expect(git(remote, 'branch', '--list', 'tugplan/demo').trim()).toBe('');
    const bad = runJsonl(clone, ['demo', '--implementer', impl.argv, '--remote', 'nowhere']);
    expect(bad.code).toBe(2);
    expect(bad.events.at(-1).error).toMatchObject({ code: 'InvalidArgument' });
    const r = runJsonl(clone, ['demo', '--implementer', impl.argv, '--remote', 'origin']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(git(remote, 'rev-parse', 'tugplan/demo').trim()).toBe(git(clone, 'rev-parse', 'tugplan/demo').trim());
    expect([...trailers(remote, 'tugplan/demo')].sort()).toEqual(['step-1', 'step-2', 'step-3']);
  });
});
