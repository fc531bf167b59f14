/**
 * A GitRunner whose every git runs in its own process group with a time bound (docs/run.md §1 item 4.5:
 * the driver's commit counts against the step timeout). git runs its hooks as its own children, so a
 * hook that hangs (a `pre-commit` that sleeps) is in git's group: at the bound, or when `signal` aborts,
 * the whole group gets SIGTERM, then SIGKILL after a grace period, and the call fails with GitError
 * (`details.timed_out`). simple-git (exec.ts) can do neither: its children share the caller's group.
 */
import { spawn } from 'node:child_process';
import { TugError } from '../contract/errors.js';
import { gitChildEnv, type GitResult } from './env.js';
import type { GitCallOptions, GitRunner } from './exec.js';
import { gitThreadOf, type GitThread } from './git-thread.js';

export interface Bound {
  /** The time left for each call, read when the call starts (ms). */
  timeoutMs(): number;
  signal?: AbortSignal | undefined;
  /** Delay between SIGTERM and SIGKILL of the group (default 2 s). */
  graceMs?: number | undefined;
}

function killGroup(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(-pid, sig);
  } catch {
    // the group is gone
  }
}

/** How one git ended: its exit code (null: a signal) and its output. */
interface Ended {
  status: number | null;
  stdout: Buffer;
  stderr: Buffer;
}

type Start = (
  args: string[],
  env: Record<string, string>,
  input: string | Buffer | undefined,
  onPid: (pid: number) => void,
) => Promise<Ended>;

/** git started here, in its own process group; GitError when it cannot start. */
const startHere: Start = (args, env, input, onPid) =>
  new Promise<Ended>((res, rej) => {
    const child = spawn('git', args, {
      env,
      detached: true,
      stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    if (child.pid !== undefined) onPid(child.pid);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout!.on('data', (d: Buffer) => out.push(d));
    child.stderr!.on('data', (d: Buffer) => err.push(d));
    if (input !== undefined) {
      child.stdin!.on('error', () => undefined); // git may exit before reading it all
      child.stdin!.end(input);
    }
    // git exited: what it left in its group (a hook's background child) would hold the pipes open.
    child.on('exit', () => child.pid !== undefined && killGroup(child.pid, 'SIGKILL'));
    // Its errno kept: an ENOSPC is the catalogue's DiskFull (toTugError), not an internal error.
    child.on('error', (e: NodeJS.ErrnoException) => rej(Object.assign(new Error(e.message), { code: e.code })));
    child.on('close', (status) => res({ status, stdout: Buffer.concat(out), stderr: Buffer.concat(err) }));
  });

/** git started from the caller's git thread (git-thread.ts), likewise. */
const startOn =
  (thread: GitThread): Start =>
  async (args, env, input, onPid) => {
    const r = await thread.spawn({ args, env, input, detached: true, reapGroup: true }, onPid);
    if (r.error !== undefined) throw Object.assign(new Error(r.error), { code: r.errorCode });
    return { status: r.exitCode, stdout: r.stdout, stderr: r.stderr };
  };

/**
 * The child environment of each caller environment, made once: the driver makes a bounded runner for every
 * commit and integration, and one object per environment lets the git thread receive it once.
 */
const childEnvs = new WeakMap<NodeJS.ProcessEnv, Record<string, string>>();

export function boundedGitRunner(env: NodeJS.ProcessEnv, bound: Bound): GitRunner {
  const base = childEnvs.get(env) ?? childEnvs.set(env, gitChildEnv(env)).get(env)!;
  const thread = gitThreadOf(env);
  const start = thread ? startOn(thread) : startHere;
  const raw = async (args: string[], cwd: string | null, opts: GitCallOptions = {}) => {
    const ms = bound.timeoutMs();
    let pid: number | undefined;
    let stopped: 'timeout' | 'abort' | null = null;
    let hard: NodeJS.Timeout | undefined;
    // The group gets SIGTERM, then SIGKILL after the grace period (at once when git starts after the stop).
    const kill = () => {
      if (pid === undefined || stopped === null || hard) return;
      killGroup(pid, 'SIGTERM');
      hard = setTimeout(() => killGroup(pid!, 'SIGKILL'), bound.graceMs ?? 2000);
    };
    const stop = (why: 'timeout' | 'abort') => {
      if (stopped) return;
      stopped = why;
      kill();
    };
    const timer = setTimeout(() => stop('timeout'), ms);
    const onAbort = () => stop('abort');
    bound.signal?.addEventListener('abort', onAbort, { once: true });
    if (bound.signal?.aborted) onAbort();
    let r: Ended;
    try {
      r = await start(
        cwd === null ? args : ['-C', cwd, ...args],
        opts.env ? { ...base, ...opts.env } : base,
        opts.input,
        (p) => {
          pid = p;
          kill();
        },
      );
    } catch (e) {
      throw new TugError('GitError', { args, cwd, reason: (e as Error).message });
    } finally {
      clearTimeout(timer);
      if (hard) clearTimeout(hard);
      bound.signal?.removeEventListener('abort', onAbort);
    }
    const stderr = r.stderr.toString('utf8');
    if (stopped)
      throw new TugError('GitError', {
        args,
        cwd,
        stderr,
        timed_out: stopped === 'timeout',
        reason:
          stopped === 'timeout'
            ? `git ${args.find((a) => !a.startsWith('-') && !a.includes('=')) ?? ''} (or a hook it ran) took longer than the ${Math.round(ms / 1000)} s left of the step and was stopped with its process group`
            : 'stopped',
      });
    return { status: r.status ?? -1, stdout: r.stdout.toString('utf8'), stderr, bytes: r.stdout };
  };
  const fail = (args: string[], cwd: string, r: GitResult) =>
    new TugError('GitError', { args, stderr: r.stderr, exit_code: r.status, cwd });
  return {
    env,
    async tryRun(args, cwd, opts) {
      const { bytes: _, ...r } = await raw(args, cwd, opts);
      return r;
    },
    async run(args, cwd, opts) {
      const r = await raw(args, cwd, opts);
      if (r.status !== 0) throw fail(args, cwd, r);
      return r.stdout;
    },
    async bytes(args, cwd, opts) {
      const r = await raw(args, cwd, opts);
      if (r.status !== 0) throw fail(args, cwd, r);
      return r.bytes;
    },
    async version() {
      const r = await raw(['--version'], null).catch(() => null);
      return r && r.status === 0 ? r.stdout : null;
    },
  };
}
