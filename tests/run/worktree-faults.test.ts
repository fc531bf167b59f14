/**
 * Faults in a worker's worktree that the run rides out (docs/run.md §1 item 4.9): the worktree removed
 * mid-step, its `.git` file deleted, a stale `index.lock`, a killed implementer, a hanging git hook, and the
 * implementer's state.db when TUGCODE_STATE_DB is relative. Each fails the attempt with a reason that says
 * what happened (never a run-wide error, never git acting on the main checkout), and the run goes on.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI } from '../helpers/cli.js';
import { git, tempDir } from '../helpers/repo.js';
import {
  implementerScript,
  nodeImplementer,
  planText,
  runJsonl,
  runRepo,
  step,
  stepCommits,
  tugJson,
} from './helpers.js';

const PLAN = '.tugtool/tugplan-demo.md';
const TWO = planText([step(1, 'One'), step(2, 'Two', { deps: [1] })]);

/** Whether `pid` runs (a zombie does not count). */
function liveProcess(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

const failures = (events: any[]) => events.filter((e) => e.type === 'attempt_failed');

describe('worker worktree faults', () => {
  it('a worktree removed mid-step fails that attempt (WorktreeBroken), is made again, and the run finishes', () => {
    const root = runRepo(TWO);
    const impl = nodeImplementer(`
if (step === 'step-1' && attempt === 1) { (await import('node:fs')).rmSync(wt, { recursive: true, force: true }); process.exit(0); }
writeFileSync(join(wt, step + '.txt'), step + '\\n');`);
    const r = runJsonl(root, [PLAN, '--workers', '1', '--implementer', impl.argv]);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const [f] = failures(r.events);
    expect(f).toMatchObject({ step_anchor: 'step-1', attempt: 1, reason_code: 'WorktreeBroken' });
    expect(f.reason).toMatch(/is gone/);
    expect(stepCommits(root, 'tugplan/demo')).toEqual(['step-1', 'step-2']);
  });

  it('an implementer that deletes its `.git` file: no git runs on the main checkout; the tree is made again', () => {
    const root = runRepo(TWO, 'demo', { 'user.txt': 'committed\n' });
    // The user's own uncommitted work in the main checkout: a staged change and an untracked file.
    writeFileSync(join(root, 'user.txt'), 'staged edit\n');
    git(root, 'add', 'user.txt');
    writeFileSync(join(root, 'notes.txt'), 'mine\n');
    const mainHead = git(root, 'rev-parse', 'main');
    const statusBefore = git(root, 'status', '--porcelain');
    const impl = nodeImplementer(`
if (step === 'step-1' && attempt === 1) { (await import('node:fs')).rmSync(join(wt, '.git')); writeFileSync(join(wt, 'stray.txt'), 'x\\n'); process.exit(0); }
writeFileSync(join(wt, step + '.txt'), step + '\\n');`);
    const r = runJsonl(root, [PLAN, '--workers', '1', '--implementer', impl.argv]);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const [f] = failures(r.events);
    expect(f).toMatchObject({ step_anchor: 'step-1', reason_code: 'WorktreeBroken' });
    expect(f.reason).toMatch(/\.git is missing/);
    expect(git(root, 'rev-parse', 'main')).toBe(mainHead);
    expect(git(root, 'status', '--porcelain')).toBe(statusBefore);
    expect(readFileSync(join(root, 'user.txt'), 'utf8')).toBe('staged edit\n');
    expect(stepCommits(root, 'tugplan/demo')).toEqual(['step-1', 'step-2']);
    expect(git(root, 'ls-tree', '--name-only', 'tugplan/demo')).not.toContain('stray.txt');
  });

  it('a stale index.lock fails the attempt naming the file and the fix; a later run removes it', () => {
    const root = runRepo(planText([step(1, 'One')]), 'demo', { '.tugtool/config.toml': '[state]\nmax_attempts = 2\n' });
    const impl = nodeImplementer(`
if (!existsSync(join(dir, 'locked'))) {
  writeFileSync(join(dir, 'locked'), '');
  const { execFileSync } = await import('node:child_process');
  const lock = execFileSync('git', ['rev-parse', '--path-format=absolute', '--git-path', 'index.lock'], { cwd: wt, encoding: 'utf8' }).trim();
  writeFileSync(lock, '');
}
writeFileSync(join(wt, step + '.txt'), step + '\\n');`);
    const r = runJsonl(root, [PLAN, '--workers', '1', '--implementer', impl.argv]);
    // The step failed at its cap, with the lock named: not HookFailed, not a run-wide GitError.
    expect(r.code, r.stderr + r.stdout).toBe(4);
    const summary = r.events.at(-1);
    expect(summary.error.code).toBe('PlanIncomplete');
    const fs = failures(r.events);
    expect(fs.length).toBeGreaterThan(0);
    for (const f of fs) {
      expect(f.reason_code).toBe('WorktreeBroken');
      expect(f.reason).toMatch(/index\.lock exists/);
      expect(f.reason).toMatch(/rm \S*index\.lock/);
    }
    const lock = join(root, '.git', 'worktrees', 'tugplan__demo--w1', 'index.lock');
    expect(existsSync(lock)).toBe(true);
    // Older than the next run, held by no process: that run removes it and finishes.
    const old = new Date(Date.now() - 60_000);
    utimesSync(lock, old, old);
    expect(tugJson(root, ['state', 'reset', PLAN, 'step-1', '--force']).code).toBe(0);
    // In text mode, so the removal is said (a warning on stderr), not done silently.
    const again = spawnSync(process.execPath, [CLI, 'run', PLAN, '--workers', '1', '--implementer', impl.argv], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, NO_COLOR: '1' },
    });
    expect(again.status, again.stderr + again.stdout).toBe(0);
    expect(again.stderr).toMatch(/warning: StaleIndexLock: removed \S*index\.lock/);
    // As it happens too, as every warning the run raises (docs/errors.md: Warnings).
    expect(again.stdout).toMatch(/warning: StaleIndexLock: removed \S*index\.lock/);
    expect(existsSync(lock)).toBe(false);
    expect(stepCommits(root, 'tugplan/demo')).toEqual(['step-1']);
  });

  it("a stale lock of a worker branch's ref (a git killed by a signal left it) is removed by the next run, which finishes", () => {
    // Found by the fault injection: a SIGTERM mid-reset left refs/heads/tugplan/demo--w1.lock, and every
    // later run died on it with GitError (exit 10).
    const root = runRepo(planText([step(1, 'One'), step(2, 'Two', { deps: [1] })]), 'demo');
    const impl = implementerScript();
    writeFileSync(join(impl.failDir, 'step-2'), '9');
    const first = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv]);
    expect(stepCommits(root, 'tugplan/demo'), first.stderr).toEqual(['step-1']);
    rmSync(join(impl.failDir, 'step-2'));
    expect(tugJson(root, ['state', 'reset', PLAN, 'step-2', '--force']).code).toBe(0);
    const lock = join(root, '.git', 'refs', 'heads', 'tugplan', 'demo--w1.lock');
    writeFileSync(lock, '');
    const old = new Date(Date.now() - 60_000);
    utimesSync(lock, old, old);
    const again = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.events.filter((e) => e.type === 'warning').map((e) => [e.code, e.message])).toContainEqual([
      'StaleIndexLock',
      `removed ${lock}, left by a git that is gone`,
    ]);
    expect(existsSync(lock)).toBe(false);
    expect(stepCommits(root, 'tugplan/demo')).toEqual(['step-1', 'step-2']);
  });

  it("a killed implementer's reason names the signal", () => {
    const root = runRepo(planText([step(1, 'One')]), 'demo', { '.tugtool/config.toml': '[state]\nmax_attempts = 1\n' });
    const impl = nodeImplementer(`process.kill(process.pid, 'SIGKILL');`);
    const r = runJsonl(root, [PLAN, '--workers', '1', '--implementer', impl.argv]);
    expect(r.code).toBe(4);
    const [f] = failures(r.events);
    expect(f.reason_code).toBe('ImplementerFailed');
    expect(f.reason).toMatch(/the implementer killed by SIGKILL/);
    expect(f.reason).not.toMatch(/exited null/);
  });

  it('a hanging pre-commit hook counts against --step-timeout and is killed with its process group', () => {
    const root = runRepo(planText([step(1, 'One')]), 'demo', { '.tugtool/config.toml': '[state]\nmax_attempts = 1\n' });
    const pidFile = join(tempDir(), 'hook.pid');
    const hook = join(root, '.git', 'hooks', 'pre-commit');
    mkdirSync(join(root, '.git', 'hooks'), { recursive: true });
    writeFileSync(hook, `#!/bin/sh\necho $$ > '${pidFile}'\nexec sleep 60\n`);
    chmodSync(hook, 0o755);
    const impl = nodeImplementer(`writeFileSync(join(wt, step + '.txt'), step + '\\n');`);
    const t = Date.now();
    const r = runJsonl(root, [PLAN, '--workers', '1', '--step-timeout', '3', '--implementer', impl.argv]);
    expect(Date.now() - t).toBeLessThan(30_000);
    expect(r.code, r.stderr + r.stdout).toBe(4);
    const [f] = failures(r.events);
    expect(f.reason_code).toBe('StepTimeout');
    expect(f.reason).toMatch(/git commit \(or a hook it ran\) took longer/);
    const hookPid = Number(readFileSync(pidFile, 'utf8'));
    // The hook (now `sleep 60`) is gone: no such process, or a zombie waiting to be reaped.
    expect(liveProcess(hookPid)).toBe(false);
  });

  it('a hanging pre-rebase hook at integration counts against --step-timeout: the attempt fails, its retry lands', () => {
    // Two steps that run together edit the same file at opposite ends: the second to finish cannot move onto the
    // new tip before committing (a file changed on both sides), so its integration rebases, and the hook runs.
    const lines = Array.from({ length: 12 }, (_, i) => `line ${i + 1}`).join('\n') + '\n';
    const plan = planText([step(1, 'One'), step(2, 'Two', { deps: [1] }), step(3, 'Three', { deps: [1] })]);
    const root = runRepo(plan, 'demo', { 'shared.txt': lines });
    const pidFile = join(tempDir(), 'rebase-hook.pid');
    mkdirSync(join(root, '.git', 'hooks'), { recursive: true });
    writeFileSync(join(root, '.git', 'hooks', 'pre-rebase'), `#!/bin/sh\necho $$ > '${pidFile}'\nexec sleep 60\n`);
    chmodSync(join(root, '.git', 'hooks', 'pre-rebase'), 0o755);
    const impl = nodeImplementer(`
const { execFileSync } = await import('node:child_process');
const f = join(wt, 'shared.txt');
const ls = readFileSync(f, 'utf8').split('\\n');
if (step === 'step-1') writeFileSync(join(wt, 'one.txt'), 'one\\n');
else if (step === 'step-2') ls[0] = 'two';
else {
  // Step 3 finishes after step 2 is on the integration branch.
  const landed = () => execFileSync('git', ['log', '--format=%B', 'tugplan/demo'], { cwd: wt, encoding: 'utf8' }).includes('Tug-Step: step-2');
  for (let i = 0; i < 400 && !landed(); i++) await sleep(50);
  ls[11] = 'three';
}
writeFileSync(f, ls.join('\\n'));`);
    const t0 = Date.now();
    const r = runJsonl(root, [PLAN, '--workers', '2', '--step-timeout', '8', '--implementer', impl.argv]);
    expect(Date.now() - t0).toBeLessThan(45_000);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const [f] = failures(r.events);
    expect(f?.step_anchor, JSON.stringify(r.events.filter((e: any) => e.type !== 'phase'))).toBe('step-3');
    expect(f?.reason_code).toBe('StepTimeout');
    expect(f?.reason).toMatch(/integrating: git rebase \(or a hook it ran\) took longer/);
    expect(liveProcess(Number(readFileSync(pidFile, 'utf8')))).toBe(false);
    expect(stepCommits(root, 'tugplan/demo').sort()).toEqual(['step-1', 'step-2', 'step-3']);
    expect(git(root, 'show', 'tugplan/demo:shared.txt').split('\n')).toEqual(expect.arrayContaining(['two', 'three']));
  });

  it('a relative TUGCODE_STATE_DB is resolved against the main root, for the run and its implementers', () => {
    const root = runRepo(planText([step(1, 'One')]), 'demo', { 'sub/keep.txt': 'x\n' });
    const impl = nodeImplementer(`
const { execFileSync } = await import('node:child_process');
writeFileSync(join(wt, step + '.txt'), step + '\\n');
writeFileSync(join(dir, 'db'), process.env.TUGCODE_STATE_DB);
execFileSync(process.execPath, [${JSON.stringify(CLI)}, 'state', 'update', '.tugtool/tugplan-demo.md', step,
  '--worktree', wt, '--attempt', String(attempt), '--task', '0', 'completed'], { cwd: wt, stdio: 'inherit' });`);
    const env = { TUGCODE_STATE_DB: 'custom/state.db' };
    // Started from a subdirectory: the path is still <main root>/custom/state.db.
    const r = runJsonl(join(root, 'sub'), ['demo', '--workers', '1', '--implementer', impl.argv], env);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(readFileSync(join(impl.dir, 'db'), 'utf8')).toBe(join(root, 'custom', 'state.db'));
    expect(statSync(join(root, 'custom', 'state.db')).isFile()).toBe(true);
    expect(existsSync(join(root, 'sub', 'custom'))).toBe(false);
    // The implementer's update landed in that database (a refused update would have failed the step).
    const show = tugJson(root, ['state', 'show', PLAN, '--items', 'all'], env);
    expect(show.code, show.stderr).toBe(0);
    expect(show.json.plans[0].steps[0]).toMatchObject({ anchor: 'step-1', status: 'completed' });
  });
});
