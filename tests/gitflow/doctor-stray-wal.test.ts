/**
 * A `state.db-wal`/`-shm` left without its state.db (a crash, or state.db deleted): doctor names them in
 * `state-db-opens` (docs/git.md §7), the fix moving them aside, and leaves them where they are.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, runJson } from '../helpers/cli.js';
import { PLAN_PATH, planRepo, T0 } from './helpers.js';

const env = { TUGCODE_NOW: T0 };

describe('doctor: a stray -wal/-shm without its state.db', () => {
  it('warns naming them, and changes nothing', () => {
    const root = planRepo();
    expect(runCli(['state', 'init', PLAN_PATH], { cwd: root, env }).code).toBe(0);
    const db = join(root, '.tugtool', 'state.db');
    rmSync(db);
    for (const ext of ['-wal', '-shm']) rmSync(db + ext, { force: true });
    writeFileSync(`${db}-wal`, 'pages of a db that is gone');

    const one = runJson('doctor', ['doctor'], { cwd: root, env }).json;
    expect(one.checks.find((c: { name: string }) => c.name === 'state-db-opens')).toMatchObject({
      status: 'warn',
      message:
        'no state database at .tugtool/state.db, but .tugtool/state.db-wal is left over: the data in it belongs to a state.db that is gone',
      fix: expect.stringMatching(
        /^move it aside \(mv \.tugtool\/state\.db-wal \.tugtool\/state\.db-wal\.stray\), then /,
      ),
    });

    writeFileSync(`${db}-shm`, '');
    const text = runCli(['doctor'], { cwd: root, env });
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(
      /^WARN +state-db-opens +no state database at \.tugtool\/state\.db, but \.tugtool\/state\.db-wal and \.tugtool\/state\.db-shm are left over/m,
    );
    expect(readFileSync(`${db}-wal`, 'utf8')).toBe('pages of a db that is gone');
    expect(existsSync(db)).toBe(false);
  });
});
