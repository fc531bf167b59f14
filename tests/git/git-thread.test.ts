/**
 * The driver's spawning thread (src/git/git-thread.ts) with real children: what it records must not wait
 * for the caller's event loop, which a SIGKILL may end at any moment (docs/run.md §1, run/orphans.ts).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startGitThread } from '../../src/git/git-thread.js';
import { tempDir } from '../helpers/repo.js';
import { alive } from '../helpers/proc.js';

const thread = startGitThread();
afterAll(() => thread.close());

const ENV = { PATH: process.env.PATH ?? '/usr/bin:/bin' };

describe('startGitThread', () => {
  it('writes a pid record from the thread itself, while the caller is too busy to read any message', async () => {
    // Once the thread is up, children start there (before, from this thread).
    await thread.spawn({ args: ['--version'], env: ENV });
    const path = join(tempDir('tugcode-thread-'), 'w1.pgid');
    const ended = thread.spawn({
      file: 'sleep',
      args: ['30'],
      env: ENV,
      detached: true,
      pidRecord: { path, fields: { worktree: '/some/tree' } },
    });
    // This thread's loop is blocked from here on: only the spawning thread can write the record.
    const written = () => existsSync(path) && readFileSync(path, 'utf8').endsWith('\n');
    const until = Date.now() + 20_000;
    while (!written() && Date.now() < until) {
      /* busy on purpose */
    }
    expect(written()).toBe(true);
    const rec = JSON.parse(readFileSync(path, 'utf8')) as { pid: number; worktree: string };
    expect(rec.worktree).toBe('/some/tree');
    expect(alive(rec.pid)).toBe(true);
    process.kill(-rec.pid, 'SIGKILL');
    expect(await ended).toMatchObject({ exitCode: null, signal: 'SIGKILL' });
  });

  it('a record that cannot be written does not stop the child', async () => {
    const r = await thread.spawn({
      file: 'sh',
      args: ['-c', 'echo ran'],
      env: ENV,
      pidRecord: { path: '/nonexistent-dir/x/w1.pgid', fields: {} },
    });
    expect(r.exitCode).toBe(0);
    expect(r.stdout.toString()).toBe('ran\n');
  });
});
