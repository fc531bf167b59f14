/**
 * `tugcode demo [DIR] [--workers N] [--keep]` end to end (docs/run.md §4): the built CLI creates the demo
 * repository, runs its plan with 3 workers and the bundled implementer, and shows the plan done with the
 * kernel's rename among the steps. Text and --json.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { getEventListeners } from 'node:events';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI, checkSchema, runCli } from '../helpers/cli.js';
import { git, tempDir } from '../helpers/repo.js';
import { demoEventSchema, runEventSchema } from '../../src/contract/schemas/run.js';
import { announceChange, waitForChange, type RunCtx } from '../../src/run/context.js';
import { boardLineOf } from '../board/helpers.js';
import { parseLines, stepCommits } from './helpers.js';
import { tokenizeShell } from '../../src/kernel/opspec.js';

const STEPS = ['step-1', 'step-2', 'step-3', 'step-4', 'step-5', 'step-6', 'step-7'];

function demo(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [CLI, 'demo', ...args], {
    env: { ...process.env, NODE_ENV: 'test', NO_COLOR: '1', ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('tugcode demo', () => {
  it('runs the demo plan to the end with 3 workers and shows the state and the log with trailers', () => {
    const dir = join(tempDir(), 'd');
    const r = demo([dir, '--workers', '3']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stderr).toBe(''); // no warnings either (an abort-listener leak once printed one)
    expect(r.stdout).toContain(`demo repository: ${dir}`);
    expect(r.stdout).toContain('running it with up to 3 workers');
    // The plan's diamond runs at most 2 steps at a time: the run starts 2 workers (docs/run.md §1 item 3).
    expect(r.stdout).toContain(
      ': 2 workers (3 requested; its dependencies let at most 2 steps run at once), integrating',
    );
    expect(r.stdout).toContain('$ tugcode state show demo');
    expect(r.stdout).toContain('Overall: 7/7 steps complete (100%)');
    // Step 4's substep runs apart from the step, and its lines say so (docs/run.md §1.3).
    expect(r.stdout).toMatch(/^w\d step-4 substep step-4-1 → implementer$/m);
    expect(r.stdout).toMatch(/^w\d step-4 → implementer$/m);
    // The utilisation table says a worker that did nothing as `0s`, like the others' times.
    expect(r.stdout).not.toMatch(/^w\d +0ms /m);
    // The rename step's commit carries the kernel's Tug-Refactor trailer in the printed log.
    const log = r.stdout.slice(r.stdout.indexOf('$ git log --oneline tugplan/demo'));
    const rename = /^[0-9a-f]{7,} refactor\(format\): rename formatCents to formatPrice\n((?: {4}.*\n)+)/m.exec(log);
    expect(rename, log).not.toBeNull();
    expect(rename![1]).toContain('Tug-Step: step-5');
    expect(rename![1]).toMatch(/Tug-Refactor: [0-9a-f]+ snap_[0-9a-f]+\.\.snap_[0-9a-f]+/);
    expect(r.stdout).toContain(`the demo repository is at ${dir}`);

    // The repository is kept (DIR was given): one commit per step and substep, the state done.
    const commits = stepCommits(dir, 'tugplan/demo');
    expect([...commits].sort()).toEqual([...STEPS, 'step-4-1'].sort());
    expect(git(dir, 'grep', '-l', 'formatPrice', 'tugplan/demo', '--', 'src')).not.toBe('');
    const show = runCli(['state', 'show', 'demo', '--json'], { cwd: dir });
    expect(show.code, show.stderr).toBe(0);
    expect(show.json.plans[0].status).toBe('done');
    const steps = show.json.plans[0].steps as { anchor: string; status: string }[];
    expect(steps.every((s) => s.status === 'completed')).toBe(true);
    expect(steps.map((s) => s.anchor)).toEqual(expect.arrayContaining(STEPS));
  }, 60_000);

  it('--json: the JSON Lines event stream, ending in an ok summary; the temporary repository removed', () => {
    const tmp = tempDir();
    const r = demo(['--json'], { TMPDIR: tmp });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const [first, ...events] = parseLines(r.stdout);
    // First the demo line: where the repository was (removed at the end: not kept).
    checkSchema(demoEventSchema, first);
    expect(first).toMatchObject({ type: 'demo', plan_path: '.tugtool/tugplan-demo.md', kept: false });
    expect(first.repo_root.startsWith(tmp)).toBe(true);
    expect(existsSync(first.repo_root)).toBe(false);
    for (const e of events) checkSchema(runEventSchema, e);
    // `--workers` defaults to 3, but the plan keeps no more than 2 busy (docs/run.md §1 item 3).
    expect(events[0]).toMatchObject({
      type: 'run_started',
      workers: 2,
      workers_requested: 3,
      integration_branch: 'tugplan/demo',
    });
    const subPhases = events.filter((e) => e.type === 'phase' && e.substep_anchor === 'step-4-1');
    expect(subPhases.map((e) => [e.step_anchor, e.phase])).toEqual([
      ['step-4', 'implementer'],
      ['step-4', 'checkpoints'],
      ['step-4', 'commit'],
    ]);
    const summary = events.at(-1);
    expect(summary).toMatchObject({ type: 'summary', status: 'ok', failed_steps: [], blocked_steps: [] });
    expect([...summary.steps_completed].sort()).toEqual(STEPS);
    // Every commit on the integration branch: one per step and one for the substep (step-4-1).
    expect(summary.commits).toHaveLength(8);
    expect(events.filter((e) => e.type === 'summary')).toHaveLength(1);
    expect(readdirSync(tmp).filter((f) => f.startsWith('tugcode-demo-'))).toEqual([]);
  }, 60_000);

  it('--json --keep: the demo line names the repository, which stays', () => {
    const tmp = tempDir();
    const r = demo(['--json', '--keep', '--workers', '2'], { TMPDIR: tmp });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const [first] = parseLines(r.stdout);
    expect(first).toMatchObject({ type: 'demo', kept: true });
    expect(stepCommits(first.repo_root, 'tugplan/demo').sort()).toEqual([...STEPS, 'step-4-1'].sort());
  }, 60_000);

  it('refuses a DIR that is not empty, and does not call it the demo repository', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'mine.txt'), 'x');
    const r = demo([dir]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('tugcode: InvalidArgument: ');
    expect(r.stdout).not.toContain('the demo repository is at');
    expect(existsSync(join(dir, '.git'))).toBe(false);
  });
});

/**
 * The demo with its stdout (and with `stderr`, its stderr too: `2>&1 | head`) a pipe closed once `lines`
 * lines came: the reader of `tugcode demo … | head -3` gone. Resolves when the process has exited.
 */
function demoClosed(
  args: string[],
  env: Record<string, string>,
  o: { lines: number; stderr?: boolean },
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const c = spawn(process.execPath, [CLI, 'demo', ...args], {
      env: { ...process.env, NODE_ENV: 'test', NO_COLOR: '1', ...env },
    });
    let stdout = '';
    let stderr = '';
    c.stdout.setEncoding('utf8').on('data', (d: string) => {
      if (c.stdout.destroyed) return;
      stdout += d;
      if (stdout.split('\n').length > o.lines) {
        c.stdout.destroy();
        if (o.stderr) c.stderr.destroy();
      }
    });
    c.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    c.on('error', fail);
    c.on('close', (code) => done({ code, stdout, stderr }));
  });
}

describe('tugcode demo whose stdout is closed early (docs/run.md §4)', () => {
  const mine = (tmp: string) => readdirSync(tmp).filter((f) => f.startsWith('tugcode-demo-'));

  it('removes its temporary repository and gives no hint to resume it', async () => {
    const tmp = tempDir();
    const r = await demoClosed(['--workers', '2'], { TMPDIR: tmp }, { lines: 3 });
    expect(r.code, r.stderr).toBe(141);
    const repo = /^demo repository: (.+)$/m.exec(r.stdout)![1]!;
    expect(repo.startsWith(tmp)).toBe(true);
    expect(mine(tmp)).toEqual([]);
    expect(r.stderr).toContain('tugcode: Interrupted: ');
    expect(r.stderr).not.toContain(repo);
    expect(r.stderr).not.toContain('tugcode run');
    expect(r.stderr).toContain('hint: the temporary repository is removed: run `tugcode demo` again (--keep keeps it)');
  }, 60_000);

  it('with stderr closed as well (`2>&1 | head -3`): the repository removed all the same', async () => {
    const tmp = tempDir();
    const r = await demoClosed(['--workers', '1'], { TMPDIR: tmp }, { lines: 3, stderr: true });
    expect(r.code).toBe(141);
    expect(mine(tmp)).toEqual([]);
  }, 60_000);

  it('in a DIR: the repository stays, and the hint resumes the run there', async () => {
    const tmp = tempDir();
    const dir = join(tmp, 'd');
    const r = await demoClosed([dir, '--workers', '2'], { TMPDIR: tmp }, { lines: 3 });
    expect(r.code, r.stderr).toBe(141);
    expect(existsSync(join(dir, '.tugtool', 'tugplan-demo.md'))).toBe(true);
    const hint = /^hint: (.*) \(it resumes where this run stopped\)$/m.exec(r.stderr)?.[1];
    expect(hint, r.stderr).toMatch(/^tugcode -C \S+ run \.tugtool\/tugplan-demo\.md --workers 2 --implementer /);
    // The hint works pasted anywhere: it runs the plan to the end in the demo's repository.
    const words = tokenizeShell(hint!);
    expect(words.ok).toBe(true);
    const argv = words.ok ? words.tokens.slice(1) : [];
    expect(argv.slice(0, 2)).toEqual(['-C', dir]);
    const again = runCli([...argv, '--json'], { cwd: tmp });
    expect(again.code, again.stderr).toBe(0);
    expect(parseLines(again.stdout).at(-1)).toMatchObject({ type: 'summary', status: 'ok' });
  }, 60_000);
});

describe('tugcode demo ended by a signal no run handles (docs/run.md §4)', () => {
  it('--board waiting for its page, SIGHUP (the terminal closed): the process ends 129 and the repository goes', async () => {
    const tmp = tempDir();
    const child = spawn(process.execPath, [CLI, 'demo', '--board', '--json'], {
      env: { ...process.env, NODE_ENV: 'test', NO_COLOR: '1', TMPDIR: tmp },
    });
    const exited = new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
    await boardLineOf(child);
    expect(readdirSync(tmp).filter((f) => f.startsWith('tugcode-demo-'))).toHaveLength(1);
    child.kill('SIGHUP');
    expect(await exited).toBe(129);
    expect(readdirSync(tmp).filter((f) => f.startsWith('tugcode-demo-'))).toEqual([]);
  }, 60_000);
});

describe('a waiting worker', () => {
  it('leaves no listener behind, wakes on a change, and returns at once after a stop', async () => {
    const rc = { changed: new EventTarget(), stop: new AbortController() } as unknown as RunCtx;
    for (let i = 0; i < 20; i++) await waitForChange(rc, 1);
    expect(getEventListeners(rc.stop.signal, 'abort')).toHaveLength(0);
    expect(getEventListeners(rc.changed, 'change')).toHaveLength(0);
    const woken = waitForChange(rc, 60_000);
    announceChange(rc);
    await woken;
    const pending = waitForChange(rc, 60_000);
    rc.stop.abort();
    await pending;
    await waitForChange(rc, 60_000); // a stopped run: at once
    expect(getEventListeners(rc.changed, 'change')).toHaveLength(0);
  });
});
