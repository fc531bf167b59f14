/**
 * `tugcode doctor` on a failed step (docs/git.md §7): its fix names the commands for that step — why it
 * failed (`state show <plan> --step <step>`), then `state reset <plan> <step>` and the run — with the plan
 * and step filled in, and a placeholder for the implementer when none is configured (a bare run would run
 * none) — and the reset, run as written, clears the warning.
 */
import { describe, expect, it } from 'vitest';
import { runCli, runJson } from '../helpers/cli.js';
import { planRepo, PLAN_PATH, T0 } from './helpers.js';

const env = { TUGCODE_NOW: T0 };
const ok = (root: string, args: string[]) => {
  const r = runJson(`state ${args[0]}`, ['state', ...args], { cwd: root, env });
  expect(r.json.status, `${args.join(' ')}: ${r.stdout}${r.stderr}`).toBe('ok');
  return r.json;
};

/** step-1 given up three times (the default max_attempts): failed. */
function failedStep(): string {
  const root = planRepo();
  ok(root, ['init', 'demo']);
  for (let i = 0; i < 3; i++) {
    expect(ok(root, ['claim', 'demo']).step_anchor).toBe('step-1');
    ok(root, ['fail', 'demo', 'step-1', '--reason', 'tests keep failing']);
  }
  expect(ok(root, ['show', 'demo']).plans[0].steps[0].status).toBe('failed');
  return root;
}

describe('doctor: a failed step', () => {
  it('names the show, reset and run commands for that step; the reset as written clears it', () => {
    const root = failedStep();
    const check = runJson('doctor', ['doctor'], { cwd: root, env }).json.checks.find(
      (c: { name: string }) => c.name === 'failed-steps',
    );
    expect(check).toMatchObject({
      status: 'warn',
      message: `failed steps: ${PLAN_PATH} step-1 (tests keep failing)`,
      fix:
        `why: tugcode state show ${PLAN_PATH} --step step-1; ` +
        `once the cause is fixed: tugcode state reset ${PLAN_PATH} step-1 && ` +
        // A bare `tugcode run` would run no implementer: with none configured, the fix says where it goes.
        `tugcode run ${PLAN_PATH} --implementer <your implementer>`,
    });
    // The text shows the same fix under the check.
    const text = runCli(['doctor'], { cwd: root, env });
    expect(text.code, text.stderr).toBe(0); // a warning, not a failure
    const lines = text.stdout.split('\n');
    const at = lines.findIndex((l) => /^WARN +failed-steps /.test(l));
    expect(lines[at + 1]!.trim()).toBe(`fix: ${check.fix}`);

    // The commands, as the fix writes them, run: the show explains, the reset makes the step claimable.
    const why = check.fix
      .match(/^why: (tugcode .*?); /)![1]
      .split(' ')
      .slice(1);
    expect(runCli(why, { cwd: root, env }).stdout).toContain('(failed: "tests keep failing")');
    const reset = check.fix
      .match(/once the cause is fixed: (tugcode state reset \S+ \S+) && /)![1]
      .split(' ')
      .slice(1);
    expect(runCli([...reset, '--json'], { cwd: root, env }).json.status).toBe('ok');
    expect(ok(root, ['show', 'demo']).plans[0].steps[0].status).toBe('pending');
    const after = runJson('doctor', ['doctor'], { cwd: root, env }).json.checks;
    expect(after.find((c: { name: string }) => c.name === 'failed-steps').status).toBe('pass');
  });

  it('names no placeholder when the configuration names the implementer: the run as written uses it', () => {
    const root = failedStep();
    const withImpl = { ...env, TUGCODE_RUN_IMPLEMENTER: 'node impl.mjs' };
    const check = runJson('doctor', ['doctor'], { cwd: root, env: withImpl }).json.checks.find(
      (c: { name: string }) => c.name === 'failed-steps',
    );
    expect(check.fix).toMatch(new RegExp(`&& tugcode run ${PLAN_PATH.replace(/[.]/g, '\\.')}$`));
  });
});
