/**
 * `tugcode doctor` as a user reads it (docs/git.md §7): a check that did not run reads `skip`, never `ok`
 * (JSON: `skipped: true`, status still `pass`), and the text is the same table whether every check passes
 * or one fails (a failure used to switch to another line format).
 */
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { doctorFailedDetails } from '../../src/contract/schemas/git.js';
import { checkSchema, runCli, runJson } from '../helpers/cli.js';
import { tempDir } from '../helpers/repo.js';
import { planRepo, T0 } from './helpers.js';

const env = { TUGCODE_NOW: T0 };
const STATE_CHECKS = [
  'state-db-integrity',
  'state-db-schema',
  'state-db-wal',
  'orphaned-plans',
  'unintegrated-step-commits',
  'expired-leases',
  'failed-steps',
  'dead-runs',
  'integration-targets',
];

/** The rows of doctor's table: mark, name, first line of the result; the header and summary lines. */
function parse(stdout: string) {
  const lines = stdout.trimEnd().split('\n');
  const rows = lines
    .map((l) => /^(ok|skip|WARN|FAIL) +(\S+) +(.*)$/.exec(l))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ mark: m[1], name: m[2], result: m[3] }));
  return { header: lines[0], rows, summary: lines[lines.length - 1] };
}

describe('doctor text and skipped checks', () => {
  it('reads skip for the state checks without a state.db, in the same table as a failure', () => {
    const root = planRepo();
    const json = runJson('doctor', ['doctor'], { cwd: root, env }).json;
    for (const n of STATE_CHECKS)
      expect(json.checks.find((c: { name: string }) => c.name === n)).toMatchObject({
        status: 'pass',
        skipped: true,
        message: 'skipped: no state.db',
      });
    expect(json.checks.find((c: { name: string }) => c.name === 'config').skipped).toBe(false);
    expect(json.summary.skipped).toBe(STATE_CHECKS.length);

    const okText = runCli(['doctor'], { cwd: root, env });
    expect(okText.code, okText.stderr).toBe(0);
    const ok = parse(okText.stdout);
    expect(ok.header).toMatch(/^ +check +result$/);
    for (const n of STATE_CHECKS)
      expect(ok.rows.find((r) => r.name === n)).toEqual({ mark: 'skip', name: n, result: 'no state.db' });
    expect(ok.rows.find((r) => r.name === 'config')?.mark).toBe('ok');
    const s = json.summary;
    expect(ok.summary).toBe(
      `${s.total} checks: ${s.pass - s.skipped} ok, ${s.skipped} skipped, ${s.warn} warning(s), ${s.fail} failed`,
    );

    // A state.db that does not open: the check fails, the rest are skipped, and the text is the same table.
    writeFileSync(join(root, '.tugtool/state.db'), 'garbage, not sqlite');
    const failJson = runJson('doctor', ['doctor'], { cwd: root, env }).json;
    expect(failJson.error.code).toBe('DoctorFailed');
    checkSchema(doctorFailedDetails, failJson.error.details);
    expect(failJson.error.details.summary.skipped).toBe(STATE_CHECKS.length);

    const failText = runCli(['doctor'], { cwd: root, env });
    expect(failText.code).toBe(4);
    expect(failText.stderr).toContain('tugcode: DoctorFailed');
    const bad = parse(failText.stdout);
    expect(bad.header).toBe(ok.header);
    expect(bad.rows.map((r) => r.name)).toEqual(ok.rows.map((r) => r.name));
    expect(bad.rows.find((r) => r.name === 'state-db-opens')).toMatchObject({ mark: 'FAIL' });
    for (const n of STATE_CHECKS)
      expect(bad.rows.find((r) => r.name === n)).toEqual({ mark: 'skip', name: n, result: 'state.db does not open' });
    // The fix sits under the failed check's result, as under a warning in a success.
    const lines = failText.stdout.split('\n');
    const at = lines.findIndex((l) => /^FAIL +state-db-opens /.test(l));
    expect(lines[at + 1]).toMatch(/^ {20,}fix: move \.tugtool\/state\.db aside/);
    expect(bad.summary).toMatch(/^\d+ checks: \d+ ok, 9 skipped, \d+ warning\(s\), 1 failed$/);
    expect(failText.stdout).not.toMatch(/^(ok|skip|WARN|FAIL) +[\w-]+: /m);
  });

  it('lists the same checks outside a repository, those that need one skipped, and still fails', () => {
    const inside = runJson('doctor', ['doctor'], { cwd: planRepo(), env }).json;
    const names = (inside.checks as { name: string }[]).map((c) => c.name);
    const plain = tempDir();
    // No repository above the temp dir either (the CI's may sit inside a checkout).
    const outEnv = { ...env, GIT_CEILING_DIRECTORIES: dirname(plain) };
    const out = runJson('doctor', ['doctor'], { cwd: plain, env: outEnv });
    expect(out.code).toBe(4);
    expect(out.json.error.code).toBe('DoctorFailed');
    checkSchema(doctorFailedDetails, out.json.error.details);
    const checks = out.json.error.details.checks as {
      name: string;
      status: string;
      skipped: boolean;
      message: string;
    }[];
    expect(checks.map((c) => c.name)).toEqual(names);
    expect(checks.find((c) => c.name === 'repo-found')).toMatchObject({ status: 'fail', skipped: false });
    expect(checks.find((c) => c.name === 'git-version')).toMatchObject({ status: 'pass', skipped: false });
    const rest = checks.filter((c) => c.name !== 'repo-found' && c.name !== 'git-version');
    for (const c of rest)
      expect(c, c.name).toMatchObject({ status: 'pass', skipped: true, message: 'skipped: not a git repository' });
    expect(out.json.error.details.summary).toMatchObject({ total: names.length, fail: 1, skipped: rest.length });

    const text = runCli(['doctor'], { cwd: plain, env: outEnv });
    expect(text.code).toBe(4);
    const rows = parse(text.stdout).rows;
    expect(rows.map((r) => r.name)).toEqual(names);
    expect(rows.find((r) => r.name === 'config')).toEqual({
      mark: 'skip',
      name: 'config',
      result: 'not a git repository',
    });
    expect(parse(text.stdout).summary).toBe(
      `${names.length} checks: 1 ok, ${rest.length} skipped, 0 warning(s), 1 failed`,
    );
  });
});
