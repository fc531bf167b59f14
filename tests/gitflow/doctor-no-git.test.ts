/**
 * `tugcode doctor` without git (docs/git.md §7): the table still prints, `git-version` fails saying git does
 * not run, the checks that would run git are skipped, and the state's own checks still run. It used to abort
 * with a GitError (exit 10) and no table.
 */
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, runJson } from '../helpers/cli.js';
import { tempDir } from '../helpers/repo.js';
import { PLAN_PATH, planRepo, T0 } from './helpers.js';

const GIT_SKIPPED = [
  'orphaned-plans',
  'unintegrated-step-commits',
  'integration-targets',
  'state-files-untracked',
  'worktrees-present',
  'tugtree-registered',
  'worktrees-settled',
];

describe('doctor without git', () => {
  it('reports git-version failed and skips the checks that need git, in the one table', () => {
    const root = planRepo();
    expect(runCli(['state', 'init', PLAN_PATH], { cwd: root, env: { TUGCODE_NOW: T0 } }).code).toBe(0);
    // A PATH holding only node: no git to spawn.
    const bin = join(tempDir(), 'bin');
    mkdirSync(bin);
    symlinkSync(process.execPath, join(bin, 'node'));
    const env = { TUGCODE_NOW: T0, PATH: bin };

    const json = runJson('doctor', ['doctor'], { cwd: root, env }).json;
    expect(json.error.code).toBe('DoctorFailed');
    const checks: { name: string; status: string; message: string; skipped: boolean }[] = json.error.details.checks;
    const byName = Object.fromEntries(checks.map((c) => [c.name, c]));
    expect(byName['git-version']).toMatchObject({ status: 'fail', message: 'git is not installed or cannot run' });
    for (const n of GIT_SKIPPED)
      expect(byName[n], n).toMatchObject({ status: 'pass', skipped: true, message: 'skipped: git does not run' });
    for (const n of ['repo-found', 'config', 'state-db-opens', 'state-db-integrity', 'expired-leases', 'failed-steps'])
      expect(byName[n], n).toMatchObject({ status: 'pass', skipped: false });
    expect(json.error.details.summary.fail).toBe(1);

    const text = runCli(['doctor'], { cwd: root, env });
    expect(text.code).toBe(4);
    expect(text.stdout).toMatch(/^FAIL +git-version +git is not installed or cannot run$/m);
    expect(text.stdout).toMatch(/^skip +worktrees-present +git does not run$/m);
    expect(text.stdout).toMatch(/checks: .* 1 failed\n$/);
    expect(text.stderr).toContain('tugcode: DoctorFailed: ');
    expect(text.stderr).not.toContain('GitError');
  });
});
