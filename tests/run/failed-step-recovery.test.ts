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
import { implementerScript, planText, runJsonl, runRepo, step, stepCommits } from './helpers.js';

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
});
