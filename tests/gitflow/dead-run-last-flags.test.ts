/**
 * A dead run whose lock records no flags (an older tugcode's lock) while the plan's state keeps its last
 * run's (docs/run.md §1.2, docs/state.md §2): what names the run that takes the dead run's claims over —
 * `doctor`'s dead-runs fix, `status`'s `run_driver.command`, the board's dead-driver command — repeats the
 * last run's flags instead of a placeholder implementer.
 */
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { firstSnapshot, startBoardCli } from '../board/helpers.js';
import { holdingImplementer, planText, runRepo, startRun, step, tugJson, waitUntil } from '../run/helpers.js';

const PLAN = '.tugtool/tugplan-demo.md';
const LOCK = join('.tugtool', 'run-demo.lock', 'holder.json');

let root: string;
let pid: number;
/** The state's last run's command (`status`'s `last_run.command`). */
let lastCommand: string;

/**
 * A run interrupted (it records its flags in the state), then a second run SIGKILLed while step-1's
 * implementer holds, its lock then stripped of its flags (and the workers it started) as an older tugcode wrote it.
 */
beforeAll(async () => {
  root = runRepo(planText([step(1, 'Base'), step(2, 'Next', { deps: [1] })]));
  const impl = holdingImplementer();
  for (let a = 1; a <= 5; a++) writeFileSync(join(impl.hold, `step-1-a${a}`), '');
  const started = () => readdirSync(impl.started).length > 0;

  const first = startRun(root, ['demo', '--workers', '1', '--implementer', impl.argv, '--max-attempts', '5']);
  await waitUntil('step-1 started by the first run', () => {
    if (first.child.exitCode !== null) throw new Error(`the first run ended: ${first.child.exitCode}`);
    return started();
  });
  first.child.kill('SIGINT');
  expect((await first.done).code).toBe(130);
  const last = tugJson(root, ['status', 'demo']).json.plans[0].last_run;
  expect(last.run_flags).toContain('--max-attempts');
  lastCommand = last.command;
  for (const f of readdirSync(impl.started)) rmSync(join(impl.started, f));

  const second = startRun(root, ['demo', '--workers', '1', '--implementer', impl.argv, '--max-attempts', '5']);
  await waitUntil('step-1 started by the second run', () => {
    if (second.child.exitCode !== null) throw new Error(`the second run ended: ${second.child.exitCode}`);
    return started() && existsSync(join(root, LOCK));
  });
  second.child.kill('SIGKILL');
  await second.done;
  const { run_flags: _flags, workers: _workers, ...holder } = JSON.parse(readFileSync(join(root, LOCK), 'utf8'));
  pid = holder.pid;
  writeFileSync(join(root, LOCK), JSON.stringify(holder));
  // The orphaned implementer ends.
  for (const f of readdirSync(impl.hold)) rmSync(join(impl.hold, f));
}, 120_000);

describe("a dead run's flagless lock", () => {
  it("doctor's dead-runs fix runs the plan with its last run's flags", () => {
    const check = tugJson(root, ['doctor']).json.checks.find((c: { name: string }) => c.name === 'dead-runs');
    expect(check.status).toBe('warn');
    expect(check.message).toContain(`${PLAN}: driver pid ${pid} `);
    expect(check.fix).toBe(`${lastCommand} (takes its lock and claims over)`);
    expect(check.fix).not.toContain('<your implementer>');
  });
});

describe("a dead run's flagless lock, in status and state show", () => {
  it("run_driver.command runs the plan with its last run's flags", () => {
    const line = tugJson(root, ['status', 'demo']).json.plans[0];
    expect(line.run_driver).toMatchObject({ pid, alive: false, command: lastCommand });
    // The workers are the dead run's own, which its lock does not say.
    expect(line.run_driver.workers).toBeNull();
    expect(tugJson(root, ['state', 'show', 'demo']).json.plans[0].run_driver).toEqual(line.run_driver);
  });
});

describe("a dead run's flagless lock, on the board", () => {
  it("the dead driver's command, and its claim's in Needs you, run the plan with its last run's flags", async () => {
    const b = await startBoardCli(root);
    try {
      const snap = await firstSnapshot(b);
      const plan = snap.plans[0];
      expect(plan.run_driver).toMatchObject({ pid, alive: false, command: lastCommand });
      const card = plan.cards.find((c: { anchor: string }) => c.anchor === 'step-1');
      expect(card.need).toMatchObject({ kind: 'dead_run', command: lastCommand, commands: [lastCommand] });
    } finally {
      await b.stop();
    }
  });
});
