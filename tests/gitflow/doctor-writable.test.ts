/**
 * `state-db-writable` (docs/git.md §7): doctor used to exit 0 while every state write would fail, with an
 * immutable state.db or `.tugtool/` on a read-only mount, its one remark a WAL warning promising a command
 * would switch the journal mode. Root only (chattr, mount); skipped cleanly where they are not permitted.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, runJson } from '../helpers/cli.js';
import { PLAN_PATH, planRepo, T0 } from './helpers.js';

const env = { TUGCODE_NOW: T0 };
const ok = (cmd: string, args: string[]) => spawnSync(cmd, args, { encoding: 'utf8' }).status === 0;

/** A repository with its state.db. */
function stateRepo(): string {
  const root = planRepo();
  expect(runCli(['state', 'init', PLAN_PATH], { cwd: root, env }).code).toBe(0);
  return root;
}

function doctorChecks(root: string) {
  const r = runJson('doctor', ['doctor'], { cwd: root, env });
  const checks: { name: string; status: string; message: string; fix: string }[] =
    r.json.status === 'ok' ? r.json.checks : r.json.error.details.checks;
  return { r, byName: Object.fromEntries(checks.map((c) => [c.name, c])) };
}

const chattrWorks = (() => {
  const root = planRepo();
  const p = join(root, '.tugtool', 'config.toml');
  const works = ok('chattr', ['+i', p]);
  if (works) ok('chattr', ['-i', p]);
  return works;
})();

const mountWorks = (() => {
  const root = planRepo();
  const d = join(root, '.tugtool');
  const works = ok('mount', ['--bind', d, d]);
  if (works) ok('umount', [d]);
  return works;
})();

describe('doctor: the state store is writable', () => {
  it('passes on a healthy state.db', () => {
    const { r, byName } = doctorChecks(stateRepo());
    expect(r.code).toBe(0);
    expect(byName['state-db-writable']).toMatchObject({ status: 'pass' });
  });

  it.skipIf(!chattrWorks)('fails on an immutable state.db, naming the file and the cause', () => {
    const root = stateRepo();
    const db = join(root, '.tugtool', 'state.db');
    expect(ok('chattr', ['+i', db])).toBe(true);
    try {
      const { r, byName } = doctorChecks(root);
      expect(r.json.error.code).toBe('DoctorFailed');
      expect(byName['state-db-writable']).toMatchObject({
        status: 'fail',
        message: expect.stringContaining('.tugtool/state.db may not be written (immutable or append-only)'),
        fix: expect.stringContaining(`chattr -i -a ${db}`),
      });
    } finally {
      ok('chattr', ['-i', db]);
    }
  });

  it.skipIf(!mountWorks)('fails on a read-only .tugtool/, and the WAL warning does not promise a switch', () => {
    const root = stateRepo();
    const d = join(root, '.tugtool');
    expect(ok('mount', ['--bind', d, d])).toBe(true);
    try {
      expect(ok('mount', ['-o', 'remount,bind,ro', d])).toBe(true);
      const { r, byName } = doctorChecks(root);
      expect(r.json.error.code).toBe('DoctorFailed');
      expect(byName['state-db-writable']).toMatchObject({
        status: 'fail',
        message: expect.stringContaining('the directory .tugtool is on a read-only file system'),
        fix: expect.stringContaining('remount the file system holding .tugtool read-write'),
      });
      // SQLite reports journal_mode = memory on a read-only mount: no command can switch it there.
      expect(byName['state-db-wal']).toMatchObject({
        status: 'warn',
        message: expect.stringContaining('(the state store is not writable)'),
        fix: expect.stringMatching(/^make it writable first/),
      });
      const text = runCli(['doctor'], { cwd: root, env });
      expect(text.code).toBe(4);
      expect(text.stdout).toMatch(/^FAIL +state-db-writable +every state change will fail: /m);
    } finally {
      ok('umount', [d]);
    }
  });
});
