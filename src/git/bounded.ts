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

export function boundedGitRunner(env: NodeJS.ProcessEnv, bound: Bound): GitRunner {
  const base = gitChildEnv(env);
  const raw = (args: string[], cwd: string | null, opts: GitCallOptions = {}) =>
    new Promise<GitResult & { bytes: Buffer }>((res, rej) => {
      const ms = bound.timeoutMs();
      const child = spawn('git', cwd === null ? args : ['-C', cwd, ...args], {
        env: { ...base, ...opts.env },
        detached: true,
        stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      });
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      child.stdout!.on('data', (d: Buffer) => out.push(d));
      child.stderr!.on('data', (d: Buffer) => err.push(d));
      let stopped: 'timeout' | 'abort' | null = null;
      let hard: NodeJS.Timeout | undefined;
      const stop = (why: 'timeout' | 'abort') => {
        if (stopped || child.pid === undefined) return;
        stopped = why;
        killGroup(child.pid, 'SIGTERM');
        hard = setTimeout(() => killGroup(child.pid!, 'SIGKILL'), bound.graceMs ?? 2000);
      };
      const timer = setTimeout(() => stop('timeout'), ms);
      const onAbort = () => stop('abort');
      bound.signal?.addEventListener('abort', onAbort, { once: true });
      if (bound.signal?.aborted) onAbort();
      if (opts.input !== undefined) {
        child.stdin!.on('error', () => undefined); // git may exit before reading it all
        child.stdin!.end(opts.input);
      }
      // git exited: what it left in its group (a hook's background child) would hold the pipes open.
      child.on('exit', () => child.pid !== undefined && killGroup(child.pid, 'SIGKILL'));
      child.on('error', (e) => {
        clearTimeout(timer);
        rej(new TugError('GitError', { args, cwd, reason: e.message }));
      });
      child.on('close', (status) => {
        clearTimeout(timer);
        if (hard) clearTimeout(hard);
        bound.signal?.removeEventListener('abort', onAbort);
        const stderr = Buffer.concat(err).toString('utf8');
        if (stopped)
          return rej(
            new TugError('GitError', {
              args,
              cwd,
              stderr,
              timed_out: stopped === 'timeout',
              reason:
                stopped === 'timeout'
                  ? `git ${args.find((a) => !a.startsWith('-') && !a.includes('=')) ?? ''} (or a hook it ran) took longer than the ${Math.round(ms / 1000)} s left of the step and was stopped with its process group`
                  : 'stopped',
            }),
          );
        const bytes = Buffer.concat(out);
        res({ status: status ?? -1, stdout: bytes.toString('utf8'), stderr, bytes });
      });
    });
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
