/**
 * `tugcode run --remote` on two hosts (docs/run.md §1.1 item 2, docs/state.md §8.4): host A edits the plan
 * on main, pushes main and runs, so the remote integration branch takes in the newer main. Host B, whose
 * main is older, then gets PlanDrift, and its hint puts the right fix first: bring main up to date
 * (`git pull`), not commit B's older plan onto the branch. Followed as written, the next run works.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, tempDir } from '../helpers/repo.js';
import { implementerScript, planText, runJsonl, runRepo, step } from './helpers.js';

const PLAN = planText([step(1, 'Base'), step(2, 'Next', { deps: [1] })]);
const PLAN3 = planText([step(1, 'Base'), step(2, 'Next', { deps: [1] }), step(3, 'More', { deps: [2] })]);
const PLAN_PATH = '.tugtool/tugplan-demo.md';

/** A bare remote seeded from a repository with the plan, and two clones of it (two hosts). */
function twoHosts(): { remote: string; a: string; b: string } {
  const seed = runRepo(PLAN);
  const dir = tempDir('tugcode-remote-newer-');
  const remote = join(dir, 'remote.git');
  git(dir, 'clone', '-q', '--bare', seed, remote);
  git(dir, 'clone', '-q', remote, join(dir, 'a'));
  git(dir, 'clone', '-q', remote, join(dir, 'b'));
  return { remote, a: join(dir, 'a'), b: join(dir, 'b') };
}

describe('run --remote: another host took in a newer base', () => {
  it('PlanDrift names git pull of the base first; after it the run goes on', () => {
    const { remote, a, b } = twoHosts();
    const impl = implementerScript();
    const args = ['demo', '--workers', '1', '--implementer', impl.argv, '--remote', 'origin'];
    const first = runJsonl(a, args);
    expect(first.code, first.stdout + first.stderr).toBe(0);
    // Host A: a third step on main, pushed, and run: the remote branch takes that main in.
    writeFileSync(join(a, PLAN_PATH), PLAN3);
    git(a, 'commit', '-qam', 'plan: a third step');
    git(a, 'push', '-q', 'origin', 'main');
    const second = runJsonl(a, args);
    expect(second.code, second.stdout + second.stderr).toBe(0);
    expect(git(remote, 'show', `tugplan/demo:${PLAN_PATH}`)).toBe(PLAN3);

    // Host B still has the older main.
    const before = git(remote, 'rev-parse', 'tugplan/demo').trim();
    const r = runJsonl(b, args);
    expect(r.code, r.stdout + r.stderr).toBe(4);
    expect(r.events.at(-1).error).toMatchObject({
      code: 'PlanDrift',
      details: {
        newer: 'remote_base',
        base_branch: 'main',
        integration_branch: 'tugplan/demo',
        remote: 'origin',
        summary: "origin/tugplan/demo took in a newer main than this clone's (origin/main has its plan)",
      },
      hint: 'git switch main && git pull origin main, then run again   (origin/tugplan/demo took in the newer plan of origin/main)',
    });
    // The hint's first command is the pull; committing B's older plan is not offered.
    expect(r.stderr).toContain('hint: git switch main && git pull origin main, then run again');
    expect(r.stderr).not.toContain('git checkout main --');
    expect(git(remote, 'rev-parse', 'tugplan/demo').trim()).toBe(before);

    // What the hint says: B pulls main, then runs again; the remote branch already holds every step.
    git(b, 'switch', '-q', 'main');
    git(b, 'pull', '-q', 'origin', 'main');
    const again = runJsonl(b, args);
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(again.events.filter((e) => e.type === 'claimed')).toEqual([]);
    expect(git(remote, 'rev-parse', 'tugplan/demo').trim()).toBe(before);
  }, 240_000);
});
