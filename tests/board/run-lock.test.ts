/**
 * A run taking a plan's lock, and letting it go, appends no event (docs/run.md §1.8), yet changes what the
 * board shows of the plan: `run_driver` (which run holds it, a dead one's claims in Needs you) and, once it
 * ended, `last run` (docs/board.md §3). The board looks at the locks at each probe, as at the plan files, so
 * the page follows within a probe or two, not at the half-minute full read.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runLockDir } from '../../src/gitflow/run-driver.js';
import { runCli } from '../helpers/cli.js';
import { planText, runRepo, step } from '../run/helpers.js';
import { own, sse, startBoardCli, type BoardChild } from './helpers.js';

let board: BoardChild | undefined;
afterAll(async () => {
  await board?.stop();
});

describe('tugcode board and the run lock', () => {
  it('a lock taken and let go shows within seconds, with no event in the state', async () => {
    const root = runRepo(planText([step(1, 'One'), step(2, 'Two', { deps: [1] })]), 'demo');
    const init = runCli(['state', 'init', '.tugtool/tugplan-demo.md'], { cwd: root });
    expect(init.code, init.stderr).toBe(0);
    board = await startBoardCli(root);
    const stream = sse(board.base, `/events?token=${board.token}`, own(board));
    expect(await stream.status).toBe(200);
    // The state the page has after each frame (helpers.ts rebuilds it from the `plans` frames).
    const driverOf = (e: { state?: any }) => e.state.plans[0].run_driver;
    const first = await stream.next((e) => e.event === 'snapshot');
    expect(driverOf(first)).toBeNull();

    // What src/run/lock.ts makes: the lock directory with its holder (this process: alive).
    const dir = runLockDir(root, 'demo');
    mkdirSync(dir);
    const started = new Date().toISOString();
    writeFileSync(
      join(dir, 'holder.json'),
      JSON.stringify({
        token: 't',
        pid: process.pid,
        host: hostname(),
        started_at: started,
        run_flags: ['--workers', '3', '--implementer', 'true'],
        workers: 1,
      }) + '\n',
    );
    let from = stream.events.length;
    // 10 s: well before the full read every 30 s that would find it anyway.
    const held = await stream.next((e) => e.event === 'plans' && driverOf(e) !== null, from, 10_000);
    expect(driverOf(held)).toMatchObject({ pid: process.pid, started_at: started, alive: true, workers: 1 });
    // The plan's line says which run holds it, as `tugcode status` does (docs/board.md §3).
    const status = runCli(['status'], { cwd: root });
    const note = `run: pid ${process.pid} on ${hostname()} since ${started}, 1 worker (3 requested; its dependencies let at most 1 step run at once)`;
    expect(driverOf(held).note).toBe(note);
    expect(status.stdout).toContain(note);

    from = stream.events.length;
    rmSync(dir, { recursive: true });
    await stream.next((e) => e.event === 'plans' && driverOf(e) === null, from, 10_000);
    stream.close();
  }, 60_000);
});
