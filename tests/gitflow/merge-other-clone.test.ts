/**
 * `tugcode merge` on a clone that never ran the plan (docs/run.md §1.11, docs/state.md §8): host A ran it
 * through `origin` on one PostgreSQL; host B's state names step commits B does not have. B's merge says where
 * the branch is — the hint is the literal `git fetch origin tugplan/demo:tugplan/demo` — and changes nothing;
 * after that fetch the merge works. The same for a local integration branch behind the remote's.
 */
import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../helpers/pg.js';
import { git } from '../helpers/repo.js';
import {
  gitSnapshot,
  implementerScript,
  planText,
  remoteWithClones,
  runRepo,
  startRun,
  step,
  tugJson,
} from '../run/helpers.js';

const STEPS = [step(1, 'Base'), step(2, 'Next', { deps: [1] }), step(3, 'Side', { deps: [1] })];
const FETCH = 'git fetch origin tugplan/demo:tugplan/demo';

/** Host A runs the plan through origin to the end; host B shares the state and has fetched nothing. */
async function ranOnA(name: string) {
  const db = await createTestDatabase(name);
  const { remote, a, b } = remoteWithClones(runRepo(planText(STEPS)), ['a', 'b']);
  const envA = { TUGCODE_STATE_URL: db.url, TUGCODE_STATE_HOST: 'hosta' };
  const envB = { TUGCODE_STATE_URL: db.url, TUGCODE_STATE_HOST: 'hostb' };
  const ra = await startRun(a, ['demo', '--implementer', implementerScript().argv, '--remote', 'origin'], envA).done;
  expect(ra.code, ra.stdout + ra.stderr).toBe(0);
  return { remote, b, envB };
}

/** B's merge after the hinted fetch: merged, every step commit on B's main. */
function mergesAfterFetch(b: string, envB: Record<string, string>): void {
  git(b, 'fetch', '-q', 'origin', 'tugplan/demo:tugplan/demo');
  const ok = tugJson(b, ['merge', 'demo'], envB);
  expect(ok.code, JSON.stringify(ok.json) + ok.stderr).toBe(0);
  expect(ok.json).toMatchObject({ merged: true, into: 'main', branch: 'tugplan/demo' });
  for (const c of Object.values(ok.json.step_commits as Record<string, string>))
    expect(git(b, 'merge-base', '--is-ancestor', c, 'main')).toBe('');
}

describe('merge on a clone that never ran the plan', () => {
  it('no local integration branch: BranchNotFound whose hint is the fetch; nothing changed; then merge works', async () => {
    const { b, envB } = await ranOnA('merge-other');
    const before = gitSnapshot(b);
    const main = git(b, 'rev-parse', 'main');
    for (const args of [
      ['merge', 'demo'],
      ['merge', 'demo', '--dry-run'],
    ]) {
      const r = tugJson(b, args, envB);
      expect(r.code, JSON.stringify(r.json) + r.stderr).toBe(3);
      expect(r.json.error.code).toBe('BranchNotFound');
      expect(r.json.error.hint).toBe(`${FETCH}, then merge again`);
      expect(r.json.error.details).toMatchObject({ integration_kind: 'remote', integration_where: 'origin' });
      expect(r.json.error.message).toContain('origin/tugplan/demo');
      expect(r.stderr).not.toMatch(/GitError|Not a valid commit name/);
    }
    expect(gitSnapshot(b)).toEqual(before);
    expect(git(b, 'rev-parse', 'main')).toBe(main);
    mergesAfterFetch(b, envB);
  }, 120_000);

  it('a local integration branch behind the remote: CommitNotIntegrated whose hint is the same fetch', async () => {
    const { remote, b, envB } = await ranOnA('merge-behind');
    // B holds tugplan/demo as it was after step 1 only; the later step commits never reached B.
    const log = git(remote, 'log', '--format=%H %(trailers:key=Tug-Step,valueonly,separator=%x2C)', 'tugplan/demo');
    const first = log
      .split('\n')
      .map((l) => l.trim().split(' '))
      .find(([, s]) => s === 'step-1')![0]!;
    git(remote, 'update-ref', 'refs/heads/partial', first);
    git(b, 'fetch', '-q', 'origin', 'partial:tugplan/demo');
    const before = gitSnapshot(b);
    const r = tugJson(b, ['merge', 'demo'], envB);
    expect(r.code, JSON.stringify(r.json) + r.stderr).toBe(4);
    expect(r.json.error.code).toBe('CommitNotIntegrated');
    expect(r.json.error.hint).toMatch(new RegExp(`^${FETCH}, then merge again {3}`));
    expect(gitSnapshot(b)).toEqual(before);
    mergesAfterFetch(b, envB);
  }, 120_000);
});
