/**
 * A working directory deleted under the shell: every command still prints one JSON document, a directory
 * that does not exist (InvalidArgument, exit 2) with a hint, and `-C <dir>` still works (docs/output.md §1).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI } from '../helpers/cli.js';
import { tempDir } from '../helpers/repo.js';
import { planRepo } from '../gitflow/helpers.js';

function inDeletedDir(...args: string[]) {
  const gone = join(tempDir(), 'gone');
  mkdirSync(gone);
  const r = spawnSync(
    'sh',
    ['-c', 'cd "$1" && rmdir "$1" && shift && exec "$@"', 'sh', gone, process.execPath, CLI, ...args],
    {
      encoding: 'utf8',
      env: { ...process.env, NODE_ENV: 'test' },
    },
  );
  return { code: r.status, json: JSON.parse(r.stdout), gone };
}

describe('a deleted working directory', () => {
  it('is InvalidArgument naming it, as one JSON document', () => {
    for (const args of [['status'], ['state', 'show']]) {
      const r = inDeletedDir(...args, '--json');
      expect([r.code, r.json.error.code]).toEqual([2, 'InvalidArgument']);
      expect(r.json.error.message).toContain('does not exist');
      expect(r.json.error.hint).toContain('-C <dir>');
    }
  });

  it('does not stop -C <dir>', () => {
    const r = inDeletedDir('-C', planRepo(), 'status', '--json');
    expect([r.code, r.json.status]).toEqual([0, 'ok']);
  });
});
