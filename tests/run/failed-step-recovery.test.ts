/**
 * A step failed at its cap stays failed, and `run` again does nothing until it is reset (docs/state.md §3):
 * the PlanIncomplete hint names the exact `tugcode state reset <plan> <step>` (then `run`), and the text
 * output states the error once, as the one diagnostic line on stderr (docs/output.md §1).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/repo.js';
import { implementerScript, planText, runJsonl, runRepo, step, stepCommits, tugJson } from './helpers.js';

const PLAN = planText([step(1, 'One'), step(2, 'Two', { deps: [1] })]);
/** The hint repeats the run's flags (docs/run.md §1.2), the implementer's path re-quoted as a plain word. */
const hintOf = (impl: string) =>
  `tugcode state reset .tugtool/tugplan-demo.md step-1 && tugcode run .tugtool/tugplan-demo.md --workers 1 --implementer ${impl}`;

describe('tugcode run: a step failed at its cap', () => {
  it('prints the error once, with the reset command as the hint, and that command recovers the run', () => {
    const root = runRepo(PLAN, 'demo', { '.tugtool/config.toml': '[state]\nmax_attempts = 1\n' });
    const impl = implementerScript();
    const HINT = hintOf(JSON.parse(impl.argv) as string);
    writeFileSync(join(impl.failDir, 'step-1'), '1'); // fails its one attempt, then succeeds
    const env = {
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@e.invalid',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@e.invalid',
    };
    const text = runCli(['run', 'demo', '--workers', '1', '--implementer', impl.argv], { cwd: root, env });
    expect(text.code, text.stderr).toBe(4);
    const all = text.stdout + text.stderr;
    expect(all.match(/PlanIncomplete/g), all).toHaveLength(1);
    expect(text.stdout).not.toMatch(/^error:/m);
    expect(text.stderr).toContain(
      'tugcode: PlanIncomplete: .tugtool/tugplan-demo.md is not complete: 1 failed, 1 blocked\n',
    );
    expect(text.stderr).toContain(`hint: ${HINT}\n`);
    expect(text.stderr.match(/^hint:/gm)).toHaveLength(1);

    // Re-running changes nothing: the failed step stays failed, with the same hint (JSON this time).
    const again = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv]);
    expect(again.code).toBe(4);
    expect(again.events.at(-1)).toMatchObject({
      type: 'summary',
      steps_completed: [],
      error: { code: 'PlanIncomplete', hint: HINT },
    });
    expect(again.events.filter((e) => e.type === 'claimed')).toEqual([]);

    // The hint, as written, resets the step and runs the plan again the same way: it finishes.
    const bin = tempDir('tugcode-bin-');
    writeFileSync(join(bin, 'tugcode'), `#!/bin/sh\nexec '${process.execPath}' '${CLI}' "$@"\n`, { mode: 0o755 });
    const sh = spawnSync('sh', ['-c', HINT], {
      cwd: root,
      env: { ...process.env, NODE_ENV: 'test', NO_COLOR: '1', ...env, PATH: `${bin}:${process.env.PATH}` },
      encoding: 'utf8',
    });
    expect(sh.status, sh.stderr + sh.stdout).toBe(0);
    expect(stepCommits(root, 'tugplan/demo')).toEqual(['step-1', 'step-2']);
  });

  it("names the failed attempts' implementer logs: each failure line, the summary, failed_steps[].logs", () => {
    const root = runRepo(PLAN, 'demo', { '.tugtool/config.toml': '[state]\nmax_attempts = 2\n' });
    const impl = implementerScript();
    writeFileSync(join(impl.failDir, 'step-1'), '9'); // fails both attempts
    const env = {
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@e.invalid',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@e.invalid',
    };
    const LOG = (n: number) => `.tugtool/logs/demo/step-1-attempt${n}.log`;
    const text = runCli(['run', 'demo', '--workers', '1', '--implementer', impl.argv], { cwd: root, env });
    expect(text.code, text.stderr).toBe(4);
    for (const n of [1, 2]) {
      expect(text.stdout).toMatch(
        new RegExp(`^w1 step-1 attempt ${n} failed: ImplementerFailed .*\\(log: ${LOG(n)}\\)$`, 'm'),
      );
      // The file it names is the one holding the implementer's output.
      expect(readFileSync(join(root, LOG(n)), 'utf8')).toContain('implementer failed on purpose');
    }
    expect(text.stdout).toContain(`\nstep-1 log: ${LOG(2)} (and 1 earlier attempt's beside it)\n`);

    // JSON: the failed step entry lists every attempt's log; each attempt_failed its own.
    const again = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv]);
    expect(again.events.at(-1).failed_steps).toEqual([
      { step_anchor: 'step-1', reason: expect.any(String), logs: [LOG(1), LOG(2)] },
    ]);
  });

  it('says the failures against the cap beside an attempt number that counts claims (docs/state.md §3.6)', () => {
    const root = runRepo(PLAN, 'demo', { '.tugtool/config.toml': '[state]\nmax_attempts = 2\n' });
    const impl = implementerScript();
    writeFileSync(join(impl.failDir, 'step-1'), '9'); // fails both attempts
    const args = ['demo', '--workers', '1', '--implementer', impl.argv];
    const first = runJsonl(root, args);
    expect(first.code, first.stderr).toBe(4);
    const claims = (r: { events: any[] }) =>
      r.events
        .filter((e) => e.type === 'claimed')
        .map((e) => ({ step: e.step_anchor, attempt: e.attempt, failures: e.failures, max_attempts: e.max_attempts }));
    expect(claims(first)).toEqual([
      { step: 'step-1', attempt: 1, failures: 0, max_attempts: 2 },
      { step: 'step-1', attempt: 2, failures: 1, max_attempts: 2 },
    ]);
    expect(first.events.find((e) => e.type === 'step_failed')).toMatchObject({ failures: 2, max_attempts: 2 });
    // A reset zeroes the failures and keeps the attempt: the next claims are attempts 3 and 4 under a cap
    // of 2, which the text says is no overrun.
    expect(tugJson(root, ['state', 'reset', '.tugtool/tugplan-demo.md', 'step-1']).code).toBe(0);
    writeFileSync(join(impl.failDir, 'step-1'), '1'); // fails once more, then succeeds
    const text = runCli(['run', ...args], { cwd: root });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain('w1 step-1 claimed (attempt 3, 0 of 2 failures)\n');
    expect(text.stdout).toMatch(/^w1 step-1 attempt 3 failed: ImplementerFailed /m);
    expect(text.stdout).toContain('w1 step-1 claimed (attempt 4, 1 of 2 failures)\n');
    expect(text.stdout).toContain('w1 step-2 claimed (attempt 1)\n');
  });
});
