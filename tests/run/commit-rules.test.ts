/**
 * How the driver commits (docs/run.md §1 item 4.5, §2): a `**Commit:** N/A` step gets no commit, a step without
 * a message gets the default one, the user's hooks run (a failing hook fails the attempt with `HookFailed`)
 * unless `run.no_verify = true`.
 */
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { git } from '../helpers/repo.js';
import { implementerScript, planText, runJsonl, runRepo, step, stepCommits } from './helpers.js';

function refusingHooks(root: string): void {
  const hooks = join(root, '.git', 'hooks');
  mkdirSync(hooks, { recursive: true });
  for (const name of ['pre-commit', 'pre-rebase']) {
    writeFileSync(join(hooks, name), `#!/bin/sh\necho "${name} says no" >&2\nexit 1\n`);
    chmodSync(join(hooks, name), 0o755);
  }
}

describe('tugcode run: commits', () => {
  it('makes no commit for a `**Commit:** N/A` step and the default message for a step without one', () => {
    const plan = planText([
      step(1, 'Check only').replace(/\*\*Commit:\*\* `[^`]*`/, '**Commit:** N/A (verification only)'),
      step(2, 'Untitled', { deps: [1] }).replace(/\*\*Commit:\*\* `[^`]*`\n\n/, ''),
      step(3, 'Real', { deps: [2] }),
    ]);
    const root = runRepo(plan);
    const r = runJsonl(root, ['demo', '--implementer', implementerScript().argv]);
    expect(r.events.at(-1), r.stderr).toMatchObject({ type: 'summary', status: 'ok' });
    const done = Object.fromEntries(
      r.events.filter((e) => e.type === 'step_completed').map((e) => [e.step_anchor, e.commit_hash]),
    );
    expect(done['step-1']).toBeNull();
    expect(done['step-2']).toMatch(/^[0-9a-f]{40}$/);
    expect(stepCommits(root, 'tugplan/demo')).toEqual(['step-2', 'step-3']);
    expect(git(root, 'log', '-2', '--format=%s', 'tugplan/demo').trim().split('\n')).toEqual([
      'feat: real',
      'chore(demo): Untitled',
    ]);
  });

  it("runs the user's hooks (HookFailed), and skips them with run.no_verify = true", () => {
    const plan = planText([step(1, 'One'), step(2, 'Two'), step(3, 'Three'), step(4, 'Four')]);
    const hooked = runRepo(plan);
    refusingHooks(hooked);
    const r1 = runJsonl(hooked, ['demo', '--max-attempts', '1', '--implementer', implementerScript().argv]);
    expect(r1.code).toBe(4);
    expect(r1.events.find((e) => e.type === 'attempt_failed')).toMatchObject({
      reason_code: 'HookFailed',
      reason: expect.stringContaining('pre-commit says no'),
    });

    // Two workers on independent steps: besides the commits, any rebase onto a moved tip skips pre-rebase.
    const skipped = runRepo(plan, 'demo', { '.tugtool/config.toml': '[run]\nno_verify = true\n' });
    refusingHooks(skipped);
    const r2 = runJsonl(skipped, ['demo', '--workers', '2', '--implementer', implementerScript().argv]);
    expect(r2.events.at(-1), r2.stderr).toMatchObject({ type: 'summary', status: 'ok' });
    expect([...stepCommits(skipped, 'tugplan/demo')].sort()).toEqual(['step-1', 'step-2', 'step-3', 'step-4']);
  });

  it("appends a refusing hook's whole output to the attempt's log, which the summary names for it", () => {
    const root = runRepo(planText([step(1, 'One')]));
    const hooks = join(root, '.git', 'hooks');
    mkdirSync(hooks, { recursive: true });
    const long = 'x'.repeat(300);
    writeFileSync(
      join(hooks, 'pre-commit'),
      `#!/bin/sh\necho "lint: first problem ${long}" >&2\necho "lint: second problem" >&2\nexit 1\n`,
    );
    chmodSync(join(hooks, 'pre-commit'), 0o755);
    const args = ['run', 'demo', '--workers', '1', '--max-attempts', '1', '--implementer', implementerScript().argv];
    const r = runCli(args, { cwd: root });
    expect(r.code, r.stderr).toBe(4);
    const log = '.tugtool/logs/demo/step-1-attempt1.log';
    const text = readFileSync(join(root, log), 'utf8');
    // The implementer's output first, then the hook's, whole.
    expect(text).toContain('done step-1\n');
    expect(text.indexOf('done step-1')).toBeLessThan(text.indexOf('lint: first problem'));
    expect(text).toContain(`lint: first problem ${long}\nlint: second problem\n`);
    expect(text).toMatch(/HookFailed/);
    expect(r.stdout).toContain(`step-1 log: ${log} (the hook's whole output at its end)\n`);
  });

  it('names, for a step with substeps, the log of the substep whose commit the hook refused', () => {
    const sub = (id: string, title: string) => [
      `##### Step ${id}: ${title} {#step-${id.replace('.', '-')}}`,
      '',
      `**Commit:** \`feat: ${title.toLowerCase()}\``,
      '',
      '**Tasks:**',
      `- [ ] write ${title.toLowerCase()}`,
      '',
    ];
    const root = runRepo(
      planText([
        [
          '#### Step 1: Parent {#step-1}',
          '',
          '**Tasks:**',
          '- [ ] write parent',
          '',
          ...sub('1.1', 'First'),
          ...sub('1.2', 'Second'),
        ].join('\n'),
      ]),
    );
    const hooks = join(root, '.git', 'hooks');
    mkdirSync(hooks, { recursive: true });
    // Only the second substep's commit is refused: the first one's log has no hook output.
    writeFileSync(
      join(hooks, 'pre-commit'),
      `#!/bin/sh\nif git diff --cached --name-only | grep -q step-1-2; then echo "lint: no second" >&2; exit 1; fi\n`,
    );
    chmodSync(join(hooks, 'pre-commit'), 0o755);
    const args = ['run', 'demo', '--workers', '1', '--max-attempts', '1', '--implementer', implementerScript().argv];
    const r = runCli(args, { cwd: root });
    expect(r.code, r.stderr).toBe(4);
    const logs = '.tugtool/logs/demo';
    expect(readFileSync(join(root, logs, 'step-1-2-attempt1.log'), 'utf8')).toContain('lint: no second\n');
    expect(readFileSync(join(root, logs, 'step-1-1-attempt1.log'), 'utf8')).not.toContain('lint:');
    expect(r.stdout).toContain(`step-1 log: ${logs}/step-1-1-attempt1.log\n`);
    expect(r.stdout).toContain(`step-1 log: ${logs}/step-1-2-attempt1.log (the hook's whole output at its end)\n`);
  });
});
