/**
 * The watchdog (docs/run.md §7.3): an implementer with no output, no item change and no file change for
 * stall_seconds is killed (its process group, like a timeout) and its attempt fails `Stalled`; one that
 * prints, edits files or updates its items is not; one that prints forever ends `StepTimeout`. A small real
 * stall_seconds (2 s): the driver reads the wall clock for it.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI, runCli } from '../helpers/cli.js';
import { groupAlive, nodeImplementer, planText, runJsonl, runRepo, step, stepCommits } from './helpers.js';

const ONE = planText([step(1, 'One')]);
/** One attempt, a watchdog slow to look (a tick of 5 s): what bounds the implementer is the log cap. */
const runCapped = (root: string, implementer: string) =>
  runJsonl(root, [
    'demo',
    '--workers',
    '1',
    '--implementer',
    implementer,
    '--stall-seconds',
    '60',
    '--max-attempts',
    '1',
  ]);
const logSize = (root: string) => statSync(join(root, '.tugtool/logs/demo/step-1-attempt1.log')).size;

function failures(events: any[]) {
  return events.filter((e) => e.type === 'attempt_failed').map((e) => [e.step_anchor, e.reason_code]);
}

describe('the watchdog', () => {
  it('a silent, sleeping implementer is Stalled after stall_seconds, its group killed, and retried like any failure', () => {
    const root = runRepo(ONE);
    const impl = nodeImplementer(`
writeFileSync(join(dir, 'pid-' + attempt), String(process.pid));
if (attempt === 1) await sleep(120000);
writeFileSync(join(wt, step + '.txt'), step);
`);
    const t0 = Date.now();
    const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv, '--stall-seconds', '2']);
    expect(Date.now() - t0).toBeLessThan(60_000);
    expect(r.events.at(-1), r.stderr).toMatchObject({ type: 'summary', status: 'ok' });
    const stalled = r.events.filter((e) => e.type === 'stalled');
    expect(stalled).toEqual([expect.objectContaining({ step_anchor: 'step-1', attempt: 1 })]);
    expect(stalled[0].idle_seconds).toBeGreaterThanOrEqual(2);
    expect(failures(r.events)).toEqual([['step-1', 'Stalled']]);
    const failed = r.events.find((e) => e.type === 'attempt_failed');
    expect(failed.reason).toMatch(/no output, no item change and no file change for \d+ s \(stall_seconds 2\)/);
    // Killed with its process group; the second attempt did the step.
    expect(groupAlive(Number(readFileSync(join(impl.dir, 'pid-1'), 'utf8')))).toBe(false);
    expect(stepCommits(root, 'tugplan/demo')).toEqual(['step-1']);
  });

  it('at the attempt cap a stalled step is failed (step_failed), distinct from StepTimeout', () => {
    const root = runRepo(ONE);
    const impl = nodeImplementer(`await sleep(120000);`);
    const args = ['demo', '--workers', '1', '--implementer', impl.argv, '--stall-seconds', '2', '--max-attempts', '1'];
    const r = runJsonl(root, args);
    expect(r.code).toBe(4);
    expect(failures(r.events)).toEqual([['step-1', 'Stalled']]);
    expect(r.events.filter((e) => e.type === 'step_failed')).toEqual([
      expect.objectContaining({ step_anchor: 'step-1', failures: 1 }),
    ]);
    expect(r.events.at(-1).failed_steps[0].reason).toMatch(/^Stalled: /);
    // The same --stall-seconds would stall the same silent command again: the hint doubles it (docs/run.md §7.3).
    const hint = r.events.at(-1).error.hint;
    expect(hint).toMatch(/ --max-attempts 1 --stall-seconds 4 \(stall_seconds doubled: step-1 was silent for \d+ s\)$/);
    expect(hint).not.toContain('--stall-seconds 2');
    // The dry run's warning gives the real run's hint (docs/run.md §1.10).
    const dry = runCli(['run', ...args, '--dry-run'], { cwd: root });
    expect(dry.stderr).toContain('--stall-seconds 4 (stall_seconds doubled');
    // A run given more than that already keeps its own.
    const more = runCli(
      ['run', 'demo', '--workers', '1', '--implementer', impl.argv, '--stall-seconds', '9', '--dry-run'],
      { cwd: root },
    );
    expect(more.stderr).toMatch(/--stall-seconds 9\)\n/);
  });

  it('in text, the stalled line says its seconds as the failure reason does (`2 s`)', () => {
    const root = runRepo(ONE);
    const impl = nodeImplementer(`await sleep(120000);`);
    const r = runCli(
      ['run', 'demo', '--workers', '1', '--implementer', impl.argv, '--stall-seconds', '2', '--max-attempts', '1'],
      { cwd: root },
    );
    expect(r.code).toBe(4);
    expect(r.stdout).toMatch(/step-1 attempt 1 stalled: no output, item or file change for \d+ s\n/);
    expect(r.stdout).toMatch(/no output, no item change and no file change for \d+ s \(stall_seconds 2\)/);
    expect(r.stderr).toContain('--stall-seconds 4 (stall_seconds doubled: step-1 was silent for');
  });

  it('one that prints regularly but never finishes ends StepTimeout, not Stalled', () => {
    const root = runRepo(ONE);
    const impl = nodeImplementer(`for (;;) { console.log('tick'); await sleep(300); }`);
    const r = runJsonl(root, [
      'demo',
      '--workers',
      '1',
      '--implementer',
      impl.argv,
      '--stall-seconds',
      '2',
      '--step-timeout',
      '5',
      '--max-attempts',
      '1',
    ]);
    expect(failures(r.events)).toEqual([['step-1', 'StepTimeout']]);
    // The reason states the limit it ran past.
    expect(r.events.find((e) => e.type === 'attempt_failed').reason).toContain('past the step timeout (5 s)');
    expect(r.events.filter((e) => e.type === 'stalled')).toEqual([]);
  });

  it('one that prints more than [run] log_max_mb is ended and fails ImplementerFailed, its log bounded', () => {
    const root = runRepo(ONE, 'demo', { '.tugtool/config.toml': '[run]\nlog_max_mb = 1\n' });
    // 3 MiB in one go, then it would go on for two minutes: the bound ends it within a tick.
    const impl = nodeImplementer(`process.stdout.write('a'.repeat(3 * 1024 * 1024)); await sleep(120000);`);
    const t0 = Date.now();
    const r = runCapped(root, impl.argv);
    expect(Date.now() - t0).toBeLessThan(60_000);
    expect(r.code, r.stderr).toBe(4);
    expect(failures(r.events)).toEqual([['step-1', 'ImplementerFailed']]);
    const failed = r.events.find((e) => e.type === 'attempt_failed');
    expect(failed.reason).toMatch(
      /the implementer wrote 3 MiB to its log, more than log_max_mb \(1 MiB\), and was ended/,
    );
    expect(r.events.filter((e) => e.type === 'stalled')).toEqual([]);
    expect(stepCommits(root, 'tugplan/demo')).toEqual([]);
    expect(logSize(root)).toBeLessThan(1024 * 1024 + 200);
  });

  it('one that passes [run] log_max_mb between two checks and exits 0 fails all the same, its log cut to the bound', () => {
    const root = runRepo(ONE, 'demo', { '.tugtool/config.toml': '[run]\nlog_max_mb = 1\n' });
    // 3 MiB and done, long before the first check (a tick of 5 s with --stall-seconds 60).
    const impl = nodeImplementer(
      `process.stdout.write('a'.repeat(3 * 1024 * 1024)); writeFileSync(join(wt, step + '.txt'), step);`,
    );
    const r = runCapped(root, impl.argv);
    expect(r.code, r.stderr).toBe(4);
    expect(failures(r.events)).toEqual([['step-1', 'ImplementerFailed']]);
    expect(r.events.find((e) => e.type === 'attempt_failed').reason).toContain(
      'the implementer wrote 3 MiB to its log, more than log_max_mb (1 MiB), and exited before the next check; the log keeps its first 1 MiB',
    );
    expect(stepCommits(root, 'tugplan/demo')).toEqual([]);
    const log = readFileSync(join(root, '.tugtool/logs/demo/step-1-attempt1.log'), 'utf8');
    expect(log.length).toBeLessThan(1024 * 1024 + 200);
    expect(log.endsWith(`\n[… ${2 * 1024 * 1024} bytes cut: the log passed log_max_mb]\n`)).toBe(true);
  });

  it('silent but editing files in its worktree (the same file again and again) is not stalled', () => {
    const root = runRepo(ONE);
    const impl = nodeImplementer(`
for (let i = 0; i < 12; i++) { writeFileSync(join(wt, 'notes.txt'), 'pass ' + i); await sleep(400); }
writeFileSync(join(wt, step + '.txt'), step);
`);
    const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv, '--stall-seconds', '2']);
    expect(r.events.at(-1), r.stderr).toMatchObject({ status: 'ok' });
    expect(failures(r.events)).toEqual([]);
  });

  it('silent, no file change, but recording its progress in the state is not stalled', () => {
    const root = runRepo(ONE);
    const impl = nodeImplementer(`
const { execFileSync } = await import('node:child_process');
for (let i = 0; i < 6; i++) {
  execFileSync(process.execPath, [${JSON.stringify(CLI)}, 'state', 'artifact', process.env.TUG_PLAN, step,
    '--worktree', wt, '--attempt', String(attempt), '--kind', 'note', '--summary', 'pass ' + i], { stdio: 'ignore' });
  await sleep(700);
}
writeFileSync(join(wt, step + '.txt'), step);
`);
    const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv, '--stall-seconds', '2']);
    expect(r.events.at(-1), r.stderr).toMatchObject({ status: 'ok' });
    expect(failures(r.events)).toEqual([]);
  });
});
