/**
 * Locks a git killed by SIGKILL leaves in the repository's common directory (docs/run.md §1.6), found by
 * killing `tugcode run` at random times: `config.lock` (mid `git config` of a worker branch's plan),
 * `packed-refs.lock` and the worker branch's ref lock with no worker tree yet (mid `worktree add -B` or the
 * end-of-run `branch -D`). Each made every later run die with GitError (exit 10) until removed by hand. And a
 * worker tree left mid `worktree add` (git's `initializing` lock) stayed behind after a successful run.
 */
import { closeSync, existsSync, mkdirSync, openSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git } from '../helpers/repo.js';
import {
  implementerScript,
  planText,
  remoteWithClones,
  runJsonl,
  runRepo,
  step,
  stepCommits,
  tugJson,
} from './helpers.js';

const PLAN = '.tugtool/tugplan-demo.md';

const TWO = planText([step(1, 'One'), step(2, 'Two', { deps: [1] })]);

/** An empty lock file a killed git would leave: a minute older than the run. */
function staleLock(file: string): void {
  writeFileSync(file, '');
  const old = new Date(Date.now() - 60_000);
  utimesSync(file, old, old);
}

const warnings = (events: any[]) => events.filter((e) => e.type === 'warning').map((e) => [e.code, e.message]);

describe('locks left in the common git directory by a killed git', () => {
  for (const [what, rel] of [
    ['config.lock', ['config.lock']],
    ['packed-refs.lock', ['packed-refs.lock']],
    ["a worker branch's ref lock, no worker tree yet", ['refs', 'heads', 'tugplan', 'demo--w1.lock']],
  ] as const) {
    it(`a stale ${what} is removed by the next run (StaleIndexLock), which finishes and leaves no worker branch`, () => {
      const root = runRepo(TWO, 'demo');
      const lock = join(root, '.git', ...rel);
      mkdirSync(join(lock, '..'), { recursive: true });
      staleLock(lock);
      const impl = implementerScript();
      const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv]);
      expect(r.code, r.stderr).toBe(0);
      expect(warnings(r.events)).toContainEqual(['StaleIndexLock', `removed ${lock}, left by a git that is gone`]);
      expect(existsSync(lock)).toBe(false);
      expect(stepCommits(root, 'tugplan/demo')).toEqual(['step-1', 'step-2']);
      expect(git(root, 'branch', '--list', 'tugplan/demo--*').trim()).toBe('');
    });
  }

  it('a lock held open by a live process is left alone', () => {
    const root = runRepo(TWO, 'demo');
    const lock = join(root, '.git', 'packed-refs.lock');
    staleLock(lock);
    // A live holder: this test process keeps the file open during the run.
    const fd = openSync(lock, 'r');
    try {
      const impl = implementerScript();
      const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv]);
      expect(warnings(r.events).filter(([c]) => c === 'StaleIndexLock')).toEqual([]);
      expect(existsSync(lock)).toBe(true);
    } finally {
      closeSync(fd);
    }
  });

  it("a worker tree a killed `worktree add` left locked ('initializing') is adopted and removed at the end", () => {
    const root = runRepo(TWO, 'demo');
    const impl = implementerScript();
    writeFileSync(join(impl.failDir, 'step-2'), '9');
    const first = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv]);
    expect(stepCommits(root, 'tugplan/demo'), first.stderr).toEqual(['step-1']);
    rmSync(join(impl.failDir, 'step-2'));
    expect(tugJson(root, ['state', 'reset', PLAN, 'step-2', '--force']).code).toBe(0);
    // What a SIGKILL in the middle of `git worktree add` leaves: the admin directory's `locked` file.
    const admin = join(root, '.git', 'worktrees', 'tugplan__demo--w1');
    expect(existsSync(admin)).toBe(true);
    writeFileSync(join(admin, 'locked'), 'initializing\n');
    const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv]);
    expect(r.code, r.stderr).toBe(0);
    expect(stepCommits(root, 'tugplan/demo')).toEqual(['step-1', 'step-2']);
    expect(git(root, 'worktree', 'list', '--porcelain').match(/^worktree /gm)?.length).toBe(1);
    expect(git(root, 'branch', '--list', 'tugplan/demo--*').trim()).toBe('');
  });
});

describe('with --remote: the lock of the remote-tracking integration branch', () => {
  it('a stale refs/remotes/origin/tugplan/demo.lock (a killed fetch left it) is removed by the next run', () => {
    const { remote, clone } = remoteWithClones(runRepo(TWO, 'demo'), ['clone']);
    const impl = implementerScript();
    // One step pushed, so the remote-tracking branch exists, then a fetch killed mid-update.
    writeFileSync(join(impl.failDir, 'step-2'), '9');
    runJsonl(clone, ['demo', '--workers', '1', '--implementer', impl.argv, '--remote', 'origin']);
    rmSync(join(impl.failDir, 'step-2'));
    expect(tugJson(clone, ['state', 'reset', PLAN, 'step-2', '--force']).code).toBe(0);
    const lock = join(clone, '.git', 'refs', 'remotes', 'origin', 'tugplan', 'demo.lock');
    mkdirSync(join(lock, '..'), { recursive: true });
    staleLock(lock);
    const r = runJsonl(clone, ['demo', '--workers', '1', '--implementer', impl.argv, '--remote', 'origin']);
    expect(r.code, r.stderr).toBe(0);
    expect(warnings(r.events)).toContainEqual(['StaleIndexLock', `removed ${lock}, left by a git that is gone`]);
    expect(stepCommits(remote, 'tugplan/demo')).toEqual(['step-1', 'step-2']);
  });
});
