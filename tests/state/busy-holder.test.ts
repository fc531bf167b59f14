/**
 * A state.db held by a process that is not tugcode (here python3's sqlite3 module in `BEGIN IMMEDIATE`,
 * as a sqlite3 shell would hold it): `Busy` names that process, and a hint that cannot name one says
 * "another process", not "a stuck tugcode process" (docs/state.md §1).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { TugError } from '../../src/contract/errors.js';
import { cliRepo, refusedCli } from './cli-helpers.js';
import { dbPathOf } from './helpers.js';

/** python3 holding the write lock of `db` until its stdin closes. */
function pythonHolding(db: string): Promise<ChildProcess> {
  const code = [
    'import sqlite3, sys',
    `c = sqlite3.connect(${JSON.stringify(db)}, isolation_level=None)`,
    "c.execute('BEGIN IMMEDIATE')",
    "print('locked', flush=True)",
    'sys.stdin.read()',
  ].join('\n');
  const child = spawn('python3', ['-c', code], { stdio: ['pipe', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.stdout!.once('data', () => resolve(child));
    child.once('error', reject);
    child.once('exit', (c) => reject(new Error(`python3 exited early (${c})`)));
  });
}

describe('Busy: whoever holds the lock', () => {
  it('a python3 sqlite3 transaction: Busy names its pid and command, and the way out', async () => {
    const { root, w1 } = cliRepo();
    const db = dbPathOf(root);
    const holder = await pythonHolding(db);
    try {
      const r = refusedCli(root, ['claim', 'demo', '--worktree', w1], 'Busy', 4, {
        env: { TUGCODE_BUSY_TIMEOUT_MS: '200' },
      });
      const holders = r.json.error.details.holders as { pid: number; command: string }[];
      const named = holders.find((h) => h.pid === holder.pid);
      expect(named?.command, JSON.stringify(holders)).toMatch(/python3? -c import sqlite3/);
      expect(r.json.error.hint).toContain(`pid ${holder.pid} (python`);
      expect(r.json.error.hint).toContain('COMMIT or ROLLBACK');
      expect(r.json.error.hint).not.toContain('stuck tugcode');
    } finally {
      holder.stdin!.end();
      await new Promise((res) => (holder.exitCode !== null ? res(null) : holder.once('exit', res)));
    }
  });

  it('a holder this host cannot name: neutral words, and how to find it', () => {
    const e = new TugError('Busy', { db_path: '/r/.tugtool/state.db', timeout_ms: 5000, sqlite_code: 'SQLITE_BUSY' });
    expect(e.hint).toBe(
      'another process (a tugcode command, a sqlite3 shell, a script, …) holds a write transaction on /r/.tugtool/state.db: retry when it ends; if it persists, find it (fuser -v /r/.tugtool/state.db) and let it finish or stop it',
    );
  });
});
