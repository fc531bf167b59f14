/**
 * The implementer protocol (docs/run.md §2) and the child runner under it, with real child processes:
 * scripts written into temp dirs.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../helpers/repo.js';
import { isTugError } from '../../src/contract/errors.js';
import { startGitThread, type GitThread } from '../../src/git/git-thread.js';
import { runChild } from '../../src/run/child.js';
import {
  implementerArgv,
  runImplementer,
  type ImplementerOptions,
  type ImplementerVars,
} from '../../src/run/implementer.js';
import type { StepBrief } from '../../src/run/types.js';
import { alive } from '../helpers/proc.js';

const BASE_ENV = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/nowhere', KEEP_ME: 'yes' };

function script(dir: string, name: string, body: string): string {
  const p = join(dir, name);
  writeFileSync(p, `#!/bin/sh\n${body}\n`);
  chmodSync(p, 0o755);
  return p;
}

/** Polls (generously) until pid is gone; true when it went. */
async function gone(pid: number): Promise<boolean> {
  for (let i = 0; i < 100; i++) {
    if (!alive(pid)) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

const brief = (over: Partial<StepBrief> = {}): StepBrief => ({
  plan_path: '.tugtool/tugplan-demo.md',
  step_anchor: 'step-2',
  title: 'Document it',
  attempt: 3,
  commit_message: 'feat: document it',
  references: '[D01]',
  depends_on: ['step-1'],
  items: [{ kind: 'task', ordinal: 0, text: 'Do it', status: 'open' }],
  substeps: [],
  previous_failures: [{ attempt: 2, reason: 'ImplementerFailed exit 1' }],
  ...over,
});

function setup() {
  const dir = tempDir();
  const vars: ImplementerVars = {
    worktree: join(dir, 'wt'),
    repo_root: join(dir, 'repo'),
    state_db: join(dir, 'state.db'),
  };
  return {
    dir,
    vars,
    briefPath: join(dir, 'tmp', 'brief.json'),
    logPath: join(dir, 'logs', 'demo', 'step-2-attempt3.log'),
  };
}

// The driver starts its commands from the run's thread (git-thread.ts); without one, through execa: alike.
const started: GitThread[] = [];
afterAll(async () => {
  for (const t of started) await t.close();
});
const ways: [string, () => GitThread | undefined][] = [
  ['execa', () => undefined],
  ['from a thread', () => (started[0] ??= startGitThread())],
];

for (const [how, threadOf] of ways) {
  const thread = threadOf();
  describe(`runImplementer (${how})`, () => {
    // The options every case shares; each case names only what it changes.
    const start = (t: ReturnType<typeof setup>, argv: string, over: Partial<ImplementerOptions> = {}) =>
      runImplementer({
        thread,
        argv,
        cwd: t.dir,
        baseEnv: BASE_ENV,
        vars: t.vars,
        brief: brief(),
        briefPath: t.briefPath,
        timeoutMs: 30_000,
        logPath: t.logPath,
        ...over,
      });
    it('gives the implementer the TUG_* environment, the brief on stdin and in TUG_STEP_JSON, and nothing else', async () => {
      const t = setup();
      const { dir, vars, briefPath, logPath } = t;
      const out = join(dir, 'out');
      const s = script(dir, 'impl.sh', `env > "${out}.env"\ncat > "${out}.stdin"\npwd > "${out}.pwd"\necho done`);
      const r = await start(t, `sh "${s}"`, { baseEnv: { ...BASE_ENV, TUG_STEP: 'overridden' } });
      expect(r).toMatchObject({ ok: true, exit_code: 0, timed_out: false, aborted: false, last_line: 'done' });
      const env = Object.fromEntries(
        readFileSync(`${out}.env`, 'utf8')
          .split('\n')
          .filter((l) => l.includes('='))
          .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
      );
      expect(env).toMatchObject({
        TUG_PLAN: '.tugtool/tugplan-demo.md',
        TUG_PLAN_ABS: join(vars.worktree, '.tugtool/tugplan-demo.md'),
        TUG_STEP: 'step-2',
        TUG_STEP_TITLE: 'Document it',
        TUG_ATTEMPT: '3',
        TUG_WORKTREE: vars.worktree,
        TUG_REPO_ROOT: vars.repo_root,
        TUG_STATE_DB: vars.state_db,
        TUGCODE_STATE_DB: vars.state_db,
        TUG_STEP_JSON: briefPath,
        TUG_USAGE_OUT: briefPath.replace(/\.json$/, '.usage.json'),
        KEEP_ME: 'yes',
      });
      // Nothing of the test process's own environment leaks in (extendEnv: false).
      expect(env.VITEST).toBeUndefined();
      expect(JSON.parse(readFileSync(`${out}.stdin`, 'utf8'))).toEqual(brief());
      expect(JSON.parse(readFileSync(briefPath, 'utf8'))).toEqual(brief());
      expect(readFileSync(`${out}.pwd`, 'utf8').trim()).toBe(dir);
      expect(readFileSync(logPath, 'utf8')).toBe('done\n');
    });

    it('splits argv shell-style without a shell: quotes kept, nothing expanded', async () => {
      const t = setup();
      const { dir, logPath } = t;
      const s = script(dir, 'args.sh', 'for a in "$@"; do echo "[$a]"; done');
      const r = await start(t, `"${s}" 'two words' "\\$HOME" *`);
      expect(r.ok).toBe(true);
      expect(readFileSync(logPath, 'utf8')).toBe('[two words]\n[$HOME]\n[*]\n');
    });

    it('rejects an empty or unparsable argv string with InvalidArgument', async () => {
      const t = setup();
      for (const argv of ['', '   ', `sh -c "unterminated`, "''"]) {
        const e = await start(t, argv, { timeoutMs: 1000 }).catch((x: unknown) => x);
        expect(isTugError(e) && e.code).toBe('InvalidArgument');
      }
      expect(implementerArgv(`sh -c "echo 'hi' \\"x\\""`)).toEqual(['sh', '-c', `echo 'hi' "x"`]);
    });

    it('reports a failing implementer with its exit code, output tail and last non-empty line', async () => {
      const t = setup();
      const { dir } = t;
      const s = script(dir, 'fail.sh', 'echo working\necho "broken: x" >&2\necho\nexit 1');
      const r = await start(t, s);
      expect(r).toEqual({
        ok: false,
        exit_code: 1,
        signal: null,
        timed_out: false,
        aborted: false,
        tail: 'working\nbroken: x\n\n',
        last_line: 'broken: x',
        usage: null,
        usage_warning: null,
      });
    });

    it('a program that cannot be started is ProgramNotRunnable (it would fail every attempt alike), the reason in the log', async () => {
      const t = setup();
      const { logPath } = t;
      const r = start(t, 'no-such-implementer-xyz --go');
      await expect(r).rejects.toMatchObject({
        code: 'ProgramNotRunnable',
        details: { argument: 'the implementer', program: 'no-such-implementer-xyz', spawn_error: 'ENOENT' },
      });
      expect(readFileSync(logPath, 'utf8')).toContain('tugcode: cannot run no-such-implementer-xyz: ENOENT');
    });

    it('kills the whole process group at the timeout, grandchildren included', async () => {
      const t = setup();
      const { dir } = t;
      const pids = join(dir, 'pids');
      const s = script(dir, 'slow.sh', `sleep 30 &\necho "$! $$" > "${pids}"\necho started\nsleep 30`);
      const r = await start(t, s, { timeoutMs: 500 });
      expect(r).toMatchObject({ ok: false, exit_code: null, timed_out: true, aborted: false, last_line: 'started' });
      const [grandchild, shell] = readFileSync(pids, 'utf8').trim().split(' ').map(Number);
      expect(await gone(shell!)).toBe(true);
      expect(await gone(grandchild!)).toBe(true);
    });

    it('kills the whole process group when the caller aborts', async () => {
      const t = setup();
      const { dir } = t;
      const pids = join(dir, 'pids');
      const s = script(dir, 'slow.sh', `sleep 30 &\necho "$! $$" > "${pids}"\nsleep 30`);
      const ac = new AbortController();
      const p = start(t, `sh -c "sh '${s}'"`, { timeoutMs: 60_000, signal: ac.signal });
      for (let i = 0; i < 200 && !existsSync(pids); i++) await new Promise((res) => setTimeout(res, 25));
      ac.abort();
      const r = await p;
      expect(r).toMatchObject({ ok: false, exit_code: null, timed_out: false, aborted: true });
      const [grandchild, shell] = readFileSync(pids, 'utf8').trim().split(' ').map(Number);
      expect(await gone(shell!)).toBe(true);
      expect(await gone(grandchild!)).toBe(true);
    });

    it('ends what a successful implementer left running in its group', async () => {
      const t = setup();
      const { dir } = t;
      const pids = join(dir, 'pids');
      const s = script(dir, 'leak.sh', `sleep 30 > /dev/null 2>&1 &\necho "$!" > "${pids}"\necho ok`);
      const r = await start(t, s);
      expect(r).toMatchObject({ ok: true, exit_code: 0 });
      expect(await gone(Number(readFileSync(pids, 'utf8').trim()))).toBe(true);
    });
  });

  describe(`runChild (${how})`, () => {
    it('keeps only the last 4 KiB in the tail while the log file has everything, appended', async () => {
      const dir = tempDir();
      const logPath = join(dir, 'deep', 'child.log');
      const before = 'an earlier attempt\n';
      mkdirSync(join(dir, 'deep'));
      writeFileSync(logPath, before);
      // 20000 numbered lines on stdout and stderr alternately: ~250 KB.
      const r = await runChild({
        thread,
        argv: [
          'sh',
          '-c',
          'i=0; while [ $i -lt 20000 ]; do echo "line $i"; echo "err $i" >&2; i=$((i+2)); done; echo last',
        ],
        cwd: dir,
        env: BASE_ENV,
        timeoutMs: 60_000,
        logPath,
      });
      expect(r.ok).toBe(true);
      const all = readFileSync(logPath, 'utf8');
      expect(all.startsWith(before + 'line 0\nerr 0\nline 2\n')).toBe(true);
      expect(all.endsWith('err 19998\nlast\n')).toBe(true);
      expect(statSync(logPath).size).toBeGreaterThan(100_000);
      expect(Buffer.byteLength(r.tail)).toBeLessThanOrEqual(4096);
      expect(Buffer.byteLength(r.tail)).toBeGreaterThan(4000);
      expect(all.endsWith(r.tail)).toBe(true);
      expect(r.last_line).toBe('last');
    });

    it('never blocks the event loop while a child runs', async () => {
      const dir = tempDir();
      let ticks = 0;
      const iv = setInterval(() => ticks++, 100);
      try {
        const r = await runChild({
          thread,
          argv: ['sleep', '1'],
          cwd: dir,
          env: BASE_ENV,
          timeoutMs: 30_000,
          logPath: join(dir, 'l.log'),
        });
        expect(r.ok).toBe(true);
      } finally {
        clearInterval(iv);
      }
      expect(ticks).toBeGreaterThanOrEqual(5);
    });

    it('SIGKILLs a group that ignores SIGTERM once the grace period is over', async () => {
      const dir = tempDir();
      const pids = join(dir, 'pids');
      const r = await runChild({
        thread,
        argv: ['sh', '-c', `trap '' TERM; sleep 30 & echo "$! $$" > "${pids}"; sleep 30`],
        cwd: dir,
        env: BASE_ENV,
        timeoutMs: 300,
        graceMs: 300,
        logPath: join(dir, 'l.log'),
      });
      expect(r).toMatchObject({ ok: false, timed_out: true, exit_code: null });
      for (const pid of readFileSync(pids, 'utf8').trim().split(' ').map(Number)) expect(await gone(pid)).toBe(true);
    });

    it('does not spawn when the signal is already aborted', async () => {
      const dir = tempDir();
      const ac = new AbortController();
      ac.abort();
      const marker = join(dir, 'ran');
      const r = await runChild({
        thread,
        argv: ['sh', '-c', `touch "${marker}"`],
        cwd: dir,
        env: BASE_ENV,
        timeoutMs: 30_000,
        logPath: join(dir, 'l.log'),
        signal: ac.signal,
      });
      expect(r).toMatchObject({ ok: false, aborted: true, exit_code: null });
      expect(existsSync(marker)).toBe(false);
    });
  });
}
