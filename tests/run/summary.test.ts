/**
 * The final summary of `tugcode run` as a user reads it (docs/run.md §1 item 6), text mode on a real
 * repository: its table lists the steps in plan order, and says why a blocked step is blocked.
 */
import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI, runCli } from '../helpers/cli.js';
import { holdingImplementer, implementerScript, planText, runJsonl, runRepo, step, waitUntil } from './helpers.js';

/** step-2 fails; step-3 waits on it, step-4 on step-3; step-1 and step-5 are free of it. */
const FAILING = planText([
  step(1, 'Base'),
  step(2, 'Broken', { deps: [1] }),
  step(3, 'After', { deps: [2] }),
  step(4, 'Last', { deps: [3] }),
  step(5, 'Side'),
]);
const ONE_ATTEMPT = { '.tugtool/config.toml': '[state]\nmax_attempts = 1\n' };

/** The summary table's step rows: `[step, result, detail]`. */
function tableRows(stdout: string): string[][] {
  return stdout
    .split('\n')
    .filter((l) => /^step-[0-9-]+ {2,}\S/.test(l))
    .map((l) => l.split(/ {2,}/).map((c) => c.trim()));
}

/** `tugcode run <args>` in text mode in the background, as a user at a terminal without a TTY. */
function startText(cwd: string, args: string[]) {
  const child = spawn(process.execPath, [CLI, 'run', ...args], {
    cwd,
    env: { ...process.env, NODE_ENV: 'test', NO_COLOR: '1' },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((res) =>
    child.on('close', (code) => res({ code, stdout, stderr })),
  );
  return { child, done, stdout: () => stdout };
}

/** The anchors of the `<worker> <step> completed` event lines, in the order they came. */
function completedLines(stdout: string): string[] {
  return [...stdout.matchAll(/^w\d+ (step-[0-9-]+) completed/gm)].map((m) => m[1]!);
}

describe('the summary of tugcode run', () => {
  it('lists the steps in plan order, not in the order they completed', () => {
    // step-1 waits on step-2, written after it: one worker completes step-2 first.
    const root = runRepo(planText([step(1, 'Later', { deps: [2] }), step(2, 'First')]));
    const impl = implementerScript();
    const r = runCli(['run', 'demo', '--workers', '1', '--implementer', impl.argv], { cwd: root });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(completedLines(r.stdout)).toEqual(['step-2', 'step-1']);
    expect(tableRows(r.stdout)).toEqual([
      ['step-1', 'completed'],
      ['step-2', 'completed'],
    ]);
  });

  it('says why each blocked step is blocked: the dependency that failed, or the blocked one and its failure', () => {
    const root = runRepo(FAILING, 'demo', ONE_ATTEMPT);
    const impl = implementerScript();
    writeFileSync(join(impl.failDir, 'step-2'), '1');
    const r = runCli(['run', 'demo', '--workers', '2', '--implementer', impl.argv], { cwd: root });
    expect(r.code, r.stdout + r.stderr).toBe(4);
    expect(tableRows(r.stdout)).toEqual([
      ['step-1', 'completed'],
      ['step-2', 'failed', expect.stringMatching(/^ImplementerFailed/)],
      ['step-3', 'blocked', 'waits on step-2 (failed)'],
      ['step-4', 'blocked', 'waits on step-3 (blocked: step-2 failed)'],
      ['step-5', 'completed'],
    ]);
    expect(r.stdout).toContain('2 completed, 1 failed, 2 blocked · 2 commits');

    // --json: the same reasons in the summary, with the failed steps behind each.
    const root2 = runRepo(FAILING, 'demo', ONE_ATTEMPT);
    writeFileSync(join(impl.failDir, 'step-2'), '1');
    const j = runJsonl(root2, ['demo', '--workers', '2', '--implementer', impl.argv]);
    expect(j.code, j.stderr).toBe(4);
    expect(j.events.at(-1)).toMatchObject({
      blocked_steps: ['step-3', 'step-4'],
      blocked_reasons: [
        { step_anchor: 'step-3', blocked_by: ['step-2'], reason: 'waits on step-2 (failed)' },
        { step_anchor: 'step-4', blocked_by: ['step-2'], reason: 'waits on step-3 (blocked: step-2 failed)' },
      ],
    });
  });

  it('lists a step that was running when the user pressed Ctrl-C as interrupted, its claim released', async () => {
    const root = runRepo(planText([step(1, 'Slow'), step(2, 'Next', { deps: [1] }), step(3, 'Quick')]));
    const impl = holdingImplementer();
    writeFileSync(join(impl.hold, 'step-1-a1'), '');
    const run = startText(root, ['demo', '--workers', '2', '--implementer', impl.argv]);
    await waitUntil('step-1 to be running and step-3 completed', () => {
      if (run.child.exitCode !== null) throw new Error(`the run ended early:\n${run.stdout()}`);
      return existsSync(join(impl.started, 'step-1-a1')) && /^w\d+ step-3 completed/m.test(run.stdout());
    });
    run.child.kill('SIGINT');
    const r = await run.done;
    expect(r.code, r.stdout + r.stderr).toBe(130);
    expect(tableRows(r.stdout)).toEqual([
      ['step-1', 'interrupted', 'stopped mid-step, its claim released: the next run does it again'],
      // Behind step-1, never claimed: the summary says what the next run still has to do.
      ['step-2', 'not run', 'the run stopped claiming before it'],
      ['step-3', 'completed'],
    ]);
    expect(r.stdout).toContain('1 completed, 1 interrupted, 1 not run · 1 commit');
    expect(r.stderr).toContain('tugcode: Interrupted: ');
  });

  it('says the plan is done when a rerun finds every step completed already, and how many', () => {
    const root = runRepo(FAILING, 'demo', ONE_ATTEMPT);
    const impl = implementerScript();
    writeFileSync(join(impl.failDir, 'step-2'), '1');
    expect(runCli(['run', 'demo', '--implementer', impl.argv], { cwd: root }).code).toBe(4);
    // The user resets the failed step and runs again: this run does the rest.
    expect(runCli(['state', 'reset', 'demo', 'step-2'], { cwd: root }).code).toBe(0);
    const rest = runCli(['run', 'demo', '--implementer', impl.argv], { cwd: root });
    expect(rest.code, rest.stdout + rest.stderr).toBe(0);
    expect(tableRows(rest.stdout).map((row) => row[0])).toEqual(['step-2', 'step-3', 'step-4']);
    expect(rest.stdout).toContain('plan done: 3 completed, 2 already completed · 3 commits');
    // Nothing left to do: the rerun says the plan is done rather than a bare "0 completed".
    const again = runCli(['run', 'demo', '--implementer', impl.argv], { cwd: root });
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(tableRows(again.stdout)).toEqual([]);
    expect(again.stdout).toContain('plan done: nothing to run, all 5 steps already completed · 0 commits');
    expect(again.stdout).not.toContain('0 completed');
    expect(again.stdout).not.toContain('utilisation'); // no worker did anything: no table of 0 ms rows
    const j = runJsonl(root, ['demo', '--implementer', impl.argv]);
    expect(j.events.at(-1)).toMatchObject({
      status: 'ok',
      steps_completed: [],
      plan_done: true,
      already_completed: ['step-1', 'step-2', 'step-3', 'step-4', 'step-5'],
    });
  });

  it('ends with `next: tugcode merge <plan>` once the plan is done, and that command merges it; not before', () => {
    const root = runRepo(FAILING, 'demo', ONE_ATTEMPT);
    const impl = implementerScript();
    writeFileSync(join(impl.failDir, 'step-2'), '1');
    const failed = runCli(['run', 'demo', '--implementer', impl.argv], { cwd: root });
    expect(failed.code).toBe(4);
    expect(failed.stdout).not.toContain('next:');
    expect(failed.stdout).not.toContain('tugcode merge');
    expect(runCli(['state', 'reset', 'demo', 'step-2'], { cwd: root }).code).toBe(0);
    const done = runCli(['run', 'demo', '--implementer', impl.argv], { cwd: root });
    expect(done.code, done.stdout + done.stderr).toBe(0);
    const last = done.stdout.trimEnd().split('\n').at(-1)!;
    expect(last).toBe('next: tugcode merge .tugtool/tugplan-demo.md');
    // The line, as written, is the command that brings the plan back.
    const words = last.slice('next: tugcode '.length).split(' ');
    const merge = runCli(words, { cwd: root });
    expect(merge.code, merge.stdout + merge.stderr).toBe(0);
    expect(merge.stdout).toContain('merged tugplan/demo into main');
    // With --merge the run merged it itself: nothing left to suggest.
    const root2 = runRepo(planText([step(1, 'One')]));
    const merged = runCli(['run', 'demo', '--merge', '--implementer', impl.argv], { cwd: root2 });
    expect(merged.code, merged.stdout + merged.stderr).toBe(0);
    expect(merged.stdout).not.toContain('next:');
  });
});
