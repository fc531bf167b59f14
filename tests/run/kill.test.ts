/**
 * `tugcode run` killed and signalled (docs/run.md §1 items 3, 4.8, 4.10, 5): a SIGKILLed run leaves its lock,
 * its worker worktree and its claim behind and the next run takes them over; a crash between the
 * integration fast-forward and `complete` is healed by the next run's reconcile; SIGINT/SIGTERM release the
 * claims and exit 130/143; a refused heartbeat kills the implementer and the step is claimed again.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git } from '../helpers/repo.js';
import { newCall, OpsContext } from '../../src/ops/context.js';
import { runPlan } from '../../src/run/driver.js';
import type { RunEvent } from '../../src/run/types.js';
import {
  groupAlive,
  holdingImplementer,
  nodeImplementer,
  planText,
  runJsonl,
  runRepo,
  seenBy,
  startRun,
  step,
  stepCommits,
  tugJson,
  waitUntil,
} from './helpers.js';

const PLAN = '.tugtool/tugplan-demo.md';

const CHAIN = planText([
  step(1, 'Base', { checkpoint: 'test -f step-1.txt' }),
  step(2, 'Next', { deps: [1], checkpoint: 'test -f step-1.txt && test -f step-2.txt' }),
  step(3, 'Side'),
]);

/** The steps of the plan as `state show` sees them. */
function stepsOf(root: string): any[] {
  const r = tugJson(root, ['state', 'show', PLAN]);
  expect(r.code, r.stderr).toBe(0);
  return r.json.plans[0].steps;
}

/** Wait until the run's implementer for `anchor` (attempt) has started; returns its pid (its group id). */
async function implementerStarted(
  run: ReturnType<typeof startRun>,
  impl: ReturnType<typeof holdingImplementer>,
  anchor: string,
  attempt = 1,
): Promise<number> {
  await waitUntil(`${anchor} in its implementer phase`, () => {
    const events = run.events();
    if (run.child.exitCode !== null || run.child.signalCode !== null)
      throw new Error(`the run ended before ${anchor} started: ${JSON.stringify(events.at(-1))}`);
    return events.some((e) => e.type === 'phase' && e.step_anchor === anchor && e.phase === 'implementer');
  });
  const marker = join(impl.started, `${anchor}-a${attempt}`);
  await waitUntil(`the implementer of ${anchor}`, () => existsSync(marker) && readFileSync(marker, 'utf8') !== '');
  return Number(readFileSync(marker, 'utf8'));
}

describe('tugcode run, killed and signalled', () => {
  it('after a SIGKILL mid-step the next run takes over the lock, the worktree and the claim; no duplicate commits', async () => {
    const root = runRepo(CHAIN);
    const impl = holdingImplementer();
    writeFileSync(join(impl.hold, 'step-1-a1'), '');
    const run = startRun(root, ['demo', '--workers', '1', '--implementer', impl.argv]);
    const pid = await implementerStarted(run, impl, 'step-1');
    expect(run.events().filter((e) => e.type === 'claimed')).toMatchObject([{ step_anchor: 'step-1', attempt: 1 }]);
    run.child.kill('SIGKILL');
    await run.done;
    // The implementer leads its own process group, so it outlives the driver (still held, still running).
    expect(groupAlive(pid)).toBe(true);

    // What the killed run left: its lock, its worker worktree, and its claim on step-1.
    expect(existsSync(join(root, '.tugtool', 'run-demo.lock'))).toBe(true);
    expect(git(root, 'worktree', 'list')).toContain('tugplan__demo--w1');
    const before = stepsOf(root).find((s) => s.anchor === 'step-1');
    expect(before.status).toBe('in_progress');
    expect(before.claimed_by).toContain('tugplan__demo--w1');

    const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv]);
    const summary = r.events.at(-1);
    expect(summary, r.stderr).toMatchObject({ type: 'summary', status: 'ok' });
    expect(r.code).toBe(0);
    expect(r.events[0]).toMatchObject({ type: 'run_started' });
    expect([...summary.steps_completed].sort()).toEqual(['step-1', 'step-2', 'step-3']);
    // The adopted worktree's claim was released, so step-1 was claimed afresh at the next attempt.
    expect(r.events.find((e) => e.type === 'claimed' && e.step_anchor === 'step-1')).toMatchObject({ attempt: 2 });
    expect([...stepCommits(root, 'tugplan/demo')].sort()).toEqual(['step-1', 'step-2', 'step-3']);
    expect(seenBy(impl.seen)['step-1']!.map((s) => s.attempt)).toEqual([1, 2]);
    expect(stepsOf(root).every((s) => s.status === 'completed')).toBe(true);
    expect(existsSync(join(root, '.tugtool', 'run-demo.lock'))).toBe(false);
    // Adopting w1's worktree ended the orphaned implementer before the tree was reused.
    expect(groupAlive(pid)).toBe(false);
  });

  it('a crash between the fast-forward and complete is healed by the next run from the trailers', () => {
    const root = runRepo(CHAIN);
    const impl = holdingImplementer();
    const first = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv], {
      TUGCODE_RUN_FAULT: 'after-integrate:step-1',
    });
    expect(first.code, first.stderr).toBeNull(); // killed by SIGKILL
    expect(first.events.some((e) => e.type === 'summary')).toBe(false);
    expect(stepCommits(root, 'tugplan/demo')).toEqual(['step-1']);
    expect(stepsOf(root).find((s) => s.anchor === 'step-1').status).not.toBe('completed');

    const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv]);
    const summary = r.events.at(-1);
    expect(summary, r.stderr).toMatchObject({ type: 'summary', status: 'ok' });
    expect(r.code).toBe(0);
    // step-1 was settled by the start-up reconcile: never claimed again, no second commit.
    expect(
      r.events
        .filter((e) => e.type === 'claimed')
        .map((e) => e.step_anchor)
        .sort(),
    ).toEqual(['step-2', 'step-3']);
    const commits = stepCommits(root, 'tugplan/demo');
    expect(commits[0]).toBe('step-1');
    expect([...commits].sort()).toEqual(['step-1', 'step-2', 'step-3']);
    const s1 = stepsOf(root).find((s) => s.anchor === 'step-1');
    expect(s1.status).toBe('completed');
    expect(s1.commit_hash).toBe(git(root, 'rev-list', '--reverse', 'main..tugplan/demo').split('\n')[0]);
    expect(seenBy(impl.seen)['step-1']).toHaveLength(1);
  });

  for (const [sig, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
    // A closed terminal or ssh session: a run left going must not orphan its implementers or hold its claims.
    ['SIGHUP', 129],
  ] as const) {
    it(`${sig} during a step: implementers killed, claims released, exit ${code}, the summary last`, async () => {
      const root = runRepo(CHAIN);
      const impl = holdingImplementer();
      writeFileSync(join(impl.hold, 'step-1-a1'), '');
      writeFileSync(join(impl.hold, 'step-3-a1'), '');
      const run = startRun(root, ['demo', '--workers', '2', '--implementer', impl.argv]);
      const p1 = await implementerStarted(run, impl, 'step-1');
      const p3 = await implementerStarted(run, impl, 'step-3');
      run.child.kill(sig);
      const r = await run.done;
      expect(r.code, r.stderr).toBe(code);
      const summary = r.events.at(-1);
      expect(summary).toMatchObject({ type: 'summary', status: 'error', error: { code: 'Interrupted' } });
      expect(summary.steps_completed).toEqual([]);
      // Nothing failed, so nothing is blocked; the error names the steps whose claims were handed back.
      expect(summary.blocked_steps).toEqual([]);
      expect([...summary.error.details.released_steps].sort()).toEqual(['step-1', 'step-3']);
      // The summary lists them as interrupted, each claim handed back.
      expect([...summary.interrupted_steps].sort((a, b) => a.step_anchor.localeCompare(b.step_anchor))).toEqual([
        { step_anchor: 'step-1', released: true },
        { step_anchor: 'step-3', released: true },
      ]);
      expect(r.events.filter((e) => e.type === 'worker_stopped').map((e) => e.reason)).toEqual(['signal', 'signal']);
      expect(groupAlive(p1)).toBe(false);
      expect(groupAlive(p3)).toBe(false);
      // No live claim: both steps pending and ready again, nothing committed.
      for (const s of stepsOf(root).filter((x) => x.anchor !== 'step-2')) {
        expect(s.status).toBe('pending');
        expect(s.claimed_by ?? null).toBeNull();
      }
      const ready = tugJson(root, ['state', 'ready', PLAN]);
      expect(ready.json.ready_steps).toEqual(['step-1', 'step-3']);
      expect(ready.json.claimed_steps).toEqual([]);
      expect(stepCommits(root, 'tugplan/demo')).toEqual([]);
      expect(existsSync(join(root, '.tugtool', 'run-demo.lock'))).toBe(false);
    });
  }

  it('a closed stdout (`| head`) stops the run as a signal does: implementers ended, claims released, exit 141', async () => {
    const root = runRepo(CHAIN);
    const impl = holdingImplementer();
    writeFileSync(join(impl.hold, 'step-1-a1'), '');
    writeFileSync(join(impl.hold, 'step-3-a1'), '');
    const run = startRun(root, ['demo', '--workers', '2', '--implementer', impl.argv]);
    const p1 = await implementerStarted(run, impl, 'step-1');
    await implementerStarted(run, impl, 'step-3');
    // The reader goes away, as `head` does once it has its lines; the run's next line meets the closed pipe.
    run.child.stdout.destroy();
    rmSync(join(impl.hold, 'step-3-a1'));
    const r = await run.done;
    expect(r.code, r.stderr).toBe(141);
    expect(r.stderr).toContain('tugcode: Interrupted: ');
    expect(r.stderr).toContain('its stdout was closed');
    expect(groupAlive(p1)).toBe(false);
    const s1 = stepsOf(root).find((s) => s.anchor === 'step-1');
    expect(s1.status).toBe('pending');
    expect(s1.claimed_by ?? null).toBeNull();
    expect(tugJson(root, ['state', 'ready', PLAN]).json.claimed_steps).toEqual([]);
    expect(existsSync(join(root, '.tugtool', 'run-demo.lock'))).toBe(false);
  });

  it('a second signal exits at once, the summary still last (Interrupted, forced), what completed listed', async () => {
    const root = runRepo(CHAIN);
    // step-3 ignores SIGTERM, so the first stop waits out the kill grace (2 s): the second signal lands then.
    const impl = nodeImplementer(`
if (step === 'step-3') {
  process.on('SIGTERM', () => writeFileSync(join(dir, 'terminated'), ''));
  writeFileSync(join(dir, 'started'), String(process.pid));
  await sleep(60_000);
}
writeFileSync(join(wt, step + '.txt'), step + '\\n');
`);
    const run = startRun(root, ['demo', '--workers', '2', '--implementer', impl.argv]);
    await waitUntil('step-3 to start', () => existsSync(join(impl.dir, 'started')), 30_000);
    await waitUntil('step-1 to complete', () =>
      run.events().some((e) => e.type === 'step_completed' && e.step_anchor === 'step-1'),
    );
    run.child.kill('SIGTERM');
    // The first stop has reached step-3 (which ignores it): the run now waits out the kill grace.
    await waitUntil('the first SIGTERM to reach step-3', () => existsSync(join(impl.dir, 'terminated')), 30_000);
    run.child.kill('SIGTERM');
    const r = await run.done;
    expect(r.code, r.stderr).toBe(143);
    const summary = r.events.at(-1);
    expect(summary).toMatchObject({
      type: 'summary',
      status: 'error',
      error: { code: 'Interrupted', details: { signal: 'SIGTERM', forced: true } },
    });
    expect(summary.steps_completed).toContain('step-1');
    expect(summary.error.message).toContain('its running commands were killed; held claims stay');
    expect(r.stderr).toContain('tugcode: Interrupted: ');
    // step-3's implementer (it leads its group), which ignored SIGTERM, did not outlive the run.
    const pid = Number(readFileSync(join(impl.dir, 'started'), 'utf8'));
    try {
      await waitUntil('the stubborn implementer to be killed', () => !groupAlive(pid), 10_000);
    } finally {
      if (groupAlive(pid)) process.kill(-pid, 'SIGKILL');
    }
  });

  it('the first Ctrl-C says at once what the run is ending and what a second one does (text mode)', async () => {
    const root = runRepo(CHAIN);
    // Both implementers ignore SIGTERM, so the first stop waits out the kill grace: the line must come before.
    const impl = nodeImplementer(`
process.on('SIGTERM', () => {});
writeFileSync(join(dir, step), String(process.pid));
await sleep(60_000);
`);
    const run = startRun(root, ['demo', '--workers', '2', '--implementer', impl.argv], {}, { text: true });
    await waitUntil('step-1 and step-3 to start', () =>
      ['step-1', 'step-3'].every((a) => existsSync(join(impl.dir, a)) && readFileSync(join(impl.dir, a), 'utf8')),
    );
    const pids = ['step-1', 'step-3'].map((a) => Number(readFileSync(join(impl.dir, a), 'utf8')));
    try {
      run.child.kill('SIGINT');
      const line = await waitUntil('the stopping line', () =>
        run
          .stderr()
          .split('\n')
          .find((l) => l.startsWith('tugcode: stopping')),
      );
      expect(run.child.exitCode).toBeNull(); // said while the implementers are being ended, not at the end
      expect(line).toBe(
        'tugcode: stopping: ending 2 running commands and releasing the claims held (Ctrl-C again to exit at ' +
          'once: running commands killed, held claims kept until their leases expire)',
      );
      // What it says a second Ctrl-C does.
      run.child.kill('SIGINT');
      const r = await run.done;
      expect(r.code, r.stderr).toBe(130);
      expect(r.stderr.split('\n').filter((l) => l.startsWith('tugcode: stopping'))).toHaveLength(1);
      expect(r.stderr).toContain('a second signal stopped it at once');
      for (const pid of pids) await waitUntil(`implementer ${pid} killed`, () => !groupAlive(pid), 10_000);
    } finally {
      for (const pid of pids) if (groupAlive(pid)) process.kill(-pid, 'SIGKILL');
    }
  });

  it('a refused heartbeat kills the implementer, drops the attempt without a commit, and the step runs again', async () => {
    const root = runRepo(CHAIN);
    const impl = holdingImplementer();
    writeFileSync(join(impl.hold, 'step-1-a1'), '');
    const run = startRun(root, ['demo', '--workers', '1', '--heartbeat', '1', '--implementer', impl.argv]);
    const pid = await implementerStarted(run, impl, 'step-1');
    const reset = tugJson(root, ['state', 'reset', PLAN, 'step-1', '--force']);
    expect(reset.code, reset.stderr).toBe(0);
    const lost = await waitUntil('claim_lost', () => run.events().find((e) => e.type === 'claim_lost'), 30_000);
    expect(lost).toMatchObject({ worker: 'w1', step_anchor: 'step-1', attempt: 1 });
    expect(['NotOwner', 'LeaseExpired', 'AttemptMismatch']).toContain(lost.error_code);
    expect(groupAlive(pid)).toBe(false);
    expect(existsSync(join(impl.hold, 'step-1-a1'))).toBe(true); // it never got past its hold
    const r = await run.done;
    rmSync(join(impl.hold, 'step-1-a1'));
    const summary = r.events.at(-1);
    expect(summary, r.stderr).toMatchObject({ type: 'summary', status: 'ok' });
    expect(r.code).toBe(0);
    expect(r.events.filter((e) => e.type === 'attempt_failed')).toEqual([]);
    expect(r.events.filter((e) => e.type === 'claimed' && e.step_anchor === 'step-1').map((e) => e.attempt)).toEqual([
      1, 2,
    ]);
    expect([...stepCommits(root, 'tugplan/demo')].sort()).toEqual(['step-1', 'step-2', 'step-3']);
    expect(seenBy(impl.seen)['step-1']!.map((s) => s.attempt)).toEqual([1, 2]);
    expect(stepsOf(root).find((s) => s.anchor === 'step-1')).toMatchObject({ status: 'completed', failures: 0 });
  });

  it('many workers create their worktrees at once without tripping over .git/config', () => {
    const steps = [1, 2, 3, 4, 5, 6].map((n) => step(n, `Part ${n}`));
    const root = runRepo(planText(steps));
    const impl = holdingImplementer();
    const r = runJsonl(root, ['demo', '--workers', '6', '--implementer', impl.argv]);
    const summary = r.events.at(-1);
    expect(summary, JSON.stringify(summary?.error)).toMatchObject({ type: 'summary', status: 'ok' });
    expect(r.code).toBe(0);
    expect([...stepCommits(root, 'tugplan/demo')].sort()).toEqual([1, 2, 3, 4, 5, 6].map((n) => `step-${n}`));
  });

  it('a signal that came before the workers started (during the preflight) stops the run before any claim', async () => {
    const root = runRepo(CHAIN);
    const impl = holdingImplementer();
    const ctx = new OpsContext({ cwd: root, env: { ...process.env, NODE_ENV: 'test' } });
    const stop = new AbortController();
    stop.abort();
    const events: RunEvent[] = [];
    try {
      const summary = await runPlan(ctx, { plan: PLAN, workers: 1, implementer: impl.argv }, newCall('run'), {
        onEvent: (e) => events.push(e),
        signal: stop.signal,
      });
      expect(summary).toMatchObject({ status: 'error', error: { code: 'Interrupted' }, steps_completed: [] });
    } finally {
      await ctx.close();
    }
    expect(events.filter((e) => e.type === 'claimed')).toEqual([]);
    expect(stepCommits(root, 'tugplan/demo')).toEqual([]);
    expect(stepsOf(root).every((s) => s.status === 'pending')).toBe(true);
  });
});
