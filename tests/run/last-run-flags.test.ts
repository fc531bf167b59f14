/**
 * The plan's state keeps its last run's flags (docs/state.md §2, docs/run.md §1.2): once a run has ended
 * and its lock is gone, `tugcode doctor`'s fix for a failed step runs the plan again with that run's
 * implementer and workers, not a placeholder; a later run's flags replace them; a secret in a command
 * string is stored redacted, as the lock stores it; `status --json` names them with when the run ended;
 * merge's BranchNotFound hint repeats them; an interrupted run records its flags as well.
 */
import Database from 'better-sqlite3';
import { existsSync, readdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git } from '../helpers/repo.js';
import {
  holdingImplementer,
  implementerScript,
  planText,
  runJsonl,
  runRepo,
  startRun,
  step,
  tugJson,
  waitUntil,
} from './helpers.js';

const PLAN = planText([step(1, 'One'), step(2, 'Two', { deps: [1] })]);
const PLAN_PATH = '.tugtool/tugplan-demo.md';
const NOW = '2026-03-01T10:00:00.000Z';

const failedFix = (root: string) =>
  tugJson(root, ['doctor'], { TUGCODE_NOW: NOW }).json.checks.find((c: { name: string }) => c.name === 'failed-steps');

describe('the last run’s flags in the state', () => {
  it("doctor's failed-steps fix repeats the ended run's flags; the next run's replace them", () => {
    const root = runRepo(PLAN, 'demo', { '.tugtool/config.toml': '[state]\nmax_attempts = 1\n' });
    const impl = implementerScript();
    const script = JSON.parse(impl.argv) as string;
    writeFileSync(join(impl.failDir, 'step-1'), '9');
    const first = runJsonl(root, ['demo', '--workers', '2', '--implementer', impl.argv], { TUGCODE_NOW: NOW });
    expect(first.code, first.stderr).toBe(4);
    // The run ended: its lock is gone, only the state remembers how it ran.
    expect(readdirSync(join(root, '.tugtool')).filter((f) => f.startsWith('run-'))).toEqual([]);
    const fix = failedFix(root).fix as string;
    expect(fix).not.toContain('<your implementer>');
    expect(fix).toMatch(
      new RegExp(` && tugcode run ${PLAN_PATH.replace('.', '\\.')} --workers 2 --implementer ${script}$`),
    );
    const status = tugJson(root, ['status', 'demo']).json;
    expect(status.plans[0].last_run).toEqual({
      run_flags: ['--workers', '2', '--implementer', script],
      ended_at: NOW,
      command: `tugcode run ${PLAN_PATH} --workers 2 --implementer ${script}`,
    });

    // A second run, other flags, a secret in the implementer's command: its flags replace the first's.
    expect(tugJson(root, ['state', 'reset', 'demo', 'step-1']).code).toBe(0);
    const later = '2026-03-01T11:00:00.000Z';
    const second = runJsonl(root, ['demo', '--implementer', `${impl.argv} --api-key sekrit`, '--max-attempts', '1'], {
      TUGCODE_NOW: later,
    });
    expect(second.code, second.stderr).toBe(4);
    expect(failedFix(root).fix).toMatch(
      new RegExp(
        ` && tugcode run ${PLAN_PATH.replace('.', '\\.')} --implementer '${script} --api-key <redacted>' --max-attempts 1$`,
      ),
    );
    expect(tugJson(root, ['status', 'demo']).json.plans[0].last_run).toMatchObject({
      run_flags: ['--implementer', `${script} --api-key <redacted>`, '--max-attempts', '1'],
      ended_at: later,
    });
    const dbPath = join(root, '.tugtool', 'state.db');
    expect(existsSync(dbPath)).toBe(true);
    const db = new Database(dbPath, { readonly: true });
    const row = db.prepare('SELECT last_run_flags FROM plans').get() as { last_run_flags: string };
    db.close();
    expect(row.last_run_flags).not.toContain('sekrit');
  });

  it("merge's BranchNotFound names the last run's flags in its `tugcode run`", () => {
    const root = runRepo(PLAN, 'demo', { '.tugtool/config.toml': '[state]\nmax_attempts = 1\n' });
    const impl = implementerScript();
    const script = JSON.parse(impl.argv) as string;
    writeFileSync(join(impl.failDir, 'step-1'), '9');
    expect(runJsonl(root, ['demo', '--workers', '2', '--implementer', impl.argv]).code).toBe(4);
    // The plan's branches gone (worker trees removed, branches deleted): nothing to merge.
    for (const line of git(root, 'worktree', 'list', '--porcelain').split('\n'))
      if (line.startsWith('worktree ') && line.slice(9) !== realpathSync(root))
        git(root, 'worktree', 'remove', '--force', line.slice(9));
    for (const b of git(root, 'for-each-ref', '--format=%(refname:short)', 'refs/heads').split('\n'))
      if (b && b !== 'main') git(root, 'branch', '-D', b);
    const r = tugJson(root, ['merge', 'demo', '--force']);
    expect(r.json.error.code, r.stderr).toBe('BranchNotFound');
    expect(r.json.error.hint).toBe(
      `implement the plan first: tugcode run ${PLAN_PATH} --workers 2 --implementer ${script} ` +
        `(or tugcode worktree create ${PLAN_PATH})`,
    );
  });

  it('an interrupted run records its flags too', async () => {
    const root = runRepo(PLAN, 'demo');
    const impl = holdingImplementer();
    writeFileSync(join(impl.hold, 'step-1-a1'), '');
    const run = startRun(root, ['demo', '--workers', '1', '--implementer', impl.argv]);
    await waitUntil('step-1 started', () => existsSync(join(impl.started, 'step-1-a1')));
    // While it runs, the lock's flags are the ones shown; the state records none yet.
    expect(tugJson(root, ['status', 'demo']).json.plans[0].last_run).toBeNull();
    run.child.kill('SIGINT');
    const r = await run.done;
    expect(r.code, r.stderr).toBe(130);
    const last = tugJson(root, ['status', 'demo']).json.plans[0].last_run;
    expect(last.run_flags).toEqual(['--workers', '1', '--implementer', expect.stringContaining('impl.mjs')]);
    expect(last.command).toMatch(
      new RegExp(`^tugcode run ${PLAN_PATH.replace('.', '\\.')} --workers 1 --implementer `),
    );
  });
});
