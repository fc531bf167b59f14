/**
 * Checkpoints as verification (docs/run.md §3): which items are commands, and running one with `sh -c`.
 */
import { describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../helpers/repo.js';
import { checkpointCommand, runCheckpoint } from '../../src/run/checkpoints.js';

const ENV = { PATH: process.env.PATH ?? '/usr/bin:/bin' };

describe('checkpointCommand', () => {
  it.each([
    ['`npm test`', 'npm test'],
    ['  `npm test`  ', 'npm test'],
    ['` npm test `', 'npm test'],
    ['``npm test``', 'npm test'],
    ['`` grep -c `x` f ``', 'grep -c `x` f'],
    ['`npm run build && npm test`', 'npm run build && npm test'],
  ])('%j is the command %j', (text, cmd) => {
    expect(checkpointCommand(text)).toBe(cmd);
  });

  it.each([
    '`npm test` passes',
    'run `npm test`',
    '`npm test` and `npm run lint`',
    '`<cmd>`',
    '` <test command> `',
    'npm test',
    '``',
    '` `',
    '``npm test`',
    '`npm test``',
    '`a` `b`',
    '',
  ])('%j is not a command', (text) => {
    expect(checkpointCommand(text)).toBeNull();
  });
});

describe('runCheckpoint', () => {
  it('passes on exit 0, in the given directory and environment, through sh -c', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'f.txt'), 'hello\n');
    const logPath = join(dir, 'logs', 'cp.log');
    const r = await runCheckpoint({
      command: 'grep -q hello f.txt && echo "ok $CP_VAR" | tr a-z A-Z',
      cwd: dir,
      env: { ...ENV, CP_VAR: 'fine' },
      timeoutMs: 30_000,
      logPath,
    });
    expect(r).toMatchObject({ ok: true, exit_code: 0, last_line: 'OK FINE' });
    expect(readFileSync(logPath, 'utf8')).toBe('OK FINE\n');
  });

  it('fails on a non-zero exit with the output tail', async () => {
    const dir = tempDir();
    const r = await runCheckpoint({
      command: 'echo "1 test failed" >&2; exit 3',
      cwd: dir,
      env: ENV,
      timeoutMs: 30_000,
      logPath: join(dir, 'cp.log'),
    });
    expect(r).toEqual({
      ok: false,
      exit_code: 3,
      signal: null,
      timed_out: false,
      aborted: false,
      tail: '1 test failed\n',
      last_line: '1 test failed',
    });
  });

  it('fails when it runs past its timeout', async () => {
    const dir = tempDir();
    const r = await runCheckpoint({
      command: 'sleep 30',
      cwd: dir,
      env: ENV,
      timeoutMs: 200,
      logPath: join(dir, 'cp.log'),
    });
    expect(r).toMatchObject({ ok: false, timed_out: true });
  });
});
