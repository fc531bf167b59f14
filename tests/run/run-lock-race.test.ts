/**
 * The run lock under a race (docs/run.md §1 item 3): after its holder died, several restarts at the same
 * instant each see the dead holder; exactly one takes the lock over, the others get RunInProgress. The
 * contenders are real processes calling the lock module of the build (dist/run/lock.js), released at once
 * by a shared start file; the dead holder is a real process killed with SIGKILL while holding the lock.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/repo.js';
import { planText, runJsonl, runRepo, startRun, step, waitUntil, holdingImplementer } from './helpers.js';

const LOCK_JS = pathToFileURL(process.env.TUGCODE_LOCK_MODULE ?? join(ROOT, 'dist', 'run', 'lock.js')).href;
/** Each round is one more trial (9 node processes); TUGCODE_LOCK_RACE_ROUNDS=20 for a longer stress run. */
const ROUNDS = Number(process.env.TUGCODE_LOCK_RACE_ROUNDS ?? 5);
const RACERS = 8;

/**
 * A process that takes the lock once `go` exists, says `won` (or the error code), and holds until stdin ends.
 * `ready` resolves once it has loaded the lock module and polls for `go`.
 */
function contender(root: string, go: string): { child: ChildProcess; said: Promise<string>; ready: Promise<void> } {
  const script = `
import { existsSync } from 'node:fs';
const { acquireRunLock } = await import(${JSON.stringify(LOCK_JS)});
process.stderr.write('ready\\n');
while (!existsSync(${JSON.stringify(go)})) await new Promise((r) => setTimeout(r, 1));
try {
  const lock = await acquireRunLock(${JSON.stringify(root)}, 'demo', '.tugtool/tugplan-demo.md', new Date().toISOString());
  process.stdout.write('won\\n');
  process.stdin.resume();
  process.stdin.on('end', async () => { await lock.release(); process.exit(0); });
} catch (e) {
  process.stdout.write((e.code ?? String(e)) + '\\n');
  process.exit(0);
}`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const said = new Promise<string>((res) => {
    child.stdout!.on('data', (d) => {
      out += d;
      if (out.includes('\n')) res(out.trim());
    });
    // 'close', not 'exit': a process's 'exit' can arrive before the last of its stdout has been read.
    child.on('close', () => res(out.trim() || `exited without a word: ${err.trim()}`));
  });
  const ready = new Promise<void>((res) => {
    child.stderr!.on('data', (d) => {
      err += d;
      if (err.includes('ready\n')) res();
    });
    child.on('exit', () => res());
  });
  return { child, said, ready };
}

const exited = (c: ChildProcess) =>
  new Promise<void>((r) => (c.exitCode !== null || c.signalCode ? r() : c.on('exit', () => r())));

describe('run lock takeover race', () => {
  it(`after a crashed holder, exactly one of ${RACERS} racing restarts takes the lock (${ROUNDS} rounds)`, async () => {
    const root = tempDir('tugcode-lockrace-');
    mkdirSync(join(root, '.tugtool'));
    const outcomes: string[][] = [];
    for (let round = 0; round < ROUNDS; round++) {
      // The holder: takes the lock, then dies without releasing it.
      const first = join(root, `go-holder-${round}`);
      writeFileSync(first, '');
      const holder = contender(root, first);
      expect(await holder.said).toBe('won');
      holder.child.kill('SIGKILL');
      await exited(holder.child);

      const go = join(root, `go-${round}`);
      const racers = Array.from({ length: RACERS }, () => contender(root, go));
      await Promise.all(racers.map((r) => r.ready)); // all loaded and polling for the start file
      writeFileSync(go, '');
      const said = await Promise.all(racers.map((r) => r.said));
      outcomes.push(said);
      // Every loser has answered while the winner still holds; then the winner releases.
      for (const r of racers) r.child.stdin!.end();
      await Promise.all(racers.map((r) => exited(r.child)));
      expect(
        said.filter((s) => s === 'won'),
        `round ${round}: ${said.join(', ')}`,
      ).toHaveLength(1);
      expect(
        said.filter((s) => s !== 'won').every((s) => s === 'RunInProgress'),
        said.join(', '),
      ).toBe(true);
      // Released: nothing left of the lock but its directory's absence.
      expect(readdirSync(join(root, '.tugtool')).filter((f) => f.startsWith('run-'))).toEqual([]);
    }
    expect(outcomes).toHaveLength(ROUNDS);
  }, 240_000);

  it('real `tugcode run` restarts after a SIGKILLed run: one runs the plan, the others exit RunInProgress', async () => {
    const root = runRepo(planText([step(1, 'One')]));
    const impl = holdingImplementer();
    writeFileSync(join(impl.hold, 'step-1-a1'), '');
    const crashed = startRun(root, ['.tugtool/tugplan-demo.md', '--workers', '1', '--implementer', impl.argv]);
    await waitUntil('the first implementer', () => existsSync(join(impl.started, 'step-1-a1')));
    crashed.child.kill('SIGKILL');
    await crashed.done;
    // The winner's implementer is held until the others have answered (none may start after it finished).
    writeFileSync(join(impl.hold, 'step-1-a2'), '');
    const runs = Array.from({ length: 4 }, () =>
      startRun(root, ['.tugtool/tugplan-demo.md', '--workers', '1', '--implementer', impl.argv]),
    );
    let ended = 0;
    for (const r of runs) void r.done.then(() => ended++);
    await waitUntil(
      'three of the four restarts to end',
      () => ended >= 3 || existsSync(join(impl.started, 'step-1-a3')),
    );
    rmSync(join(impl.hold, 'step-1-a2'), { force: true });
    const results = await Promise.all(runs.map((r) => r.done));
    const codes = results.map((r) => r.events.at(-1)?.error?.code ?? r.events.at(-1)?.status);
    expect(
      codes.filter((c) => c === 'RunInProgress'),
      codes.join(', '),
    ).toHaveLength(3);
    expect(
      codes.filter((c) => c === 'ok'),
      codes.join(', '),
    ).toHaveLength(1);
    expect(runJsonl(root, ['.tugtool/tugplan-demo.md', '--implementer', impl.argv]).code).toBe(0);
  }, 180_000);
});
