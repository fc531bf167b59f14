// The remote integration branch brought up to the clone's base when the plan changed there
// (src/gitflow/remote-branch.ts ensureRemoteBranch, docs/run.md §1.1 item 2): the same rule as the local
// branch's (catchUpCommit), published with a fast-forward-only push; a push another host beat looks again;
// a refusal (PlanDrift here) leaves the remote branch and the clone's as they were.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gitRunner, type GitRunner } from '../../src/git/exec.js';
import { resolveRepo } from '../../src/git/repo.js';
import { ensureRemoteBranch } from '../../src/gitflow/remote-branch.js';
import type { Locker } from '../../src/gitflow/remote.js';
import { git, tempDir } from '../helpers/repo.js';
import { planText, runRepo, step } from '../run/helpers.js';

const PLAN = planText([step(1, 'Base'), step(2, 'Next', { deps: [1] })]);
const PLAN_PATH = '.tugtool/tugplan-demo.md';
const INTEG = 'tugplan/demo';
const ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 't',
  GIT_AUTHOR_EMAIL: 't@e',
  GIT_COMMITTER_NAME: 't',
  GIT_COMMITTER_EMAIL: 't@e',
};
const direct: Locker = (fn) => fn();

/** A bare remote whose `tugplan/demo` is at main, and a clone (on main) without a local `tugplan/demo`. */
function setup(): { remote: string; clone: string; dir: string } {
  const seed = runRepo(PLAN);
  const dir = tempDir('tugcode-remote-catch-up-');
  const remote = join(dir, 'remote.git');
  git(dir, 'clone', '-q', '--bare', seed, remote);
  git(remote, 'branch', INTEG, 'main');
  const clone = join(dir, 'clone');
  git(dir, 'clone', '-q', remote, clone);
  return { remote, clone, dir };
}

/** Commit `text` as the plan on `branch` of the repository at `cwd` (checked out there). */
function commitPlan(cwd: string, text: string, message: string): string {
  writeFileSync(join(cwd, PLAN_PATH), text);
  git(cwd, 'commit', '-qam', message);
  return git(cwd, 'rev-parse', 'HEAD').trim();
}

/** Another host's clone commits `text` as the plan on the remote's tugplan/demo and pushes it. */
function otherHostPushes(remote: string, dir: string, text: string): string {
  const other = join(dir, `other-${Math.random().toString(36).slice(2)}`);
  git(dir, 'clone', '-q', '-b', INTEG, remote, other);
  const tip = commitPlan(other, text, 'other host: the plan');
  git(other, 'push', '-q', 'origin', INTEG);
  return tip;
}

function ensure(clone: string, g: GitRunner = gitRunner(ENV)) {
  return ensureRemoteBranch({
    git: g,
    repo: resolveRepo(clone),
    remote: 'origin',
    integrationBranch: INTEG,
    base: 'main',
    planPath: PLAN_PATH,
    lock: direct,
    net: direct,
  });
}

describe('ensureRemoteBranch: the catch-up with the base', () => {
  it('fast-forwards a remote branch behind the base, and the clone mirrors it', async () => {
    const { remote, clone } = setup();
    const main = commitPlan(
      clone,
      planText([step(1, 'Base'), step(2, 'Next', { deps: [1] }), step(3, 'More')]),
      'plan',
    );
    expect(await ensure(clone)).toBe(main);
    expect(git(remote, 'rev-parse', INTEG).trim()).toBe(main);
    expect(git(clone, 'rev-parse', INTEG).trim()).toBe(main);
    // Up to date now: nothing more is pushed.
    expect(await ensure(clone)).toBe(main);
  });

  it('a push another host beat fetches and looks again: the base is merged onto its commit', async () => {
    const { remote, clone, dir } = setup();
    const main = commitPlan(clone, PLAN.replace('\n\n', '\n\nEdited on main.\n\n'), 'plan prose');
    const g = gitRunner(ENV);
    let pushes = 0;
    let other = '';
    const racing: GitRunner = {
      ...g,
      async tryRun(...a: Parameters<GitRunner['tryRun']>) {
        // The first push of this clone: another host's lands just before it.
        if (a[0][0] === 'push' && pushes++ === 0) other = otherHostPushes(remote, dir, `${PLAN}\nA note.\n`);
        return g.tryRun(...a);
      },
    };
    const tip = await ensure(clone, racing);
    expect(pushes).toBe(2);
    expect(git(remote, 'rev-parse', INTEG).trim()).toBe(tip);
    expect(git(remote, 'log', '-1', '--format=%P %s', INTEG).trim()).toBe(`${other} ${main} Merge main into ${INTEG}`);
    expect(git(clone, 'rev-parse', INTEG).trim()).toBe(tip);
  });

  it('a remote branch that changed the plan itself is PlanDrift: neither branch moves', async () => {
    const { remote, clone, dir } = setup();
    const drifted = otherHostPushes(remote, dir, planText([step(1, 'Base'), step(2, 'Next'), step(4, 'Elsewhere')]));
    commitPlan(clone, PLAN.replace('\n\n', '\n\nEdited on main.\n\n'), 'plan prose');
    // The plan commit is on the remote branch only (origin/main lacks it): restoring the base's copy is the fix.
    await expect(ensure(clone)).rejects.toMatchObject({
      code: 'PlanDrift',
      details: { summary: `origin/${INTEG} holds another copy of the plan than main`, newer: 'integration' },
      hint: `git switch ${INTEG} && git merge --ff-only origin/${INTEG} && git checkout main -- ${PLAN_PATH} && git commit, then run again`,
    });
    expect(git(remote, 'rev-parse', INTEG).trim()).toBe(drifted);
    expect(git(clone, 'branch', '--list', INTEG).trim()).toBe('');
  });
});
