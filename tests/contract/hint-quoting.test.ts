/**
 * Hints are commands an agent runs (docs/AGENT_API.md: "run `error.hint` when it is a command"), so a plan
 * path or worktree path in a hint is one shell argument however it is spelled: a space, a quote or a `$`
 * is shell-quoted, a plain path stays exactly as it is, and a placeholder like `<plan>` is left for the reader.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { shellArg } from '../../src/util/shell-arg.js';
import { CATALOGUE } from '../../src/contract/errors.js';
import { CLI, runJson } from '../helpers/cli.js';
import { git, tempDir } from '../helpers/repo.js';
import { DEMO, DEMO_PATH, at, planRepo } from '../state/helpers.js';
import { st } from '../state/cli-helpers.js';

/** Runs `script` in sh with `tugcode` and `git` as functions; returns what they would have run. */
function shell(script: string, fns: Record<string, string>, cwd?: string, env: Record<string, string> = {}) {
  const defs = Object.entries(fns)
    .map(([name, body]) => `${name}() { ${body}; }`)
    .join('\n');
  const r = spawnSync('sh', ['-c', `${defs}\n${script}`], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, NODE_ENV: 'test', NO_COLOR: '1', ...env },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The words sh reads in a hint's command (`tugcode` and `git` only print their arguments). */
function words(command: string): string[] {
  const print = `printf '%s\\0' "$0" "$@"`;
  const r = shell(command, { tugcode: print.replace('"$0"', 'tugcode'), git: print.replace('"$0"', 'git') });
  expect(r.code, `${command}\n${r.stderr}`).toBe(0);
  return r.stdout.split('\0').slice(0, -1);
}

/** A hint's command: what follows `…: `, before a `   (comment)`. */
function commandOf(hint: string): string {
  return hint.replace(/^[^:]*: (?=tugcode |git )/, '').split('   (')[0]!;
}

/** Runs a hint's command with `tugcode` being the built CLI, `--json` appended; returns the envelope. */
function runHint(command: string, cwd: string, now: string): any {
  const r = shell(`${command} --json`, { tugcode: `node ${shellArg(CLI)} "$@"` }, cwd, { TUGCODE_NOW: now });
  return JSON.parse(r.stdout);
}

const NASTY = ["my plans/b's plan.md", 'a b', "it's", 'x"y', '$HOME', '`id`', '*', 'a\\b', '~x', '', 'a;b', 'x\ny'];

describe('shellArg', () => {
  it('leaves plain paths and placeholders exactly as they are', () => {
    for (const p of ['.tugtool/tugplan-demo.md', '/tmp/x/wt-1', 'step-1-2', 'origin/main', 'a@b:c,d=e+f%', 'plän.md'])
      expect(shellArg(p)).toBe(p);
    for (const p of ['<plan>', '<state.db>', '<wt>', '<your worktree>']) expect(shellArg(p)).toBe(p);
  });

  it('quotes anything else so that sh reads back the same single argument', () => {
    expect(shellArg("my plans/b's plan.md")).toBe(`'my plans/b'\\''s plan.md'`);
    for (const p of NASTY) {
      expect(shellArg(p)).not.toBe(p);
      expect(words(`tugcode ${shellArg(p)}`), p).toEqual(['tugcode', p]);
    }
  });

  it('quotes the arguments of catalogue hints but leaves their placeholders alone', () => {
    const d = { plan_path: "my plans/b's plan.md", step_anchor: 'step-1', worktree: '/tmp/wt b' };
    expect(words(CATALOGUE.PlanDrift.hint(d))).toEqual(['tugcode', 'state', 'init', d.plan_path, '--force']);
    expect(words(CATALOGUE.PlanDrift.hint({ ...d, read_from: d.worktree }))).toEqual([
      'tugcode',
      '-C',
      d.worktree,
      'state',
      'init',
      d.plan_path,
      '--force',
    ]);
    expect(words(commandOf(CATALOGUE.LeaseExpired.hint(d)))).toEqual([
      'tugcode',
      'state',
      'claim',
      d.plan_path,
      '--worktree',
      d.worktree,
    ]);
    expect(words(CATALOGUE.PlanNotCommitted.hint(d).split(' && ')[0]!)).toEqual(['git', 'add', d.plan_path]);
    expect(CATALOGUE.StepNotFound.hint({})).toBe('tugcode state show <plan>');
    expect(CATALOGUE.LeaseExpired.hint({})).toBe(
      'drop this step and claim again: tugcode state claim <plan> --worktree <wt>',
    );
    expect(CATALOGUE.StepNotFound.hint({ plan_path: DEMO_PATH })).toBe(`tugcode state show ${DEMO_PATH}`);
  });
});

describe('hints through the CLI name a plan and a worktree with spaces and quotes as one argument each', () => {
  // A valid plan name (tugplan-<slug>.md, docs/plan-format.md) in a directory whose name needs quoting.
  const PLAN = "my plans/b's/tugplan-hq.md";

  /** A repo whose plan path has a space and a quote, and a linked worktree whose path has both too. */
  function setup() {
    const root = planRepo({ [PLAN]: DEMO, [DEMO_PATH]: DEMO });
    const wt = join(tempDir('tugcode-hq-'), "wt b's dir");
    git(root, 'worktree', 'add', '-q', wt, '-b', 'wb');
    const other = join(tempDir('tugcode-hq-'), 'wt-2');
    git(root, 'worktree', 'add', '-q', other, '-b', 'wc');
    return { root, wt, other };
  }

  const hintOf = (r: { json: any; stdout: string; stderr: string }, code: string): string => {
    expect(r.json?.error?.code, r.stdout + r.stderr).toBe(code);
    return r.json.error.hint as string;
  };

  it('PlanNotInitialized, StepNotFound, NotOwner, LeaseExpired, ChecklistIncomplete, PlanDrift', () => {
    const { root, wt, other } = setup();

    // PlanNotInitialized: the hint, run as written, initializes the plan.
    const notInit = hintOf(st(root, ['show', PLAN]), 'PlanNotInitialized');
    expect(words(notInit)).toEqual(['tugcode', 'state', 'init', PLAN]);
    expect(runHint(notInit, root, at(0)).status).toBe('ok');
    expect(st(root, ['show', PLAN]).json.status).toBe('ok');

    // StepNotFound: the hint shows the plan.
    const noStep = hintOf(st(root, ['start', PLAN, 'step-99', '--worktree', wt]), 'StepNotFound');
    expect(words(noStep)).toEqual(['tugcode', 'state', 'show', PLAN]);
    expect(runHint(noStep, root, at(0)).status).toBe('ok');

    // NotOwner: the plan is one argument, the placeholder is left to fill.
    expect(st(root, ['claim', PLAN, '--worktree', wt]).json.status).toBe('ok');
    const notOwner = hintOf(st(root, ['start', PLAN, 'step-0', '--worktree', other]), 'NotOwner');
    expect(notOwner).toContain('--worktree <your worktree>');
    expect(words(notOwner.replace('<your worktree>', shellArg(other)))).toEqual([
      'tugcode',
      'state',
      'claim',
      PLAN,
      '--worktree',
      other,
    ]);

    // ChecklistIncomplete: plan, step and the caller's worktree are arguments.
    const open = hintOf(st(root, ['complete', PLAN, 'step-0', '--worktree', wt]), 'ChecklistIncomplete');
    expect(words(commandOf(open))).toEqual([
      'tugcode',
      'state',
      'update',
      PLAN,
      'step-0',
      '--worktree',
      wt,
      '--complete-remaining',
    ]);

    // LeaseExpired: the worktree path (a space and an unbalanced quote) is one argument, and the command runs.
    const later = at(3 * 3600);
    expect(st(root, ['claim', PLAN, '--worktree', other, '--step', 'step-0'], { now: later }).json.status).toBe('ok');
    const expired = hintOf(st(root, ['heartbeat', PLAN, 'step-0', '--worktree', wt], { now: later }), 'LeaseExpired');
    expect(words(commandOf(expired))).toEqual(['tugcode', 'state', 'claim', PLAN, '--worktree', wt]);
    // step-0 is now the other worktree's and the rest waits on it: the claim runs and finds nothing ready.
    expect(runHint(commandOf(expired), root, later)).toMatchObject({
      status: 'ok',
      command: 'state claim',
      claimed: false,
    });

    // PlanDrift: the plan changed its structure in the worktree.
    const file = join(other, PLAN);
    writeFileSync(file, readFileSync(file, 'utf8') + '\n#### Step 9: Extra {#step-9}\n\n**Tasks:**\n- [ ] more\n');
    const drift = hintOf(
      st(root, ['update', PLAN, 'step-0', '--worktree', other, '--all', 'completed'], { now: later }),
      'PlanDrift',
    );
    // Read from `other`, not from where the update ran: the hint's init reads that copy (-C), from anywhere.
    expect(words(drift)).toEqual(['tugcode', '-C', other, 'state', 'init', PLAN, '--force']);
    expect(runHint(drift, root, later).status).toBe('ok');
  });

  it("the substep hint of release names plan, step and the caller's worktree as arguments", () => {
    const { root, wt } = setup();
    st(root, ['init', PLAN]);
    const sub = st(root, ['release', PLAN, 'step-1-1', '--worktree', wt]);
    expect(sub.json?.error?.code, sub.stdout).toBe('InvalidArgument');
    // The owner's --worktree is kept, so the hint works from wherever it is run (the main root included).
    expect(words(sub.json.error.hint)).toEqual(['tugcode', 'state', 'release', PLAN, 'step-1', '--worktree', wt]);
  });

  it('the git command of worktree remove names a worktree outside .tugtree/ as one argument, and runs', () => {
    const { root, wt } = setup();
    const r = runJson('worktree remove', ['worktree', 'remove', wt], { cwd: root });
    const hint = hintOf(r, 'WorktreeNotFound');
    expect(words(commandOf(hint))).toEqual(['git', 'worktree', 'remove', wt]);
    expect(shell(commandOf(hint), {}, root).code).toBe(0);
    expect(existsSync(wt)).toBe(false);
  });

  it('keeps the hints of plain paths exactly as before', () => {
    const root = planRepo();
    const wt = join(tempDir('tugcode-hq-'), 'wt-1');
    git(root, 'worktree', 'add', '-q', wt, '-b', 'wd');
    expect(hintOf(st(root, ['show', 'demo']), 'PlanNotInitialized')).toBe(`tugcode state init ${DEMO_PATH}`);
    st(root, ['init', 'demo']);
    st(root, ['claim', 'demo', '--worktree', wt]);
    st(root, ['claim', 'demo', '--worktree', root, '--step', 'step-0'], { now: at(3 * 3600) });
    const expired = st(root, ['heartbeat', 'demo', 'step-0', '--worktree', wt], { now: at(3 * 3600) });
    expect(hintOf(expired, 'LeaseExpired')).toBe(
      `drop this step and claim again: tugcode state claim ${DEMO_PATH} --worktree ${wt}`,
    );
  });
});
