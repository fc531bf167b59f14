/**
 * `tugcode run --remote` on the embedded state (docs/run.md §1, docs/state.md §8): the integration branch is
 * created on the remote from the base, every step is pushed there fast-forward only, and the clone's own
 * `tugplan/<slug>` mirrors it; a clone that integrated locally before publishes its commits; a remote
 * that moved under the run (another pusher) is rebased onto; an unknown remote is refused. A plan edited and
 * committed on the clone's base after a run is taken in by the remote branch at the next run (docs/run.md
 * §1.1 item 2), or, when that conflicts, nothing is changed (MergeConflict).
 */
import { chmodSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { git, tempDir } from '../helpers/repo.js';
import {
  holdingImplementer,
  implementerScript,
  nodeImplementer,
  planText,
  remoteWithClones,
  runJsonl,
  runRepo,
  startRun,
  step,
  waitUntil,
} from './helpers.js';

const PLAN = planText([step(1, 'Base'), step(2, 'Next', { deps: [1] }), step(3, 'Side', { deps: [1] })]);
const PLAN4 = planText([
  step(1, 'Base'),
  step(2, 'Next', { deps: [1] }),
  step(3, 'Side', { deps: [1] }),
  step(4, 'More', { deps: [2] }),
]);
const PLAN_PATH = '.tugtool/tugplan-demo.md';

/** Commit `text` as the plan on the clone's main (and `files` with it), as a user editing it would. */
function editPlan(root: string, text: string, message: string, files: Record<string, string> = {}): void {
  for (const [f, t] of Object.entries({ [PLAN_PATH]: text, ...files })) writeFileSync(join(root, f), t);
  git(root, 'add', '-A');
  git(root, 'commit', '-qm', message);
}

const claimedSteps = (events: any[]) => events.filter((e) => e.type === 'claimed').map((e) => e.step_anchor);

/** A bare remote seeded from a repository with the plan, and a clone of it. */
const cloned = () => remoteWithClones(runRepo(PLAN), ['clone']);

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

  it('names the remote in the header: integrating through origin/tugplan/<slug>', () => {
    const { clone } = cloned();
    const impl = implementerScript();
    const text = runCli(['run', 'demo', '--workers', '1', '--implementer', impl.argv, '--remote', 'origin'], {
      cwd: clone,
    });
    expect(text.code, text.stdout + text.stderr).toBe(0);
    expect(text.stdout.split('\n')[0]).toBe(
      'run .tugtool/tugplan-demo.md: 1 worker, integrating through origin/tugplan/demo (base main)',
    );
    // --json says it in run_started; a run without --remote has no `remote`, and its header says `into`.
    const again = runJsonl(clone, ['demo', '--workers', '1', '--implementer', impl.argv, '--remote', 'origin']);
    expect(again.events[0]).toMatchObject({
      type: 'run_started',
      integration_branch: 'tugplan/demo',
      remote: 'origin',
    });
    const local = runJsonl(runRepo(PLAN), ['demo', '--workers', '1', '--implementer', impl.argv]);
    expect(local.events[0].type).toBe('run_started');
    expect(local.events[0]).not.toHaveProperty('remote');
  });

  it('a host that finds every step done by another host says the plan is done', () => {
    const { remote, clone } = cloned();
    const impl = implementerScript();
    expect(runJsonl(clone, ['demo', '--implementer', impl.argv, '--remote', 'origin']).code).toBe(0);
    // A second host's clone: its own state learns the steps from the remote branch's commits.
    const other = join(remote, '..', 'other');
    git(join(remote, '..'), 'clone', '-q', remote, other);
    const r = runCli(['run', 'demo', '--implementer', impl.argv, '--remote', 'origin'], { cwd: other });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain('plan done: nothing to run, all 3 steps already completed · 0 commits');
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

  it('publishes a clone that integrated locally before, when moved on purpose; an unknown remote is InvalidArgument', () => {
    const { remote, clone } = cloned();
    const impl = implementerScript();
    const local = runJsonl(clone, ['demo', '--implementer', impl.argv]);
    expect(local.code, local.stdout + local.stderr).toBe(0);
    expect(git(remote, 'branch', '--list', 'tugplan/demo').trim()).toBe('');
    const bad = runJsonl(clone, ['demo', '--implementer', impl.argv, '--remote', 'nowhere']);
    expect(bad.code).toBe(2);
    expect(bad.events.at(-1).error).toMatchObject({ code: 'InvalidArgument' });
    // Its dry run refuses it alike, not a schedule that exits 0.
    const dry = runCli(['run', 'demo', '--implementer', impl.argv, '--remote', 'nowhere', '--dry-run', '--json'], {
      cwd: clone,
    });
    expect(dry.code, dry.stdout).toBe(2);
    expect(dry.json.error).toMatchObject({
      code: 'InvalidArgument',
      message: expect.stringMatching(/no git remote named nowhere/),
    });
    // The plan integrates into this clone's branch (docs/run.md §1.11): moving it to the remote is said.
    const refused = runJsonl(clone, ['demo', '--implementer', impl.argv, '--remote', 'origin']);
    expect(refused.code).toBe(4);
    expect(refused.events.at(-1).error).toMatchObject({ code: 'IntegrationTargetMismatch' });
    expect(git(remote, 'branch', '--list', 'tugplan/demo').trim()).toBe('');
    const r = runJsonl(clone, ['demo', '--implementer', impl.argv, '--remote', 'origin', '--move-integration']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(git(remote, 'rev-parse', 'tugplan/demo').trim()).toBe(git(clone, 'rev-parse', 'tugplan/demo').trim());
    expect([...trailers(remote, 'tugplan/demo')].sort()).toEqual(['step-1', 'step-2', 'step-3']);
  });

  it('runs a step added to the plan on main after a run: the remote branch takes main in, no PlanDrift', () => {
    const { remote, clone } = cloned();
    const impl = implementerScript();
    const args = ['demo', '--workers', '2', '--implementer', impl.argv, '--remote', 'origin'];
    const first = runJsonl(clone, args);
    expect(first.code, first.stdout + first.stderr).toBe(0);
    const before = git(remote, 'rev-parse', 'tugplan/demo').trim();
    editPlan(clone, PLAN4, 'plan: a fourth step');
    const main = git(clone, 'rev-parse', 'main').trim();
    const r = runJsonl(clone, args);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.events.filter((e) => e.type === 'warning').map((e) => e.code)).toEqual(['PlanReinitialized']);
    expect(claimedSteps(r.events)).toEqual(['step-4']);
    expect(r.events.at(-1)).toMatchObject({ status: 'ok', steps_completed: ['step-4'] });
    // The remote branch holds main's plan commit and what it had (a merge: it had step commits of its own).
    expect(git(remote, 'merge-base', '--is-ancestor', main, 'tugplan/demo')).toBe('');
    expect(git(remote, 'merge-base', '--is-ancestor', before, 'tugplan/demo')).toBe('');
    expect(git(remote, 'log', '--format=%s', 'tugplan/demo')).toContain('Merge main into tugplan/demo\n');
    expect(git(remote, 'show', `tugplan/demo:${PLAN_PATH}`)).toBe(PLAN4);
    expect([...trailers(remote, 'tugplan/demo')].sort()).toEqual(['step-1', 'step-2', 'step-3', 'step-4']);
    const tip = git(remote, 'rev-parse', 'tugplan/demo').trim();
    expect(git(clone, 'rev-parse', 'tugplan/demo').trim()).toBe(tip);
    // The base on the remote is untouched (the clone's own base was taken in); a third run has nothing to do.
    expect(git(remote, 'rev-parse', 'main').trim()).not.toBe(main);
    const third = runJsonl(clone, args);
    expect(third.code, third.stdout + third.stderr).toBe(0);
    expect(claimedSteps(third.events)).toEqual([]);
    expect(git(remote, 'rev-parse', 'tugplan/demo').trim()).toBe(tip);
  });

  it('a plan change on main that conflicts with a step is MergeConflict, the remote branch unchanged', () => {
    const { remote, clone } = cloned();
    const impl = implementerScript();
    const args = ['demo', '--workers', '1', '--implementer', impl.argv, '--remote', 'origin'];
    const first = runJsonl(clone, args);
    expect(first.code, first.stdout + first.stderr).toBe(0);
    // main changes the file step-1 wrote on tugplan/demo, with the plan edit.
    editPlan(clone, PLAN4, 'plan: a fourth step, and step-1.txt', { 'step-1.txt': 'from main\n' });
    const before = git(remote, 'rev-parse', 'tugplan/demo').trim();
    const local = git(clone, 'rev-parse', 'tugplan/demo').trim();
    const r = runJsonl(clone, args);
    expect(r.code, r.stdout + r.stderr).toBe(4);
    expect(r.events.at(-1).error).toMatchObject({
      code: 'MergeConflict',
      details: { branch: 'main', into: 'origin/tugplan/demo', files: ['step-1.txt'] },
    });
    expect(r.stderr).toContain('hint: git switch tugplan/demo && git merge --ff-only origin/tugplan/demo');
    expect(claimedSteps(r.events)).toEqual([]);
    expect(git(remote, 'rev-parse', 'tugplan/demo').trim()).toBe(before);
    expect(git(clone, 'rev-parse', 'tugplan/demo').trim()).toBe(local);
  });

  it('a remote unreachable mid-run (for its fetch, then only for its push) is waited for: nothing fails, each step once', async () => {
    const { dir, remote, clone } = cloned();
    // Pushes go through a link to the remote, so they alone can fail while fetches work.
    const pushVia = join(dir, 'push.git');
    symlinkSync(remote, pushVia);
    git(clone, 'remote', 'set-url', '--push', 'origin', pushVia);
    const impl = holdingImplementer();
    for (const h of ['step-1-a1', 'step-2-a1', 'step-3-a1']) writeFileSync(join(impl.hold, h), '');
    const run = startRun(clone, ['demo', '--workers', '1', '--implementer', impl.argv, '--remote', 'origin']);
    const said = () => run.events().filter((e: any) => e.type === 'warning' && e.code === 'GitError');
    const warnings = () => said().filter((e: any) => !e.message.includes(' is back after '));
    const started = () => readdirSync(impl.started);
    // The remote goes away while step-1 is implemented: its integration cannot fetch.
    await waitUntil('step-1 to start', () => started().includes('step-1-a1'));
    renameSync(remote, remote + '.away');
    rmSync(join(impl.hold, 'step-1-a1'));
    const first = await waitUntil('the run to say it waits for origin', () => warnings()[0]);
    expect(first.message).toMatch(/^origin is unreachable \(.*\): the run waits for it, up to 120 s$/);
    renameSync(remote + '.away', remote);
    // Then only its pushes fail, while the next step is implemented.
    const next = await waitUntil('the next step to start', () => started().find((f) => f !== 'step-1-a1'));
    rmSync(pushVia);
    rmSync(join(impl.hold, next));
    await waitUntil('the run to wait for origin again', () => warnings()[1]);
    symlinkSync(remote, pushVia);
    rmSync(join(impl.hold, next === 'step-2-a1' ? 'step-3-a1' : 'step-2-a1'));
    const r = await run.done;
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect([...trailers(remote, 'tugplan/demo')].sort()).toEqual(['step-1', 'step-2', 'step-3']);
    // No attempt failed: each step was claimed once.
    expect(r.events.filter((e: any) => e.type === 'claimed').map((e: any) => e.attempt)).toEqual([1, 1, 1]);
    expect(r.events.at(-1)).toMatchObject({ type: 'summary', status: 'ok' });
    // Each outage is said as it starts and as it ends.
    expect(said().map((e: any) => e.message.replace(/\(.*\)/, '(…)').replace(/\d+ s:/, 'N s:'))).toEqual([
      'origin is unreachable (…): the run waits for it, up to 120 s',
      'origin is back after N s: the run goes on',
      'origin is unreachable (…): the run waits for it, up to 120 s',
      'origin is back after N s: the run goes on',
    ]);
  }, 90_000);

  it('a signal ends the wait for an unreachable remote at once, the claims released, the run Interrupted', async () => {
    const { remote, clone } = cloned();
    const impl = holdingImplementer();
    writeFileSync(join(impl.hold, 'step-1-a1'), '');
    const run = startRun(clone, ['demo', '--workers', '1', '--implementer', impl.argv, '--remote', 'origin']);
    await waitUntil('step-1 to start', () => readdirSync(impl.started).includes('step-1-a1'));
    renameSync(remote, remote + '.away');
    rmSync(join(impl.hold, 'step-1-a1'));
    await waitUntil('the run to wait for origin', () =>
      run.events().some((e: any) => e.type === 'warning' && e.code === 'GitError'),
    );
    const t0 = Date.now();
    run.child.kill('SIGINT');
    const r = await run.done;
    // Neither the wait's pause nor git's own retries of the fetch hold the stop up (before: ~9 s).
    expect(Date.now() - t0).toBeLessThan(3000);
    expect(r.code, r.stdout + r.stderr).toBe(130);
    // The interruption is what it reports: the end-of-run sync, failing on the remote still away, is no error.
    expect(r.events.at(-1)).toMatchObject({ type: 'summary', status: 'error', error: { code: 'Interrupted' } });
    expect(r.stderr).not.toContain('GitError');
    const show = runCli(['state', 'show', 'demo', '--json'], { cwd: clone });
    expect(JSON.parse(show.stdout).plans[0].steps.filter((s: any) => s.status !== 'pending')).toEqual([]);
  }, 60_000);
});
