/**
 * `tugcode commit` of a step whose `**Refactors:**` rows are not applied yet (docs/git.md §4, docs/kernel.md
 * §7.4): refused before anything is written (RefactorsIncomplete, exit 4), its hint the run-step and then the
 * same commit again. Committed first, the step would complete with a commit lacking the rename and its
 * `Tug-Refactor` trailer, the rename left uncommitted in the worktree, and merge would ship without it.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { shellArg } from '../../src/util/shell-arg.js';
import { CLI, expectError, runCli, runJson } from '../helpers/cli.js';
import { initializedRepo, planText } from '../helpers/plan.js';
import { git, writeFiles } from '../helpers/repo.js';
import { runRefactorCli } from '../refactor/helpers.js';

const PLAN_PATH = '.tugtool/tugplan-rf.md';
const RENAME = 'rename-symbol --symbol src/currency.ts::CURRENCY --to SHOP_CURRENCY';
const FILES = {
  'tsconfig.json': JSON.stringify({
    compilerOptions: { strict: true, target: 'ES2022', module: 'ESNext', moduleResolution: 'Bundler', noEmit: true },
  }),
  'src/currency.ts': "export const CURRENCY = 'EUR';\n",
  'src/price.ts': "import { CURRENCY } from './currency';\n\nexport const label = (n: number) => `${n} ${CURRENCY}`;\n",
};

/** Runs a command line as a user would, `tugcode` being the built CLI. */
function runAsUser(command: string, cwd: string): string {
  const r = spawnSync('sh', ['-c', `tugcode() { node ${shellArg(CLI)} "$@"; }\n${command}`], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, NODE_ENV: 'test', NO_COLOR: '1' },
  });
  expect(r.status, r.stdout + r.stderr).toBe(0);
  return r.stdout;
}

/** The brief's repro: a worktree from `worktree create`, the step claimed, started, edited, its items done. */
function editedStep(): { root: string; wt: string; attempt: number } {
  const plan = planText([
    { id: '1', title: 'Rename', commit: 'refactor: x', tasks: ['rename it'], refactors: [RENAME] },
  ]);
  const root = initializedRepo(plan, 'rf', FILES);
  const wt = runJson('worktree create', ['worktree', 'create', 'rf', '--reuse'], { cwd: root }).json.worktree_path;
  const claim = runJson('state claim', ['state', 'claim', 'rf', '--worktree', wt], { cwd: root }).json;
  expect(claim).toMatchObject({ claimed: true, step_anchor: 'step-1' });
  const attempt = String(claim.attempt);
  runJson('state start', ['state', 'start', 'rf', 'step-1', '--worktree', wt, '--attempt', attempt], { cwd: root });
  writeFiles(wt, { 'src/extra.ts': 'export const extra = 1;\n' });
  runJson(
    'state update',
    ['state', 'update', 'rf', 'step-1', '--worktree', wt, '--attempt', attempt, '--complete-remaining'],
    { cwd: root },
  );
  return { root, wt, attempt: claim.attempt };
}

const commitArgs = (wt: string, attempt: number, ...more: string[]) => [
  'commit',
  '--worktree',
  wt,
  '--plan',
  'rf',
  '--step',
  'step-1',
  '--attempt',
  String(attempt),
  '--message-file',
  '-',
  ...more,
];

describe('commit of a step with refactor rows not applied', () => {
  it('refuses before committing (nothing changed); the hint, run as written, applies the refactor and commits it with its trailer', () => {
    const { root, wt, attempt } = editedStep();
    const head = git(wt, 'rev-parse', 'HEAD').trim();
    const status = git(wt, 'status', '--porcelain');

    const r = runCli([...commitArgs(wt, attempt), '--json'], { cwd: root, input: 'refactor: x' });
    expectError(r, 'RefactorsIncomplete', 4);
    expect(r.json.error.message).toContain('nothing was committed');
    expect(r.json.error.details.open_refactors).toEqual([{ ordinal: 0, op_text: RENAME, status: 'open' }]);
    // Nothing changed: no commit, no log entry, the step still in progress.
    expect(git(wt, 'rev-parse', 'HEAD').trim()).toBe(head);
    expect(git(wt, 'status', '--porcelain')).toBe(status);
    expect(existsSync(join(wt, '.tugtool/implementation-log/rf/step-1.md'))).toBe(false);
    const shown = runJson('state show', ['state', 'show', 'rf'], { cwd: root }).json;
    expect(shown.plans[0].steps[0].status).toBe('in_progress');

    const hint: string = r.json.error.hint;
    expect(hint).toBe(
      `tugcode refactor run-step ${PLAN_PATH} step-1 --worktree ${wt} --attempt ${attempt} && ` +
        `tugcode commit --worktree ${wt} --plan ${PLAN_PATH} --step step-1 --attempt ${attempt} --message 'refactor: x'`,
    );

    const out = runAsUser(hint, root);
    expect(out).toContain('state: step completed');
    // The step's commit has the rename, the coder's edit and the Tug-Refactor trailer; nothing is left over.
    expect(git(wt, 'status', '--porcelain', '--', 'src')).toBe('');
    expect(git(wt, 'show', 'HEAD:src/currency.ts')).toContain('SHOP_CURRENCY');
    expect(git(wt, 'show', 'HEAD:src/price.ts')).toContain('SHOP_CURRENCY');
    expect(git(wt, 'show', 'HEAD:src/extra.ts')).toContain('extra');
    expect(git(wt, 'rev-list', '--count', `${head}..HEAD`).trim()).toBe('1');
    const trailers = git(wt, 'log', '-1', '--format=%(trailers:key=Tug-Refactor,valueonly)').trim();
    expect(trailers).toMatch(/^\S+ \S+\.\.\S+$/);
    expect(readFileSync(join(wt, 'src/currency.ts'), 'utf8')).toContain('SHOP_CURRENCY');
    const after = runJson('state show', ['state', 'show', 'rf'], { cwd: root }).json.plans[0].steps[0];
    expect(after.status).toBe('completed');
    expect(after.commit_hash).toBe(git(wt, 'rev-parse', 'HEAD').trim());
  });

  it('a skipped refactor row lets the commit through (no Tug-Refactor trailer)', () => {
    const { root, wt, attempt } = editedStep();
    const skip = runRefactorCli(
      ['skip', 'rf', 'step-1', '--worktree', wt, '--ordinal', '0', '--reason', 'by hand'],
      root,
    );
    expect(skip.code).toBe(0);
    const r = runJson('commit', commitArgs(wt, attempt), { cwd: root, input: 'refactor: x' });
    expect(r.json).toMatchObject({ committed: true, state_updated: true, state_update_failed: false });
    expect(git(wt, 'log', '-1', '--format=%(trailers:key=Tug-Refactor)').trim()).toBe('');
  });
});
