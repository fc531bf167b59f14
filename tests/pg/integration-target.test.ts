/**
 * Bug B1 on one PostgreSQL (docs/run.md §1.11, docs/state.md §8.4): host A runs with `--remote origin`, host B
 * without. B is refused (IntegrationTargetMismatch) before it claims or moves anything, while A runs on and
 * finishes every step on the remote; the reverse (B local first) refuses A's `--remote` run, and a third
 * clone's local run as well (two clones' own branches are two places). doctor names the target.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../helpers/pg.js';
import { git } from '../helpers/repo.js';
import {
  gitSnapshot,
  holdingImplementer,
  implementerScript,
  planText,
  remoteWithClones,
  runRepo,
  type RunResult,
  startRun,
  step,
  tugJson,
  waitUntil,
} from '../run/helpers.js';

const PLAN = '.tugtool/tugplan-demo.md';
const STEPS = [step(1, 'Base'), step(2, 'Next', { deps: [1] }), step(3, 'Side', { deps: [1] })];

const hosts = () => remoteWithClones(runRepo(planText(STEPS)), ['a', 'b', 'c']);

function refused(r: RunResult): any {
  expect(r.code, r.stdout + r.stderr).toBe(4);
  expect(r.events, r.stdout).toHaveLength(1);
  expect(r.events[0]).toMatchObject({ type: 'summary', error: { code: 'IntegrationTargetMismatch' } });
  return r.events[0].error;
}

describe('one PostgreSQL, two hosts, two integration targets', () => {
  it('host B without --remote is refused while host A integrates through origin; A finishes every step there', async () => {
    const db = await createTestDatabase('target');
    const { remote, a, b } = hosts();
    const impl = holdingImplementer();
    writeFileSync(join(impl.hold, 'step-1-a1'), '');
    const envA = { TUGCODE_STATE_URL: db.url, TUGCODE_STATE_HOST: 'hosta' };
    const envB = { TUGCODE_STATE_URL: db.url, TUGCODE_STATE_HOST: 'hostb' };
    const runA = startRun(a, ['demo', '--workers', '2', '--implementer', impl.argv, '--remote', 'origin'], envA);
    const started = join(impl.started, 'step-1-a1');
    await waitUntil('host A on step-1', () => {
      if (runA.child.exitCode !== null) throw new Error(`host A ended early: ${JSON.stringify(runA.events().at(-1))}`);
      return existsSync(started) && readFileSync(started, 'utf8') !== '';
    });
    const before = gitSnapshot(b);
    const eventsBefore = tugJson(b, ['state', 'log', PLAN, '--limit', '1000'], envB).json.events.length;
    const rb = await startRun(b, ['demo', '--implementer', impl.argv], envB).done;
    const err = refused(rb);
    expect(err.details).toMatchObject({ recorded_kind: 'remote', recorded_where: 'origin', kind: 'local' });
    expect(err.details.where).toBe(`hostb:${b}`);
    expect(err.hint).toMatch(/^tugcode run \S+ --implementer .* --remote origin {3}/);
    // Nothing of B's: no branch, no worktree, no claim, no event.
    expect(gitSnapshot(b)).toEqual(before);
    const log = tugJson(b, ['state', 'log', PLAN, '--limit', '1000'], envB).json.events;
    expect(log.length).toBe(eventsBefore);
    expect(log.filter((e: any) => String(e.actor).startsWith('hostb:'))).toEqual([]);
    rmSync(join(impl.hold, 'step-1-a1'));
    const ra = await runA.done;
    expect(ra.code, ra.stdout + ra.stderr).toBe(0);
    const onRemote = git(remote, 'log', '--format=%(trailers:key=Tug-Step,valueonly)', 'tugplan/demo');
    expect(
      onRemote
        .split('\n')
        .map((l) => l.trim())
        .filter(Boolean)
        .sort(),
    ).toEqual(['step-1', 'step-2', 'step-3']);
    // Host B, as the hint says, is done at once: the steps are on the remote.
    const hinted = await startRun(b, ['demo', '--implementer', impl.argv, '--remote', 'origin'], envB).done;
    expect(hinted.code, hinted.stdout + hinted.stderr).toBe(0);
    const doctor = tugJson(b, ['doctor'], envB).json.checks.find((c: any) => c.name === 'integration-targets');
    expect(doctor).toMatchObject({ status: 'pass', message: `${PLAN}: origin/tugplan/demo` });
  }, 120_000);

  it('the reverse: host B integrates locally first; host A with --remote is refused, and so is host C locally', async () => {
    const db = await createTestDatabase('target-rev');
    const { remote, a, b, c } = hosts();
    const impl = implementerScript();
    const envA = { TUGCODE_STATE_URL: db.url, TUGCODE_STATE_HOST: 'hosta' };
    const envB = { TUGCODE_STATE_URL: db.url, TUGCODE_STATE_HOST: 'hostb' };
    const envC = { TUGCODE_STATE_URL: db.url, TUGCODE_STATE_HOST: 'hostc' };
    const rb = await startRun(b, ['demo', '--implementer', impl.argv], envB).done;
    expect(rb.code, rb.stdout + rb.stderr).toBe(0);
    const err = refused(await startRun(a, ['demo', '--implementer', impl.argv, '--remote', 'origin'], envA).done);
    expect(err.details).toMatchObject({ recorded_kind: 'local', recorded_where: `hostb:${b}`, kind: 'remote' });
    expect(err.hint).toContain(`cd ${b} && tugcode run ${PLAN}`);
    expect(git(remote, 'branch', '--list', 'tugplan/demo').trim()).toBe('');
    const local = refused(await startRun(c, ['demo', '--implementer', impl.argv], envC).done);
    expect(local.details).toMatchObject({ recorded_where: `hostb:${b}`, kind: 'local', where: `hostc:${c}` });
    expect(git(c, 'branch', '--list', 'tugplan/demo').trim()).toBe('');
  }, 120_000);
});
