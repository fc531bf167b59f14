/**
 * The kernel's one runner for child processes that are not language servers (issue 11: nothing blocks the
 * event loop): verifiers, test commands, probes, git. Through execa, loaded on first use so it stays off the
 * start-up path; argv only, never a shell; the environment is the caller's (the kernel never reads
 * process.env). Each child leads its own process group, which is killed as a whole on timeout and on an
 * interrupted call (lifecycle.ts), so a test runner's grandchildren do not outlive it. The short queries of
 * a cold call (git on the snapshot path, an interpreter's or server's version) run through node's
 * asynchronous execFile instead (`gitOutput`, `execQuery`): execa's first import alone costs 65–140 ms of
 * CPU, and a cold Python or Rust rename asks a version before anything else.
 */
import { withoutGitRedirects } from './git-env.js';
import { onAbort } from './lifecycle.js';

const TAIL = 16 * 1024;
const MAX_STDOUT = 64 * 1024 * 1024;

export interface ExecOptions {
  cwd: string;
  /** The environment of the child (without the variables that redirect git, git-env.ts). */
  env: Record<string, string | undefined>;
  timeoutMs: number;
  /** Keep stdout (up to 64 MiB); otherwise only the tail of stdout+stderr is kept. Default true. */
  keepStdout?: boolean;
  /** Keep stderr separately (up to 64 MiB). Default false. */
  keepStderr?: boolean;
}

export interface ExecResult {
  exit_code: number | null;
  signal: string | null;
  timed_out: boolean;
  stdout: string;
  stderr: string;
  /** The last 16 KiB of stdout and stderr, interleaved as they arrived. */
  output: string;
  /** The spawn failure's code (`ENOENT`, `EACCES`, …), or null when the process ran. */
  spawn_error: string | null;
  duration_ms: number;
}

function killGroup(pid: number | undefined): void {
  if (!pid) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

/** Run argv to completion; never rejects (a spawn failure is `spawn_error`). */
export async function execCapture(argv: string[], o: ExecOptions): Promise<ExecResult> {
  const { execa } = await import('execa');
  const t0 = Date.now();
  const keepStdout = o.keepStdout ?? true;
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  let outSize = 0;
  let errSize = 0;
  let tail = '';
  let timedOut = false;
  const child = execa(argv[0]!, argv.slice(1), {
    cwd: o.cwd,
    // A test command or verifier that runs git works in the workspace, not where a hook's GIT_DIR points.
    env: withoutGitRedirects(o.env),
    extendEnv: false,
    detached: true,
    stdin: 'ignore',
    buffer: false,
    reject: false,
    stripFinalNewline: false,
  });
  const unregister = onAbort(`process ${argv[0]}`, () => killGroup(child.pid));
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup(child.pid);
  }, o.timeoutMs);
  const addTail = (d: Buffer) => {
    tail = (tail + d.toString('utf8')).slice(-TAIL);
  };
  child.stdout?.on('data', (d: Buffer) => {
    if (keepStdout && outSize < MAX_STDOUT) {
      out.push(d);
      outSize += d.length;
    }
    addTail(d);
  });
  child.stderr?.on('data', (d: Buffer) => {
    if (o.keepStderr && errSize < MAX_STDOUT) {
      err.push(d);
      errSize += d.length;
    }
    addTail(d);
  });
  try {
    const r = await child;
    const spawned = r.exitCode !== undefined || r.signal !== undefined;
    return {
      exit_code: r.exitCode ?? null,
      signal: r.signal ?? null,
      timed_out: timedOut,
      stdout: spawned ? Buffer.concat(out).toString('utf8') : '',
      stderr: spawned ? Buffer.concat(err).toString('utf8') : '',
      output: spawned ? tail : '',
      spawn_error: spawned ? null : ((r as { code?: string }).code ?? r.shortMessage ?? 'spawn failed'),
      duration_ms: Date.now() - t0,
    };
  } finally {
    clearTimeout(timer);
    unregister();
  }
}

/**
 * stdout of a short git query, or null when git fails. Like `execQuery` below (the other short query), node's
 * asynchronous execFile rather than execa, because it runs on every snapshot (the start of every `tug`
 * command in a repository) and execa's first import costs ~65 ms, a large share of a cold `tug` call
 * (measured on Node 20: `await import('execa')` 64–76 ms). It never blocks the event loop either, and
 * git spawns no process group worth killing. The variables that would point git at another repository or
 * index (a `tug` started from a git hook) are removed (git-env.ts): git works where `cwd` is.
 */
export async function gitOutput(
  args: string[],
  o: { cwd: string; env: Record<string, string | undefined>; timeoutMs: number },
): Promise<Buffer | null> {
  const { execFile } = await import('node:child_process');
  return new Promise((resolve) => {
    execFile(
      'git',
      args,
      {
        cwd: o.cwd,
        env: withoutGitRedirects(o.env),
        encoding: 'buffer',
        maxBuffer: 256 * 1024 * 1024,
        timeout: o.timeoutMs,
        killSignal: 'SIGKILL',
      },
      (err, stdout) => resolve(err ? null : stdout),
    );
  });
}

export type QueryResult = Pick<
  ExecResult,
  'exit_code' | 'signal' | 'timed_out' | 'stdout' | 'stderr' | 'spawn_error' | 'duration_ms'
>;

/**
 * A short query (`python -c <version>`, `rust-analyzer --version`) to completion, through node's execFile
 * (see the top of this file); never rejects. No process group: such a child starts none worth killing, and
 * an interrupted call still kills the child itself.
 */
export async function execQuery(
  argv: string[],
  o: { cwd: string; env: Record<string, string | undefined>; timeoutMs: number },
): Promise<QueryResult> {
  const { execFile } = await import('node:child_process');
  const t0 = Date.now();
  return new Promise((resolve) => {
    const child = execFile(
      argv[0]!,
      argv.slice(1),
      {
        cwd: o.cwd,
        env: withoutGitRedirects(o.env),
        encoding: 'utf8',
        maxBuffer: MAX_STDOUT,
        timeout: o.timeoutMs,
        killSignal: 'SIGKILL',
      },
      (err, stdout, stderr) => {
        unregister();
        const e = err as (NodeJS.ErrnoException & { code?: string | number; killed?: boolean; signal?: string }) | null;
        // A string code is a spawn failure (ENOENT, EACCES); a number is the exit status.
        const spawnError = typeof e?.code === 'string' ? e.code : null;
        resolve({
          exit_code: spawnError || e?.signal ? null : typeof e?.code === 'number' ? e.code : 0,
          signal: e?.signal ?? null,
          timed_out: !spawnError && e?.killed === true,
          stdout: spawnError ? '' : stdout,
          stderr: spawnError ? '' : stderr,
          spawn_error: spawnError,
          duration_ms: Date.now() - t0,
        });
      },
    );
    const unregister = onAbort(`process ${argv[0]}`, () => child.kill('SIGKILL'));
  });
}
