/**
 * How the git flows run git: through simple-git, promise-based, so a long git (a pre-commit hook, a rebase)
 * never blocks the event loop — in a driver process every other worker's heartbeat timer keeps firing.
 * simple-git is imported lazily, on the first call: it costs ~25 ms to load, which the hot state commands
 * must not pay (they use the few synchronous calls of fast.ts instead, docs/quality.md §2).
 *
 * Every call goes through `raw()` with `-C <dir>`; one simple-git instance per caller environment shares
 * its scheduler (`maxConcurrentProcesses`) across all calls made with that environment, and every git
 * child is killed when it prints nothing for `timeout.block` ms. Calls that need stdin or extra variables
 * (a temporary index, a quarantine object directory) get an instance of their own.
 *
 * simple-git is used as a runner only: its `errors` hook hands every result (exit code, stdout and stderr
 * as bytes) back through one error type, so the callers here see git's exit status as it is — many plumbing
 * commands answer "no" with exit 1 and nothing on stderr, which simple-git would otherwise report as success.
 *
 * A caller that started a git thread for its environment (git-thread.ts: the driver) gets a runner that
 * starts git there instead, with the same rules: the variables, stdin, GIT_MAX_CONCURRENT, the silence
 * timeout and the same errors.
 */
import type { SimpleGit, SimpleGitOptions } from 'simple-git';
import { TugError } from '../contract/errors.js';
import { gitChildEnv, type GitEnv, type GitResult } from './env.js';
import { gitThreadOf, type GitThread, type ThreadResult } from './git-thread.js';
import { passing, PASSING_WAITS_MS } from './passing.js';

export type { GitResult } from './env.js';

/** A git child that prints nothing for this long is killed (GitError). Hooks and rebases print little. */
export const GIT_BLOCK_TIMEOUT_MS = 10 * 60_000;
/** At most this many git children at once per caller environment (one driver process, many workers). */
export const GIT_MAX_CONCURRENT = 4;

export interface GitCallOptions {
  /** Written to git's stdin. */
  input?: string | Buffer | undefined;
  /** Variables added to the caller's environment for this call (GIT_INDEX_FILE, GIT_EDITOR, …). */
  env?: GitEnv | undefined;
}

/** Runs git for one caller environment. Get one with `gitRunner(env)`. */
export interface GitRunner {
  readonly env: NodeJS.ProcessEnv;
  /** Exit status, stdout and stderr; never rejects for a non-zero exit. GitError when git cannot run. */
  tryRun(args: string[], cwd: string, opts?: GitCallOptions): Promise<GitResult>;
  /** stdout; a non-zero exit is GitError. */
  run(args: string[], cwd: string, opts?: GitCallOptions): Promise<string>;
  /** stdout as bytes (blobs); a non-zero exit is GitError. */
  bytes(args: string[], cwd: string, opts?: GitCallOptions): Promise<Buffer>;
  /** `git --version` (run as exactly that: no `-C`), or null when git does not run. */
  version(): Promise<string | null>;
}

interface RawResult {
  exitCode: number;
  stdout: Buffer;
  stderr: Buffer;
  /** simple-git's own failure (timeout, spawn error), if any. */
  error: Error | undefined;
}

type SimpleGitModule = typeof import('simple-git');
let loading: Promise<{ mod: SimpleGitModule; Captured: new (r: RawResult) => Error & { result: RawResult } }> | null =
  null;

function load() {
  loading ??= import('simple-git').then((mod) => {
    // Must extend simple-git's GitError: any other error type is re-wrapped and its payload lost.
    class Captured extends mod.GitError {
      constructor(readonly result: RawResult) {
        super(undefined, 'git result');
      }
    }
    return { mod, Captured };
  });
  return loading;
}

/**
 * The arguments are built here, never taken whole from a user (user values sit behind `--`, or inside
 * `refs/heads/…`), and the environment is the caller's own, which git would honour anyway: simple-git's
 * guards against untrusted arguments and variables are switched off, and every variable is passed on.
 */
const TRUSTED = {
  allowUnsafeAlias: true,
  allowUnsafeAskPass: true,
  allowUnsafeCommandBinaries: true,
  allowUnsafeConfigPaths: true, // also `-C <dir>`
  allowUnsafeConfigEnvCount: true,
  allowUnsafeCredentialHelper: true,
  allowUnsafeEditor: true,
  allowUnsafeMergeDriver: true,
  allowUnsafePager: true,
  allowUnsafeProtocolOverride: true,
  allowUnsafePack: true,
  allowUnsafeSshCommand: true,
  allowUnsafeGitProxy: true,
  allowUnsafeExec: true,
  allowUnsafeHooksPath: true,
  allowUnsafeDiffExternal: true,
  allowUnsafeDiffTextConv: true,
  allowUnsafeFilter: true,
  allowUnsafeFsMonitor: true,
  allowUnsafeGpgProgram: true,
  allowUnsafeTemplateDir: true,
  allowUnsafeInclude: true,
  allowUnsafeSubmodule: true,
  allowUnsafeUrlRewrite: true,
} satisfies SimpleGitOptions['unsafe'];

async function client(env: GitEnv, input?: string | Buffer): Promise<SimpleGit> {
  const { mod, Captured } = await load();
  return mod
    .simpleGit({
      // Every call names its directory with -C; the spawn directory only has to exist.
      baseDir: '/',
      maxConcurrentProcesses: GIT_MAX_CONCURRENT,
      timeout: { block: GIT_BLOCK_TIMEOUT_MS },
      allowEnvironment: Object.keys(env),
      unsafe: TRUSTED,
      errors: (error, r) =>
        new Captured({
          exitCode: r.exitCode,
          stdout: Buffer.concat(r.stdOut),
          stderr: Buffer.concat(r.stdErr),
          error: error instanceof Error ? error : undefined,
        }),
      ...(input === undefined ? {} : { input: () => input }),
    })
    .env(env)
    .outputHandler((_command, stdout) => {
      // simple-git waits 50 ms more after a git that printed nothing (`merge-base --is-ancestor`,
      // `show-ref --quiet`, `update-ref`, …), in case its output is still on the way; it settles on the
      // child's 'close', after which nothing is on the way. An empty chunk at the end of stdout counts as
      // output, so a silent git costs what it costs (~10 ms, not ~60 ms).
      stdout.once('end', () => stdout.emit('data', Buffer.alloc(0)));
    });
}

async function spawnGit(
  shared: Promise<SimpleGit>,
  env: GitEnv,
  args: string[],
  cwd: string | null,
  opts: GitCallOptions,
): Promise<RawResult> {
  const own = opts.input !== undefined || opts.env !== undefined;
  const git = own ? await client({ ...env, ...opts.env }, opts.input) : await shared;
  const { Captured } = await load();
  try {
    await git.raw(cwd === null ? args : ['-C', cwd, ...args]);
  } catch (e) {
    if (e instanceof Captured) {
      const r = e.result;
      const timedOut = (r.error as { plugin?: string } | undefined)?.plugin === 'timeout';
      if (timedOut)
        throw new TugError('GitError', {
          args,
          cwd,
          reason: `git printed nothing for ${GIT_BLOCK_TIMEOUT_MS / 1000} s and was stopped`,
        });
      if (!Number.isInteger(r.exitCode) || r.exitCode < 0)
        throw new TugError('GitError', {
          args,
          cwd,
          reason: r.stderr.toString('utf8').split('\n')[0] || 'git could not run',
        });
      return r;
    }
    throw new TugError('GitError', { args, cwd, reason: e instanceof Error ? e.message : String(e) });
  }
  // The errors hook sees every result, so a call always ends in the catch above.
  throw new TugError('InternalError', { reason: 'simple-git returned no result' });
}

/**
 * git started from the environment's git thread (git-thread.ts) instead of simple-git, with simple-git's
 * rules as used here: every variable passed on, stdin written when given, at most GIT_MAX_CONCURRENT
 * children of the calls without stdin or variables of their own, killed after GIT_BLOCK_TIMEOUT_MS of
 * silence, and the same errors.
 */
function threadSpawner(thread: GitThread, childEnv: GitEnv) {
  let running = 0;
  const queue: (() => void)[] = [];
  const turn = async <T>(fn: () => Promise<T>): Promise<T> => {
    if (running >= GIT_MAX_CONCURRENT) await new Promise<void>((res) => queue.push(res));
    running++;
    try {
      return await fn();
    } finally {
      running--;
      queue.shift()?.();
    }
  };
  return async (args: string[], cwd: string | null, opts: GitCallOptions): Promise<RawResult> => {
    const own = opts.input !== undefined || opts.env !== undefined;
    const req = {
      args: cwd === null ? args : ['-C', cwd, ...args],
      env: opts.env ? { ...childEnv, ...opts.env } : childEnv,
      input: opts.input,
      blockMs: GIT_BLOCK_TIMEOUT_MS,
    };
    const r: ThreadResult = own ? await thread.spawn(req) : await turn(() => thread.spawn(req));
    if (r.blocked)
      throw new TugError('GitError', {
        args,
        cwd,
        reason: `git printed nothing for ${GIT_BLOCK_TIMEOUT_MS / 1000} s and was stopped`,
      });
    if (r.error !== undefined || r.exitCode === null || r.exitCode < 0)
      throw new TugError('GitError', {
        args,
        cwd,
        reason: r.error ?? (r.stderr.toString('utf8').split('\n')[0] || 'git could not run'),
      });
    return { exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr, error: undefined };
  };
}

const runners = new WeakMap<NodeJS.ProcessEnv, GitRunner>();
const threadRunners = new WeakMap<GitThread, GitRunner>();

/**
 * The runner for a caller environment (cached per env object, so calls with it share one scheduler):
 * simple-git, or the environment's git thread once the caller started one (useGitThread).
 */
export function gitRunner(env: NodeJS.ProcessEnv): GitRunner {
  const thread = gitThreadOf(env);
  const hit = thread ? threadRunners.get(thread) : runners.get(env);
  if (hit) return hit;
  const childEnv = gitChildEnv(env);
  let shared: Promise<SimpleGit> | null = null;
  const viaThread = thread ? threadSpawner(thread, childEnv) : null;
  const once = (args: string[], cwd: string | null, opts: GitCallOptions = {}) =>
    viaThread ? viaThread(args, cwd, opts) : spawnGit((shared ??= client(childEnv)), childEnv, args, cwd, opts);
  const raw = async (args: string[], cwd: string | null, opts: GitCallOptions = {}) => {
    for (let i = 0; ; i++) {
      const r = await once(args, cwd, opts);
      if (r.exitCode === 0 || i >= PASSING_WAITS_MS.length || !passing(args, r.stderr.toString('utf8'))) return r;
      await new Promise((res) => setTimeout(res, PASSING_WAITS_MS[i]));
    }
  };
  const fail = (args: string[], cwd: string, r: RawResult): TugError =>
    new TugError('GitError', { args, stderr: r.stderr.toString('utf8'), exit_code: r.exitCode, cwd });
  const runner: GitRunner = {
    env,
    async tryRun(args, cwd, opts) {
      const r = await raw(args, cwd, opts);
      return { status: r.exitCode, stdout: r.stdout.toString('utf8'), stderr: r.stderr.toString('utf8') };
    },
    async run(args, cwd, opts) {
      const r = await raw(args, cwd, opts);
      if (r.exitCode !== 0) throw fail(args, cwd, r);
      return r.stdout.toString('utf8');
    },
    async bytes(args, cwd, opts) {
      const r = await raw(args, cwd, opts);
      if (r.exitCode !== 0) throw fail(args, cwd, r);
      return r.stdout;
    },
    async version() {
      try {
        const r = await raw(['--version'], null);
        return r.exitCode === 0 ? r.stdout.toString('utf8') : null;
      } catch {
        return null;
      }
    },
  };
  if (thread) threadRunners.set(thread, runner);
  else runners.set(env, runner);
  return runner;
}

/** `git --version` as [major, minor, patch], or null when git is missing. */
export async function gitVersion(g: GitRunner): Promise<[number, number, number] | null> {
  const m = /(\d+)\.(\d+)(?:\.(\d+))?/.exec((await g.version()) ?? '');
  return m ? [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)] : null;
}
