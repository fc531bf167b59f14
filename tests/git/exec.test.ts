/**
 * How the flows run git (src/git/exec.ts, simple-git) and the hot path's plain calls (src/git/fast.ts):
 * git children get exactly the caller's environment (plus GIT_TERMINAL_PROMPT=0 and LC_ALL=C), never this
 * process's; exit codes come back as they are; and a slow git never blocks the event loop.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { boundedGitRunner } from '../../src/git/bounded.js';
import { gitRunner, gitVersion, type GitRunner } from '../../src/git/exec.js';
import { gitSync } from '../../src/git/fast.js';
import { useGitThread } from '../../src/git/git-thread.js';
import { git, tempDir, tempRepo } from '../helpers/repo.js';
import { alive } from '../helpers/proc.js';

/** The environment a git child sees: an alias running `env` (git adds a few GIT_* variables of its own). */
const ENV_ARGS = ['-c', 'alias.dumpenv=!env', 'dumpenv'];

function parseEnv(out: string): Record<string, string> {
  return Object.fromEntries(
    out
      .split('\n')
      .filter((l) => l.includes('='))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
}

describe('the environment of git children', () => {
  const saved = process.env.TUG_TEST_LEAK;
  afterEach(() => {
    if (saved === undefined) delete process.env.TUG_TEST_LEAK;
    else process.env.TUG_TEST_LEAK = saved;
  });

  it("is exactly the caller's, plus GIT_TERMINAL_PROMPT=0 and LC_ALL=C (simple-git and the sync path)", async () => {
    const root = tempRepo();
    process.env.TUG_TEST_LEAK = 'from this process';
    const caller = { PATH: process.env.PATH, TUG_TEST_MINE: 'from the caller', LC_ALL: 'de_DE.UTF-8' };
    const viaSimpleGit = parseEnv(await gitRunner(caller).run(ENV_ARGS, root));
    const viaSync = parseEnv(gitSync(ENV_ARGS, root, caller).stdout);
    for (const seen of [viaSimpleGit, viaSync]) {
      expect(seen).toMatchObject({ TUG_TEST_MINE: 'from the caller', GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' });
      expect(seen.TUG_TEST_LEAK).toBeUndefined();
      expect(seen.HOME).toBeUndefined();
    }
  });

  it('passes the git variables of the caller on (author identity, GIT_EDITOR, a config path)', async () => {
    const root = tempRepo();
    const caller = {
      PATH: process.env.PATH,
      GIT_AUTHOR_NAME: 'Ada',
      GIT_AUTHOR_EMAIL: 'ada@example.com',
      GIT_EDITOR: 'true',
      GIT_CONFIG_GLOBAL: '/dev/null',
      EDITOR: 'vi',
    };
    const ident = await gitRunner(caller).run(['var', 'GIT_AUTHOR_IDENT'], root);
    expect(ident).toMatch(/^Ada <ada@example\.com> /);
  });
});

/** A runner returns exit codes as they are (also a silent exit 1) and throws GitError from run(); HEAD back. */
async function expectExitCodesAsTheyAre(g: GitRunner, root: string): Promise<string> {
  const head = git(root, 'rev-parse', 'HEAD').trim();
  expect(await g.tryRun(['merge-base', '--is-ancestor', head, head], root)).toEqual({
    status: 0,
    stdout: '',
    stderr: '',
  });
  expect((await g.tryRun(['rev-parse', '--verify', '--quiet', 'nope'], root)).status).toBe(1);
  await expect(g.run(['rev-parse', '--verify', 'nope'], root)).rejects.toMatchObject({
    code: 'GitError',
    details: expect.objectContaining({ exit_code: 128 }),
  });
  return head;
}

describe('GitRunner', () => {
  it('returns exit codes as they are, also a silent exit 1', async () => {
    const root = tempRepo();
    const g = gitRunner({ PATH: process.env.PATH });
    await expectExitCodesAsTheyAre(g, root);
    expect(await gitVersion(g)).toEqual([expect.any(Number), expect.any(Number), expect.any(Number)]);
  });

  it('writes stdin and reads bytes', async () => {
    const root = tempRepo();
    const g = gitRunner({ PATH: process.env.PATH });
    const bytes = Buffer.from([0, 1, 2, 255, 254, 10]);
    const oid = (await g.run(['hash-object', '-w', '--stdin'], root, { input: bytes })).trim();
    expect((await g.bytes(['cat-file', 'blob', oid], root)).equals(bytes)).toBe(true);
  });

  it('is GitError, not a crash, when git cannot start', async () => {
    const g = gitRunner({ PATH: '/nonexistent' });
    await expect(g.tryRun(['status'], '/')).rejects.toMatchObject({ code: 'GitError' });
    expect(await gitVersion(g)).toBeNull();
  });

  it('never blocks the event loop: a 2 s pre-commit hook does not delay a 100 ms timer', async () => {
    const root = tempRepo();
    mkdirSync(join(root, '.git', 'hooks'), { recursive: true });
    writeFileSync(join(root, '.git', 'hooks', 'pre-commit'), '#!/bin/sh\nsleep 2\n');
    chmodSync(join(root, '.git', 'hooks', 'pre-commit'), 0o755);
    const g = gitRunner({ ...process.env });
    let last = Date.now();
    let worst = 0;
    let ticks = 0;
    const timer = setInterval(() => {
      const now = Date.now();
      worst = Math.max(worst, now - last);
      last = now;
      ticks++;
    }, 100);
    try {
      const t0 = Date.now();
      await g.run(['commit', '--allow-empty', '-q', '-m', 'slow hook'], root);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(2000);
    } finally {
      clearInterval(timer);
    }
    expect(ticks).toBeGreaterThanOrEqual(15);
    expect(worst).toBeLessThan(400);
  });
});

/**
 * The driver starts its git children from a thread (src/git/git-thread.ts): the runners answer as they do
 * without it, and the bounded runner still stops a hook's whole process group at its bound.
 */
describe('git started from a thread', () => {
  it('gives the same answers: exit codes, stdin and bytes, the environment, git that cannot start', async () => {
    const root = tempRepo();
    const env = { PATH: process.env.PATH, TUG_TEST_MINE: 'from the caller' };
    const end = useGitThread(env);
    try {
      const g = gitRunner(env);
      expect(g).not.toBe(gitRunner({ PATH: process.env.PATH }));
      const head = await expectExitCodesAsTheyAre(g, root);
      const bytes = Buffer.from([0, 1, 2, 255, 254, 10]);
      const oid = (await g.run(['hash-object', '-w', '--stdin'], root, { input: bytes })).trim();
      expect((await g.bytes(['cat-file', 'blob', oid], root)).equals(bytes)).toBe(true);
      const seen = parseEnv(await g.run(ENV_ARGS, root));
      expect(seen).toMatchObject({ TUG_TEST_MINE: 'from the caller', GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' });
      expect(seen.HOME).toBeUndefined();
      // Many at once: each answer is its own call's.
      const many = await Promise.all(
        Array.from({ length: 12 }, (_, i) => g.run(['rev-parse', `--short=${7 + i}`, 'HEAD'], root)),
      );
      expect(many.map((o) => o.trim())).toEqual(Array.from({ length: 12 }, (_, i) => head.slice(0, 7 + i)));
      expect(await gitVersion(g)).toEqual([expect.any(Number), expect.any(Number), expect.any(Number)]);
    } finally {
      await end();
    }
    const nowhere = { PATH: '/nonexistent' };
    const endNowhere = useGitThread(nowhere);
    try {
      await expect(gitRunner(nowhere).tryRun(['status'], '/')).rejects.toMatchObject({ code: 'GitError' });
      await expect(boundedGitRunner(nowhere, { timeoutMs: () => 5000 }).run(['status'], '/')).rejects.toMatchObject({
        code: 'GitError',
      });
    } finally {
      await endNowhere();
    }
    // Ended: the environment's calls are simple-git's again.
    expect(gitRunner(env)).toBe(gitRunner(env));
    expect((await gitRunner(env).tryRun(['rev-parse', 'HEAD'], root)).status).toBe(0);
  });

  it("stops a hook's process group at the bound, and keeps the event loop free", async () => {
    const root = tempRepo();
    mkdirSync(join(root, '.git', 'hooks'), { recursive: true });
    const pids = join(tempDir(), 'pids'); // removed with the test's directories
    // The hook and a background child of its own both hang; both are in git's group.
    writeFileSync(
      join(root, '.git', 'hooks', 'pre-commit'),
      `#!/bin/sh\nsleep 30 &\necho $! >> '${pids}'\necho $$ >> '${pids}'\nsleep 30\n`,
    );
    chmodSync(join(root, '.git', 'hooks', 'pre-commit'), 0o755);
    const env = { ...process.env };
    const end = useGitThread(env);
    try {
      const g = boundedGitRunner(env, { timeoutMs: () => 1500, graceMs: 200 });
      let ticks = 0;
      const timer = setInterval(() => ticks++, 100);
      const t0 = Date.now();
      const err = await g.run(['commit', '--allow-empty', '-q', '-m', 'hangs'], root).catch((e: unknown) => e);
      clearInterval(timer);
      expect(err).toMatchObject({ code: 'GitError', details: expect.objectContaining({ timed_out: true }) });
      expect(Date.now() - t0).toBeLessThan(10_000);
      expect(ticks).toBeGreaterThanOrEqual(10);
      const left = readFileSync(pids, 'utf8').trim().split('\n').map(Number);
      for (let i = 0; i < 50 && left.some(alive); i++) await new Promise((r) => setTimeout(r, 100));
      expect(left.filter(alive)).toEqual([]);
      // An abort stops it likewise.
      const ac = new AbortController();
      const aborted = boundedGitRunner(env, { timeoutMs: () => 60_000, signal: ac.signal, graceMs: 200 })
        .run(['commit', '--allow-empty', '-q', '-m', 'hangs'], root)
        .catch((e: unknown) => e);
      setTimeout(() => ac.abort(), 300);
      expect(await aborted).toMatchObject({ code: 'GitError', details: expect.objectContaining({ timed_out: false }) });
    } finally {
      await end();
    }
  });
});

describe("a config write beside another process's (git's config lock)", () => {
  it('tries again while the lock is taken, and is a GitError naming it when it stays taken', async () => {
    const root = tempRepo({ 'a.txt': 'a\n' });
    const lock = join(root, '.git', 'config.lock');
    const trace = join(tempDir(), 'git-trace');
    writeFileSync(lock, '');
    // GIT_TRACE2 shows each git start and how it ended: the lock is freed once a git has found it taken (a
    // start alone is too early: that git may not have reached the lock yet).
    const g = gitRunner({ ...process.env, GIT_TRACE2: trace });
    const call = g.run(['config', 'branch.x.tugbase', 'main'], root);
    const text = () => (existsSync(trace) ? readFileSync(trace, 'utf8') : '');
    const starts = () => text().split(' cmd_name config ').length - 1;
    while (!text().includes('could not lock config file')) await new Promise((r) => setImmediate(r));
    unlinkSync(lock);
    await call;
    expect(starts()).toBeGreaterThanOrEqual(2);
    expect(git(root, 'config', '--get', 'branch.x.tugbase').trim()).toBe('main');
    // Taken for good (a crashed writer's lock): bounded, then the error says why.
    writeFileSync(lock, '');
    const err = await gitRunner({ ...process.env })
      .run(['config', 'branch.y.tugbase', 'main'], root)
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'GitError' });
    expect(JSON.stringify(err)).toContain('could not lock config file');
  });
});
