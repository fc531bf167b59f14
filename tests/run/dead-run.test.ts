/**
 * A `tugcode run` killed with SIGKILL (docs/run.md §1 item 3): its lock names a pid that is gone while its
 * claims stay until their leases expire. `status` says so (its `run_driver`, and a line naming the run that
 * takes the claims over with the dead run's own flags), `doctor`'s dead-runs check warns with that command,
 * the board puts its claim in Needs you (`dead_run`, docs/board.md §3) with the same command, and the next
 * run takes the lock and claims over with a DeadRunTakenOver warning naming the old pid.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { execFileSync, spawn } from 'node:child_process';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/repo.js';
import { firstSnapshot, startBoardCli } from '../board/helpers.js';
import { CLI } from '../helpers/cli.js';
import { stepText } from '../helpers/plan.js';
import {
  holdingImplementer,
  nodeImplementer,
  planText,
  runJsonl,
  runRepo,
  startRun,
  step,
  tugJson,
  waitUntil,
} from './helpers.js';

const PLAN = '.tugtool/tugplan-demo.md';
/** The real git, for the recording wrapper put before it on PATH. */
const gitPath = () => execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
const LOCK = join('.tugtool', 'run-demo.lock', 'holder.json');

/** A run of a two-step plan SIGKILLed while step-1's implementer holds: its root, implementer and pid. */
async function killedRun() {
  const root = runRepo(planText([step(1, 'Base'), step(2, 'Next', { deps: [1] })]));
  const impl = holdingImplementer();
  writeFileSync(join(impl.hold, 'step-1-a1'), '');
  const run = startRun(root, ['demo', '--workers', '1', '--implementer', impl.argv]);
  await waitUntil('step-1 in its implementer phase', () => {
    if (run.child.exitCode !== null) throw new Error(`the run ended: ${run.child.exitCode}`);
    return existsSync(join(impl.started, 'step-1-a1'));
  });
  const pid = JSON.parse(readFileSync(join(root, LOCK), 'utf8')).pid as number;
  // While it runs, status names it alive (and says nothing of a dead driver).
  expect(tugJson(root, ['status', 'demo']).json.plans[0].run_driver).toMatchObject({ pid, alive: true });
  expect(runCli(['status'], { cwd: root }).stdout).not.toContain('is gone');
  run.child.kill('SIGKILL');
  await run.done;
  return { root, impl, pid };
}

describe('a run killed with SIGKILL', () => {
  it('status, doctor and the board say its driver is gone, until when its claims hold, and the run that takes them over', async () => {
    const { root, impl, pid } = await killedRun();

    // status --json: the plan's run_driver is the dead pid, with when its claims expire and how to rerun.
    const st = tugJson(root, ['status', 'demo']);
    expect(st.code, st.stderr).toBe(0);
    const line = st.json.plans[0];
    expect(line.claimed_steps).toEqual(['step-1']);
    const shown = tugJson(root, ['state', 'show', 'demo']).json.plans[0].steps[0];
    expect(line.run_driver).toEqual({
      pid,
      host: expect.any(String),
      started_at: expect.any(String),
      alive: false,
      claims_expire_at: shown.lease_expires_at,
      command: expect.stringContaining(`tugcode run ${PLAN} --workers 1 --implementer `),
      workers: 1,
    });
    // The command repeats the dead run's implementer: run as written, it runs the plan the same way.
    expect(line.run_driver.command).toContain(impl.argv.split(' ')[1]!.replace(/"/g, ''));

    // status (text): a line under the table says the driver is gone, until when, and what takes it over.
    const text = runCli(['status'], { cwd: root });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(
      `${PLAN}: driver pid ${pid} is gone; its claims expire at ${shown.lease_expires_at} — rerun ${line.run_driver.command} to take them over`,
    );

    // Once the last lease is past, the line says the claims expired, and when (not "expire at" a past time).
    const after = { TUGCODE_NOW: new Date(Date.parse(shown.lease_expires_at) + 1000).toISOString() };
    const late = runCli(['status'], { cwd: root, env: after });
    expect(late.code, late.stderr).toBe(0);
    expect(late.stdout).toContain(
      `${PLAN}: driver pid ${pid} is gone; its claims expired at ${shown.lease_expires_at} — rerun ${line.run_driver.command} to take the plan up again`,
    );
    expect(late.stdout).not.toContain('claims expire at');
    expect(runCli(['state', 'show', 'demo'], { cwd: root, env: after }).stdout).toContain(
      `its claims expired at ${shown.lease_expires_at}`,
    );
    // JSON unchanged: the same run_driver.
    expect(runCli(['status', 'demo', '--json'], { cwd: root, env: after }).json.plans[0].run_driver).toEqual(
      line.run_driver,
    );
    const lateDoc = runCli(['doctor', '--json'], { cwd: root, env: after }).json;
    expect(lateDoc.checks.find((c: { name: string }) => c.name === 'dead-runs').message).toBe(
      `${PLAN}: driver pid ${pid} (started ${line.run_driver.started_at}) is gone, holding step-1 (its claims expired at ${shown.lease_expires_at})`,
    );

    // doctor: the dead-runs check warns, naming the pid, the claim and the same command.
    const doc = tugJson(root, ['doctor']);
    expect(doc.code, doc.stderr).toBe(0); // a warning, not a failure
    expect(doc.json.checks.find((c: { name: string }) => c.name === 'dead-runs')).toEqual({
      name: 'dead-runs',
      status: 'warn',
      message: `${PLAN}: driver pid ${pid} (started ${line.run_driver.started_at}) is gone, holding step-1 until ${shown.lease_expires_at}`,
      fix: `${line.run_driver.command} (takes its lock and claims over)`,
      skipped: false,
    });

    // The board: the plan's run_driver, and step-1 in Needs you as dead_run with the same command.
    const b = await startBoardCli(root);
    try {
      const snap = await firstSnapshot(b);
      const plan = snap.plans[0];
      expect(plan.run_driver).toEqual({
        pid,
        host: line.run_driver.host,
        started_at: line.run_driver.started_at,
        alive: false,
        command: line.run_driver.command,
        workers: line.run_driver.workers,
        // A dead run is said in Needs you, with the command that takes it over: the plan's line says nothing.
        note: '',
      });
      const card = plan.cards.find((c: { anchor: string }) => c.anchor === 'step-1');
      expect(card.lane).toBe('needs_you');
      expect(card.need).toEqual({
        kind: 'dead_run',
        reason: expect.stringContaining(`its run (pid ${pid}, started ${line.run_driver.started_at}) is gone`),
        command: line.run_driver.command,
        commands: [line.run_driver.command],
        // Its lease has time left: a release would be refused (a live claim is reset only when forced), so none.
        actions: [],
      });
    } finally {
      await b.stop();
    }
    rmSync(join(impl.hold, 'step-1-a1')); // the orphaned implementer ends
  });

  it('state show carries the same run_driver as status, and the same line under its steps, without spawning git', async () => {
    const { root, impl, pid } = await killedRun();
    const status = tugJson(root, ['status', 'demo']).json.plans[0].run_driver;
    expect(status).toMatchObject({ pid, alive: false });

    // JSON: the plan's run_driver is status's (dead pid, claims expiry, the run that takes them over).
    const shown = tugJson(root, ['state', 'show', 'demo']).json.plans[0];
    expect(shown.steps[0].status).toBe('in_progress');
    expect(shown.run_driver).toEqual(status);
    // Every plan of a bare show has it too.
    expect(tugJson(root, ['state', 'show']).json.plans[0].run_driver).toEqual(status);

    // Text: the same line status prints, under the steps that still read as running.
    const line = `${PLAN}: driver pid ${pid} is gone; its claims expire at ${status.claims_expire_at} — rerun ${status.command} to take them over`;
    expect(runCli(['status'], { cwd: root }).stdout).toContain(line);
    const text = runCli(['state', 'show', 'demo'], { cwd: root });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout.trimEnd().split('\n').at(-1)).toBe(line);

    // Still a hot command: reading the lock spawns no git (a PATH git that records its calls, then runs git).
    const bin = tempDir();
    const calls = join(bin, 'calls');
    writeFileSync(join(bin, 'git'), `#!/bin/sh\necho "$@" >> ${calls}\nexec ${gitPath()} "$@"\n`, { mode: 0o755 });
    const path = { PATH: `${bin}:${process.env.PATH}` };
    expect(runCli(['worktree', 'list', '--json'], { cwd: root, env: path }).code).toBe(0);
    expect(existsSync(calls), 'the recording git is on PATH').toBe(true);
    rmSync(calls);
    expect(runCli(['state', 'show', 'demo', '--json'], { cwd: root, env: path }).json.plans[0].run_driver).toEqual(
      status,
    );
    expect(existsSync(calls) ? readFileSync(calls, 'utf8') : '').toBe('');
    rmSync(join(impl.hold, 'step-1-a1')); // the orphaned implementer ends
  });

  it('the next run takes its lock and claims over with a DeadRunTakenOver warning naming the old pid', async () => {
    const { root, impl, pid } = await killedRun();
    const started = JSON.parse(readFileSync(join(root, LOCK), 'utf8')).started_at as string;
    const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv]);
    const summary = r.events.at(-1);
    expect(summary, r.stderr).toMatchObject({ type: 'summary', status: 'ok' });
    const warned = r.events.filter((e) => e.type === 'warning' && e.code === 'DeadRunTakenOver');
    expect(warned).toHaveLength(1);
    expect(warned[0].message).toMatch(
      new RegExp(
        `^run pid ${pid} on \\S+ \\(started ${started.replace(/[.]/g, '\\.')}\\) died; its lock and claims were taken over$`,
      ),
    );
    // Said once the run started, so the stream still opens with run_started.
    expect(r.events[0]).toMatchObject({ type: 'run_started' });
    // Nothing is left dead: status shows no driver once the run released its lock.
    expect(tugJson(root, ['status', 'demo']).json.plans[0].run_driver).toBeNull();
  });

  it('in text mode the takeover is a warning line on stderr', async () => {
    const { root, impl, pid } = await killedRun();
    const r = runCli(['run', 'demo', '--workers', '1', '--implementer', impl.argv], { cwd: root });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(
      new RegExp(`DeadRunTakenOver.*run pid ${pid} on .* died; its lock and claims were taken over`),
    );
    // As every run warning (docs/run.md §1.3, `warning`): one line in the progress, one on stderr at the end.
    expect(r.stdout.match(/^warning: DeadRunTakenOver: /gm), r.stdout).toHaveLength(1);
    expect(r.stderr.match(/^tugcode: warning: DeadRunTakenOver: /gm), r.stderr).toHaveLength(1);
  });

  it('a driver that is a zombie (killed, not yet reaped: a PID 1 that never reaps) is gone too', async () => {
    const { root } = await killedRun();
    // A child that exits once its parent has become `sleep` (exec'd, so nothing waits for it): a zombie.
    const child = `while [ "$(cat /proc/$PPID/comm)" != sleep ]; do :; done`;
    const parent = spawn('sh', ['-c', `sh -c '${child}' & echo $!; exec sleep 60`], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    try {
      let out = '';
      parent.stdout!.on('data', (b: Buffer) => (out += b.toString()));
      await waitUntil('the zombie pid', () => /\d+\n/.test(out));
      const zombie = Number(out.trim());
      await waitUntil('the child a zombie', () => {
        const stat = readFileSync(`/proc/${zombie}/stat`, 'utf8');
        return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z';
      });
      const holder = JSON.parse(readFileSync(join(root, LOCK), 'utf8'));
      writeFileSync(join(root, LOCK), JSON.stringify({ ...holder, pid: zombie }));
      expect(tugJson(root, ['status', 'demo']).json.plans[0].run_driver).toMatchObject({ pid: zombie, alive: false });
      expect(runCli(['status'], { cwd: root }).stdout).toContain(`driver pid ${zombie} is gone`);
    } finally {
      parent.kill('SIGKILL');
    }
  });

  it("doctor's failed-steps fix of a run started with -C DIR carries -C DIR in every command, reset included", async () => {
    const root = runRepo(
      planText([1, 2].map((n) => stepText({ id: String(n), deps: [], commit: `feat: s${n}`, tasks: [`write s${n}`] }))),
      'demo',
      {
        '.tugtool/config.toml': '[state]\nmax_attempts = 1\n',
      },
    );
    const impl = nodeImplementer(`
if (step === 'step-1') {
  while (!existsSync(join(dir, 'started'))) await sleep(50);
  process.exit(1);
}
writeFileSync(join(dir, 'started'), '');
while (!existsSync(join(dir, 'go'))) await sleep(50);
writeFileSync(join(wt, step + '.txt'), step);
`);
    // Started from elsewhere with -C: the run records `-C <root>` first in its flags.
    const elsewhere = tempDir('tugcode-elsewhere-');
    const child = spawn(
      process.execPath,
      [CLI, '-C', root, 'run', 'demo', '--workers', '2', '--implementer', impl.argv, '--json'],
      {
        cwd: elsewhere,
        env: {
          ...process.env,
          NO_COLOR: '1',
          GIT_AUTHOR_NAME: 't',
          GIT_AUTHOR_EMAIL: 't@example.invalid',
          GIT_COMMITTER_NAME: 't',
          GIT_COMMITTER_EMAIL: 't@example.invalid',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => (out += d));
    const done = new Promise((res) => child.on('exit', res));
    try {
      // step-1 fails (its one attempt) while step-2's implementer holds.
      await waitUntil('step-1 failed while step-2 runs', () => {
        if (child.exitCode !== null) throw new Error(`the run ended: ${child.exitCode}: ${out}`);
        return out.includes('"type":"step_failed"');
      });
      child.kill('SIGKILL');
      await done;
    } finally {
      writeFileSync(join(impl.dir, 'go'), ''); // the orphaned implementer ends
    }
    const check = tugJson(root, ['doctor']).json.checks.find((c: { name: string }) => c.name === 'failed-steps');
    const C = `tugcode -C ${root}`;
    expect(check.fix).toBe(
      `why: ${C} state show ${PLAN} --step step-1; once the cause is fixed: ${C} state reset ${PLAN} step-1 && ` +
        `${C} run ${PLAN} --workers 2 --implementer '${impl.argv.replace(/"/g, '')}'`,
    );
    // The reset, as written, works from where the run was started.
    const reset = check.fix.match(/once the cause is fixed: tugcode (-C \S+ state reset \S+ \S+) && /)![1].split(' ');
    const r = runCli([...reset, '--json'], { cwd: elsewhere });
    expect(r.json?.status, r.stdout + r.stderr).toBe('ok');
    expect(tugJson(root, ['state', 'show', 'demo']).json.plans[0].steps[0].status).toBe('pending');
  });
});
