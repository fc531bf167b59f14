/**
 * The driver's own checks around any implementer (docs/agents.md §1.6–1.7), with script implementers:
 * a change outside the worktree fails the attempt with OutsideWrite (nothing undone, the run's summary an
 * error), and a step completed behind the driver's back is StepCompletedElsewhere with its work kept.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI, runCli } from '../helpers/cli.js';
import { stepText } from '../helpers/plan.js';
import { git } from '../helpers/repo.js';
import { sql } from '../state/helpers.js';
import {
  baseEnv,
  nodeImplementer,
  parseLines,
  planText,
  runJsonl,
  runRepo,
  startRun,
  step,
  stepCommits,
  waitUntil,
} from './helpers.js';

const ONE = { '.tugtool/config.toml': '[state]\nmax_attempts = 1\n' };

describe('OutsideWrite', () => {
  it('a write to the main checkout, to .tugtool/ and a new branch fail the attempt; nothing is undone', () => {
    const root = runRepo(planText([step(1, 'Base')]), 'demo', ONE);
    const impl = nodeImplementer(`
import { execFileSync } from 'node:child_process';
writeFileSync(join(wt, step + '.txt'), step + '\\n');
if (step === 'step-1') {
  const root = process.env.TUG_REPO_ROOT;
  writeFileSync(join(root, 'stray.txt'), 'outside\\n');
  writeFileSync(join(root, '.tugtool', 'notes.md'), 'outside\\n');
  execFileSync('git', ['branch', 'evil'], { cwd: wt });
}
`);
    const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv]);
    const failed = r.events.filter((e) => e.type === 'attempt_failed');
    expect(failed, r.stdout + r.stderr).toEqual([
      expect.objectContaining({ step_anchor: 'step-1', reason_code: 'OutsideWrite' }),
    ]);
    expect(failed[0].reason).toBe(
      'step-1: the implementer changed 3 thing(s) outside its worktree: .tugtool/notes.md, ref refs/heads/evil, stray.txt',
    );
    // The run ends in an error naming the change.
    expect(stepCommits(root, 'tugplan/demo')).toEqual([]);
    expect(r.code).toBe(4);
    expect(r.events.at(-1)).toMatchObject({ type: 'summary', status: 'error', error: { code: 'OutsideWrite' } });
    // Nothing the implementer changed was undone.
    expect(readFileSync(join(root, 'stray.txt'), 'utf8')).toBe('outside\n');
    expect(existsSync(join(root, '.tugtool', 'notes.md'))).toBe(true);
    expect(git(root, 'branch', '--list', 'evil').trim()).toBe('evil');
    expect(r.events.at(-1).error.message).toMatch(/^the implementer of step-1 \(attempt 1\) changed things/);
    expect(r.events.at(-1).error.details).toMatchObject({ by: 'the implementer' });
  });

  it('two agents running side by side: the reason says the change came while each ran, not who made it', () => {
    // A Depends on line makes the plan's order explicit, so step-1 and step-2 run side by side.
    const root = runRepo(planText([step(1, 'One'), step(2, 'Two'), step(3, 'Three', { deps: [1, 2] })]), 'demo', ONE);
    // step-2's implementer runs all the while step-1's writes into the main checkout.
    const impl = nodeImplementer(`
writeFileSync(join(wt, step + '.txt'), step + '\\n');
if (step === 'step-2') {
  writeFileSync(join(dir, 'started-2'), '');
  while (!existsSync(join(dir, 'done-1'))) await sleep(20);
} else {
  while (!existsSync(join(dir, 'started-2'))) await sleep(20);
  writeFileSync(join(process.env.TUG_REPO_ROOT, 'stray.txt'), 'outside\\n');
  writeFileSync(join(dir, 'done-1'), '');
}
`);
    const r = runJsonl(root, ['demo', '--workers', '2', '--implementer', impl.argv]);
    const failed = r.events.filter((e) => e.type === 'attempt_failed');
    expect(failed.map((e) => [e.step_anchor, e.reason_code]).sort(), r.stderr).toEqual([
      ['step-1', 'OutsideWrite'],
      ['step-2', 'OutsideWrite'],
    ]);
    for (const f of failed)
      expect(f.reason).toBe(
        `${f.step_anchor}: 1 thing(s) outside its worktree changed while the implementer ran, beside 1 other agent or command run(s) of this run that may have made them: stray.txt`,
      );
    expect(r.events.at(-1).error.message).toMatch(
      /^things outside its worktree changed while the implementer of step-\d \(attempt 1\) ran, beside 1 other/,
    );
    expect(r.events.at(-1).error.details).toMatchObject({ beside: 1 });
  });

  it("the user's own edit in the main checkout during a run: the attempt is redone, and the hint says where to edit", async () => {
    const root = runRepo(planText([step(1, 'Base')]));
    // Attempt 1 waits until the user has saved a file in the main checkout; attempt 2 runs straight through.
    const impl = nodeImplementer(`
if (attempt === 1) {
  writeFileSync(join(dir, 'started'), '');
  while (!existsSync(join(dir, 'go'))) await sleep(20);
}
writeFileSync(join(wt, step + '.txt'), step + '\\n');
`);
    const run = startRun(root, ['demo', '--workers', '1', '--implementer', impl.argv]);
    await waitUntil('attempt 1 to start', () => existsSync(join(impl.dir, 'started')));
    writeFileSync(join(root, '.README.md.swp'), 'an editor was here\n');
    writeFileSync(join(impl.dir, 'go'), '');
    const r = await run.done;
    const failed = r.events.filter((e) => e.type === 'attempt_failed');
    expect(failed.map((e) => [e.step_anchor, e.attempt, e.reason_code])).toEqual([['step-1', 1, 'OutsideWrite']]);
    expect(failed[0].reason).toContain('.README.md.swp');
    // Attempt 2's snapshot holds the edit already: the step is done, and the run says what happened.
    expect(stepCommits(root, 'tugplan/demo')).toEqual(['step-1']);
    expect(r.code).toBe(4);
    expect(r.events.at(-1).error).toMatchObject({ code: 'OutsideWrite', details: { by: 'the implementer' } });
    expect(r.events.at(-1).error.hint).toContain(
      'if you made those changes yourself during the run, nothing needs undoing',
    );
    expect(readFileSync(join(root, '.README.md.swp'), 'utf8')).toBe('an editor was here\n');
  });

  it("a reviewer's write outside is OutsideWrite too, and the run's error names the reviewer", () => {
    const root = runRepo(planText([step(1, 'Base')]), 'demo', ONE);
    const impl = nodeImplementer(`writeFileSync(join(wt, step + '.txt'), step + '\\n');`);
    const reviewer = join(impl.dir, 'review.sh');
    writeFileSync(
      reviewer,
      '#!/bin/sh\ncat >/dev/null\necho noted > "$TUG_REPO_ROOT/review-notes.txt"\necho \'{"verdict":"APPROVE","summary":"ok"}\'\n',
      { mode: 0o755 },
    );
    const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv, '--reviewer', reviewer]);
    const failed = r.events.filter((e) => e.type === 'attempt_failed');
    expect(
      failed.map((e) => e.reason),
      r.stdout + r.stderr,
    ).toEqual(['step-1: the reviewer changed 1 thing(s) outside its worktree: review-notes.txt']);
    expect(r.code).toBe(4);
    expect(r.events.at(-1).error).toMatchObject({ code: 'OutsideWrite', details: { by: 'the reviewer' } });
    expect(r.events.at(-1).error.message).toMatch(/^the reviewer of step-1 \(attempt 1\) changed things/);
  });

  it('a hook planted in the git directory: OutsideWrite naming it, and the run claims no further step', () => {
    const root = runRepo(planText([step(1, 'Base'), step(2, 'Next', { deps: [1] })]));
    const impl = nodeImplementer(`
import { execFileSync } from 'node:child_process';
import { chmodSync } from 'node:fs';
writeFileSync(join(wt, step + '.txt'), step + '\\n');
if (step === 'step-1' && attempt === 1) {
  const common = execFileSync('git', ['rev-parse', '--path-format=absolute', '--git-common-dir'], { cwd: wt, encoding: 'utf8' }).trim();
  const hook = join(common, 'hooks', 'post-commit');
  writeFileSync(hook, '#!/bin/sh\\necho HOOKRAN >> ' + JSON.stringify(join(dir, 'hook.log')) + '\\n');
  chmodSync(hook, 0o755);
}
`);
    const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv]);
    const failed = r.events.filter((e) => e.type === 'attempt_failed');
    expect(
      failed.map((e) => [e.step_anchor, e.attempt, e.reason_code, e.reason]),
      r.stdout + r.stderr,
    ).toEqual([
      [
        'step-1',
        1,
        'OutsideWrite',
        'step-1: the implementer changed 1 thing(s) outside its worktree: .git/hooks/post-commit',
      ],
    ]);
    // No further claim (not even the step's next attempt): the hook would run in the run's own commits.
    expect(r.events.filter((e) => e.type === 'claimed').map((e) => [e.step_anchor, e.attempt])).toEqual([
      ['step-1', 1],
    ]);
    expect(r.events.filter((e) => e.type === 'warning').map((e) => e.code)).toContain('GitDirChanged');
    expect(stepCommits(root, 'tugplan/demo')).toEqual([]);
    expect(existsSync(join(impl.dir, 'hook.log'))).toBe(false);
    expect(r.code).toBe(4);
    expect(r.events.at(-1).error).toMatchObject({
      code: 'OutsideWrite',
      details: { by: 'the implementer', changed: ['.git/hooks/post-commit'] },
    });
    // The summary names what the run left for the next one: both steps, never claimed again.
    expect(r.events.at(-1).not_run_steps).toEqual(['step-1', 'step-2']);
    // Nothing undone.
    expect(existsSync(join(root, '.git', 'hooks', 'post-commit'))).toBe(true);
  });

  it('a run that stops claiming early lists the steps it never settled: not_run_steps, text rows `not run`', () => {
    const root = runRepo(planText([step(1, 'Base'), step(2, 'Next', { deps: [1] })]));
    const impl = nodeImplementer(`
import { execFileSync } from 'node:child_process';
writeFileSync(join(wt, step + '.txt'), step + '\\n');
execFileSync('git', ['config', 'alias.zz', '!echo planted'], { cwd: wt });
`);
    const r = runCli(['run', 'demo', '--workers', '1', '--implementer', impl.argv], { cwd: root });
    expect(r.code, r.stderr).toBe(4);
    expect(r.stdout).toMatch(/^step-1 +not run +the run stopped claiming before it$/m);
    expect(r.stdout).toMatch(/^step-2 +not run +the run stopped claiming before it$/m);
  });

  it('a git config key set by the implementer: OutsideWrite naming the key, and the run claims no further step', () => {
    const root = runRepo(planText([step(1, 'Base'), step(2, 'Next', { deps: [1] })]));
    const impl = nodeImplementer(`
import { execFileSync } from 'node:child_process';
writeFileSync(join(wt, step + '.txt'), step + '\\n');
if (step === 'step-1' && attempt === 1) {
  execFileSync('git', ['config', '--local', 'alias.zz', '!echo pwned'], { cwd: wt });
  execFileSync('git', ['config', 'core.sshCommand', 'echo ssh'], { cwd: wt });
}
`);
    const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv]);
    const failed = r.events.filter((e) => e.type === 'attempt_failed');
    expect(
      failed.map((e) => e.reason),
      r.stdout + r.stderr,
    ).toEqual([
      'step-1: the implementer changed 2 thing(s) outside its worktree: .git/config: alias.zz, .git/config: core.sshcommand',
    ]);
    expect(r.events.filter((e) => e.type === 'claimed')).toHaveLength(1);
    expect(r.events.at(-1)).toMatchObject({ type: 'summary', status: 'error', error: { code: 'OutsideWrite' } });
    expect(git(root, 'config', '--get', 'alias.zz').trim()).toBe('!echo pwned');
  });

  it("parallel workers making their trees and branches (the run's own git config) see no OutsideWrite", () => {
    const root = runRepo(
      planText([step(1, 'A'), step(2, 'B'), step(3, 'C'), step(4, 'D'), step(5, 'E', { deps: [1, 2, 3, 4] })]),
    );
    // Per-worktree config on: each `git worktree add` of a worker copies the main config.worktree.
    git(root, 'config', 'extensions.worktreeConfig', 'true');
    git(root, 'config', '--worktree', 'user.name', 'main only');
    const impl = nodeImplementer(`writeFileSync(join(wt, step + '.txt'), step + '\\n'); await sleep(200);`);
    const r = runJsonl(root, ['demo', '--workers', '3', '--implementer', impl.argv]);
    expect(r.events.at(-1), r.stdout + r.stderr).toMatchObject({ type: 'summary', status: 'ok' });
    expect(r.events.filter((e) => e.type === 'attempt_failed')).toEqual([]);
    expect(stepCommits(root, 'tugplan/demo').sort()).toEqual(['step-1', 'step-2', 'step-3', 'step-4', 'step-5']);
  });

  it('two workers whose implementers stay in their worktrees see no OutsideWrite from each other', () => {
    const root = runRepo(planText([step(1, 'A'), step(2, 'B'), step(3, 'C'), step(4, 'D', { deps: [1, 2, 3] })]));
    const impl = nodeImplementer(`writeFileSync(join(wt, step + '.txt'), step + '\\n'); await sleep(300);`);
    const r = runJsonl(root, ['demo', '--workers', '2', '--implementer', impl.argv]);
    expect(r.events.at(-1), r.stdout).toMatchObject({ type: 'summary', status: 'ok' });
    expect(r.events.filter((e) => e.type === 'attempt_failed')).toEqual([]);
  });

  it("the run's own output redirected to a file in the main checkout is no outside write", () => {
    // Two steps side by side: each implementer waits for the other's start, so the other worker's events
    // land in the output file while it runs.
    const root = runRepo(planText([step(1, 'One'), step(2, 'Two'), step(3, 'Three', { deps: [1, 2] })]));
    const impl = nodeImplementer(`
writeFileSync(join(wt, step + '.txt'), step + '\\n');
writeFileSync(join(dir, 'started-' + step), '');
const other = step === 'step-1' ? 'step-2' : 'step-1';
if (step !== 'step-3') while (!existsSync(join(dir, 'started-' + other))) await sleep(20);
`);
    // `tugcode run … --json > run.jsonl 2> run.err`, both untracked files the run writes while agents run.
    const out = openSync(join(root, 'run.jsonl'), 'w');
    const err = openSync(join(root, 'run.err'), 'w');
    const r = spawnSync(
      process.execPath,
      [CLI, 'run', 'demo', '--workers', '2', '--implementer', impl.argv, '--json'],
      {
        cwd: root,
        env: baseEnv(),
        stdio: ['ignore', out, err],
        timeout: 180_000,
      },
    );
    closeSync(out);
    closeSync(err);
    const events = parseLines(readFileSync(join(root, 'run.jsonl'), 'utf8'));
    expect(events.filter((e) => e.type === 'attempt_failed')).toEqual([]);
    expect(events.at(-1)).toMatchObject({ type: 'summary', status: 'ok', plan_done: true });
    expect(r.status).toBe(0);
  });
});

describe('OutsideWrite: the checkpoints inside the check', () => {
  // A checkpoint runs the step's code with the driver's rights: an agent confined to its worktree can
  // rewrite what it runs (docs/agents.md §1.6).
  const CHECK = `import { readFileSync } from 'node:fs';\nreadFileSync(process.argv[2]);\nconsole.log('CHECK OK');\n`;
  const CMD = 'node check.mjs step-1.txt';

  it('a checkpoint the agent rewrote to write into the main checkout: OutsideWrite naming it; a clean retry completes', () => {
    const root = runRepo(planText([step(1, 'Base', { checkpoint: CMD })]), 'demo', { 'check.mjs': CHECK });
    const impl = nodeImplementer(`
writeFileSync(join(wt, step + '.txt'), step + '\\n');
if (attempt === 1) {
  const stray = join(process.env.TUG_REPO_ROOT, 'stray-from-checkpoint.txt');
  writeFileSync(join(wt, 'check.mjs'), "import { writeFileSync } from 'node:fs';\\nwriteFileSync(" + JSON.stringify(stray) + ", 'x');\\nconsole.log('CHECK OK');\\n");
}
`);
    const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv]);
    const failed = r.events.filter((e) => e.type === 'attempt_failed');
    expect(
      failed.map((e) => [e.step_anchor, e.attempt, e.reason_code, e.reason]),
      r.stdout + r.stderr,
    ).toEqual([
      [
        'step-1',
        1,
        'OutsideWrite',
        `step-1: 1 thing(s) outside its worktree changed during the checkpoint \`${CMD}\`: stray-from-checkpoint.txt`,
      ],
    ]);
    // The failure names the checkpoint's own log.
    expect(failed[0].logs).toEqual(['.tugtool/logs/demo/step-1-checkpoint0-attempt1.log']);
    // Attempt 2 (the worktree reset, check.mjs as committed) completes; the run still ends in the error.
    expect(stepCommits(root, 'tugplan/demo')).toEqual(['step-1']);
    expect(r.code).toBe(4);
    expect(r.events.at(-1).error).toMatchObject({
      code: 'OutsideWrite',
      details: { by: `the checkpoint \`${CMD}\``, changed: ['stray-from-checkpoint.txt'] },
    });
    expect(r.events.at(-1).error.message).toBe(
      `things outside its worktree changed during the checkpoint \`${CMD}\` of step-1 (attempt 1): stray-from-checkpoint.txt`,
    );
    expect(readFileSync(join(root, 'stray-from-checkpoint.txt'), 'utf8')).toBe('x');
  });

  it('a checkpoint that plants a git hook stops the run claiming (GitDirChanged), as for the implementer', () => {
    const root = runRepo(planText([step(1, 'Base', { checkpoint: CMD }), step(2, 'Next', { deps: [1] })]), 'demo', {
      'check.mjs': CHECK,
    });
    const impl = nodeImplementer(`
import { execFileSync } from 'node:child_process';
writeFileSync(join(wt, step + '.txt'), step + '\\n');
if (step === 'step-1' && attempt === 1) {
  const common = execFileSync('git', ['rev-parse', '--path-format=absolute', '--git-common-dir'], { cwd: wt, encoding: 'utf8' }).trim();
  const hook = join(common, 'hooks', 'post-commit');
  writeFileSync(join(wt, 'check.mjs'), "import { writeFileSync } from 'node:fs';\\nwriteFileSync(" + JSON.stringify(hook) + ", '#!/bin/sh\\\\n', { mode: 0o755 });\\n");
}
`);
    const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv]);
    const failed = r.events.filter((e) => e.type === 'attempt_failed');
    expect(
      failed.map((e) => e.reason),
      r.stdout + r.stderr,
    ).toEqual([
      `step-1: 1 thing(s) outside its worktree changed during the checkpoint \`${CMD}\`: .git/hooks/post-commit`,
    ]);
    expect(r.events.filter((e) => e.type === 'claimed')).toHaveLength(1);
    const warning = r.events.find((e) => e.type === 'warning' && e.code === 'GitDirChanged');
    expect(warning?.message).toContain(`step-1: the git directory changed during the checkpoint \`${CMD}\``);
    expect(stepCommits(root, 'tugplan/demo')).toEqual([]);
    expect(r.code).toBe(4);
  });

  it('checkpoints that write only inside their worktree pass, one after another', () => {
    const write = `node -e "require('fs').writeFileSync('out-' + process.argv[1] + '.txt', 'ok')"`;
    const root = runRepo(
      planText([
        stepText({
          id: '1',
          title: 'Base',
          commit: 'feat: base',
          tasks: ['write base'],
          checkpoints: [`\`${CMD}\``, `\`${write} a\``, `\`${write} b\``],
        }),
      ]),
      'demo',
      { 'check.mjs': CHECK },
    );
    const impl = nodeImplementer(`writeFileSync(join(wt, step + '.txt'), step + '\\n');`);
    const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv]);
    expect(r.events.at(-1), r.stdout + r.stderr).toMatchObject({ type: 'summary', status: 'ok' });
    expect(r.events.filter((e) => e.type === 'attempt_failed')).toEqual([]);
    expect(git(root, 'show', 'tugplan/demo:out-b.txt')).toBe('ok');
  });
});

describe('OutsideWrite: the setup command inside the check', () => {
  it("a setup command whose script writes into the main checkout fails the attempt naming it; the retry's tree needs no setup", () => {
    // setup.mjs stands for tree code an earlier step's agent may have written (a package script, say).
    const setup = `import { writeFileSync } from 'node:fs';\nimport { join } from 'node:path';\nwriteFileSync(join(process.cwd(), '..', '..', 'stray-from-setup.txt'), 'x');\nconsole.log('installing');\n`;
    const root = runRepo(planText([step(1, 'Base')]), 'demo', {
      'setup.mjs': setup,
      '.tugtool/config.toml': '[run]\nsetup_command = ["node", "setup.mjs"]\n',
    });
    const impl = nodeImplementer(`writeFileSync(join(wt, step + '.txt'), step + '\\n');`);
    const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv]);
    const failed = r.events.filter((e) => e.type === 'attempt_failed');
    expect(
      failed.map((e) => [e.attempt, e.reason_code, e.reason]),
      r.stdout + r.stderr,
    ).toEqual([
      [
        1,
        'OutsideWrite',
        'step-1: 1 thing(s) outside its worktree changed during the setup command `node setup.mjs`: stray-from-setup.txt',
      ],
    ]);
    expect(stepCommits(root, 'tugplan/demo')).toEqual(['step-1']);
    expect(r.code).toBe(4);
    expect(r.events.at(-1).error.details).toMatchObject({ by: 'the setup command `node setup.mjs`', command: 'setup' });
    // Worded as the attempt's reason: the change came during the setup, not necessarily of its making.
    expect(r.events.at(-1).error.message).toBe(
      'things outside its worktree changed during the setup command `node setup.mjs` of step-1 (attempt 1): stray-from-setup.txt',
    );
    // Its output is recorded as a verification's, as a checkpoint's, not as the implementer's report.
    const artifacts = sql<{ kind: string; content: string }>(
      root,
      `SELECT kind, content FROM step_artifacts WHERE step_anchor = 'step-1' ORDER BY id`,
    );
    expect(artifacts.map((a) => a.kind)).toEqual(['verification_report']);
    expect(artifacts[0]!.content).toContain('installing');
  });

  it('a setup that fails and writes outside ends the run as a failed setup (InvalidArgument), naming the write', () => {
    const setup = `import { writeFileSync } from 'node:fs';\nimport { join } from 'node:path';\nwriteFileSync(join(process.cwd(), '..', '..', 'stray-from-setup.txt'), 'x');\nconsole.log('setup broke');\nprocess.exit(1);\n`;
    const root = runRepo(planText([step(1, 'Base'), step(2, 'Next', { deps: [1] })]), 'demo', {
      'setup.mjs': setup,
      '.tugtool/config.toml': '[run]\nsetup_command = ["node", "setup.mjs"]\n',
    });
    const impl = nodeImplementer(`writeFileSync(join(wt, step + '.txt'), step + '\\n');`);
    const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv]);
    // No attempt failed and none went on in the tree whose setup failed: the run stopped.
    expect(
      r.events.filter((e) => e.type === 'attempt_failed'),
      r.stdout + r.stderr,
    ).toEqual([]);
    expect(r.events.filter((e) => e.type === 'claimed')).toHaveLength(1);
    expect(r.events.filter((e) => e.type === 'phase' && e.phase === 'implementer')).toEqual([]);
    expect(stepCommits(root, 'tugplan/demo')).toEqual([]);
    expect(r.code).toBe(2);
    const error = r.events.at(-1).error;
    expect(error.code).toBe('InvalidArgument');
    expect(error.message).toContain('run.setup_command failed in ');
    expect(error.message).toContain(
      ': setup broke; step-1: 1 thing(s) outside its worktree changed during the setup command `node setup.mjs`: stray-from-setup.txt',
    );
    expect(readFileSync(join(root, 'stray-from-setup.txt'), 'utf8')).toBe('x');
  });

  it("a setup that sets git config (husky's core.hooksPath): GitDirChanged, and the hint says to run it once in the main checkout", () => {
    const root = runRepo(planText([step(1, 'Base'), step(2, 'Next', { deps: [1] })]), 'demo', {
      '.tugtool/config.toml': '[run]\nsetup_command = ["git", "config", "core.hooksPath", ".husky"]\n',
    });
    const impl = nodeImplementer(`writeFileSync(join(wt, step + '.txt'), step + '\\n');`);
    const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv]);
    const by = 'the setup command `git config core.hooksPath .husky`';
    expect(
      r.events.filter((e) => e.type === 'attempt_failed').map((e) => e.reason),
      r.stdout + r.stderr,
    ).toEqual([`step-1: 1 thing(s) outside its worktree changed during ${by}: .git/config: core.hookspath`]);
    const warning = r.events.find((e) => e.type === 'warning' && e.code === 'GitDirChanged');
    expect(warning?.message).toContain(`step-1: the git directory changed during ${by}`);
    expect(warning?.message).toContain('run it once in the main checkout, then run again');
    expect(r.events.filter((e) => e.type === 'claimed')).toHaveLength(1);
    expect(r.code).toBe(4);
    const error = r.events.at(-1).error;
    expect(error).toMatchObject({ code: 'OutsideWrite', details: { by, command: 'setup' } });
    expect(error.message).toBe(
      `things outside its worktree changed during ${by} of step-1 (attempt 1): .git/config: core.hookspath`,
    );
    expect(error.hint).toMatch(
      /^a setup that sets git config or hooks \(husky, pre-commit, git lfs install\): run it once in the main checkout, then run again/,
    );
  });
});

describe('StepCompletedElsewhere', () => {
  it('an implementer that completes its own step: reported, not a silent claim_lost; the work is kept', () => {
    const root = runRepo(planText([step(1, 'Base')]), 'demo', ONE);
    const impl = nodeImplementer(`
import { execFileSync } from 'node:child_process';
writeFileSync(join(wt, 'work.txt'), 'the work\\n');
execFileSync(process.execPath, [${JSON.stringify(CLI)}, 'state', 'complete', process.env.TUG_PLAN, step,
  '--worktree', wt, '--attempt', String(attempt), '--force', 'done by the implementer'], { cwd: wt });
`);
    const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv]);
    const lost = r.events.filter((e) => e.type === 'claim_lost');
    expect(lost, r.stdout + r.stderr).toEqual([
      expect.objectContaining({
        step_anchor: 'step-1',
        error_code: 'StepCompletedElsewhere',
        kept_commit: expect.any(String),
      }),
    ]);
    const kept = lost[0].kept_commit as string;
    expect(git(root, 'show', `${kept}:work.txt`)).toBe('the work\n');
    expect(git(root, 'rev-parse', 'refs/tugplan/kept/demo/step-1/attempt1').trim()).toBe(kept);
    expect(r.code).toBe(4);
    expect(r.events.at(-1)).toMatchObject({
      type: 'summary',
      status: 'error',
      error: { code: 'StepCompletedElsewhere', details: { step_anchor: 'step-1', kept_commit: kept } },
    });
  });
});

describe('StepCompletedElsewhere by the implementer itself', () => {
  it('an implementer that runs tugcode commit: the message says it was its own worktree and what to change', () => {
    const root = runRepo(planText([step(1, 'Base')]), 'demo', ONE);
    const impl = nodeImplementer(`
import { execFileSync } from 'node:child_process';
writeFileSync(join(wt, 'work.txt'), 'the work\\n');
const tug = (...a) => execFileSync(process.execPath, [${JSON.stringify(CLI)}, ...a], { cwd: wt });
tug('state', 'update', process.env.TUG_PLAN, step, '--worktree', wt, '--attempt', String(attempt), '--complete-remaining');
tug('commit', '--plan', process.env.TUG_PLAN, '--step', step, '--attempt', String(attempt), '--message', 'by the implementer');
`);
    const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv]);
    expect(r.code, r.stdout + r.stderr).toBe(4);
    const error = r.events.at(-1).error;
    const onBranch = git(root, 'rev-parse', 'tugplan/demo').trim();
    expect(error).toMatchObject({
      code: 'StepCompletedElsewhere',
      details: { step_anchor: 'step-1', own_worktree: true, kept_commit: onBranch, kept_integrated: true },
    });
    expect(error.message).toBe(
      `step-1 was completed from its own worktree while attempt 1 ran (its implementer ran tugcode commit or ` +
        `state complete itself); its commit ${onBranch} is on tugplan/demo`,
    );
    expect(error.hint).toBe(
      'the driver commits, integrates and completes each step; an implementer only edits files ' +
        '(docs/run.md §2): take tugcode commit and state complete out of it',
    );
  });
  it('the summary agrees with the exit status: the step is named as completed outside the driver, not "nothing to run"', () => {
    const plan = planText([step(1, 'One'), step(2, 'Two', { deps: [1] }), step(3, 'Three', { deps: [2] })]);
    const root = runRepo(plan, 'demo', ONE);
    const impl = nodeImplementer(`
import { execFileSync } from 'node:child_process';
writeFileSync(join(wt, step + '.txt'), 'the work\\n');
const tug = (...a) => execFileSync(process.execPath, [${JSON.stringify(CLI)}, ...a], { cwd: wt });
tug('state', 'update', process.env.TUG_PLAN, step, '--worktree', wt, '--attempt', String(attempt), '--complete-remaining');
tug('commit', '--plan', process.env.TUG_PLAN, '--step', step, '--attempt', String(attempt), '--message', 'by the implementer');
`);
    const r = runCli(['run', 'demo', '--workers', '1', '--implementer', impl.argv], { cwd: root });
    expect(r.code, r.stdout + r.stderr).toBe(4);
    expect(r.stderr).toContain('tugcode: StepCompletedElsewhere: ');
    expect(r.stdout).not.toContain('nothing to run');
    expect(r.stdout).not.toContain('already completed');
    // --complete-remaining completes every step: each attempt's implementer did it again.
    for (const a of ['step-1', 'step-2', 'step-3'])
      expect(r.stdout).toMatch(
        new RegExp(`${a}\\s+completed outside\\s+by its own implementer \\(tugcode commit or state complete\\)`),
      );
    expect(r.stdout).toMatch(
      /\nplan done, but the run ended StepCompletedElsewhere: 0 completed by the driver, 3 completed outside it · 0 commits/,
    );
    // The JSON summary says the same.
    const root2 = runRepo(plan, 'demo', ONE);
    const j = runJsonl(root2, ['demo', '--workers', '1', '--implementer', impl.argv]);
    const summary = j.events.at(-1);
    expect(summary).toMatchObject({ status: 'error', steps_completed: [] });
    expect(summary.already_completed).toBeUndefined();
    expect(summary.completed_outside.map((c: { step_anchor: string }) => c.step_anchor)).toEqual([
      'step-1',
      'step-2',
      'step-3',
    ]);
    expect(summary.completed_outside.at(-1)).toEqual({
      step_anchor: 'step-3',
      own_worktree: true,
      kept_commit: git(root2, 'rev-parse', 'tugplan/demo').trim(),
    });
  });
});
