/**
 * git children started from a worker thread, for the one long-lived caller with many git calls: the
 * driver (docs/run.md §1). Starting a child blocks the starting thread until git runs (fork, then exec:
 * ~2 ms on an idle machine, 4–5 ms with both cores busy), and a driver step starts half a dozen; on the
 * main thread that is time in which no other worker's step, heartbeat or timer runs, and with four
 * workers finishing their implementers together it was a third of the driver's CPU. The thread only
 * starts each git, feeds its stdin and collects its output; the callers keep their own rules (exec.ts:
 * bounded concurrency and the silence timeout; bounded.ts: the step's time and the process group). The
 * driver starts its implementer command there too (run/child.ts), its output going to the log file.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';

export interface ThreadSpawn {
  /** The program, looked up on `env`'s PATH (default git). */
  file?: string | undefined;
  args: string[];
  /** The child's directory (default `/`: git is always told its directory with `-C`). */
  cwd?: string | undefined;
  /** Exactly the child's environment. */
  env: Record<string, string | undefined>;
  input?: string | Buffer | undefined;
  /** In a process group of its own, which its caller signals (bounded.ts, run/child.ts). */
  detached?: boolean | undefined;
  /**
   * With `detached`: whatever is left in the group when the child exits (a hook's background child holding
   * the pipes open) is killed then.
   */
  reapGroup?: boolean | undefined;
  /**
   * This process's descriptors for the child's stdout and stderr (a log file): its output goes there and is
   * not collected. Open until the call ends.
   */
  outFds?: [number, number] | undefined;
  /** A child printing nothing for this long is killed with SIGINT (simple-git's `timeout.block`). */
  blockMs?: number | undefined;
  /** Written by the starting thread the moment the child runs (see PidRecord). */
  pidRecord?: PidRecord | undefined;
}

/**
 * A file naming a started child: `{"pid":<pid>,…fields}` and a newline, written synchronously by the thread
 * that started it, so a process SIGKILLed a moment later has left it behind (run/orphans.ts, docs/run.md §1).
 * Told through a message instead, it could be lost with the process while the message waited for a busy
 * event loop.
 */
export interface PidRecord {
  path: string;
  fields: Record<string, string>;
}

/**
 * Writes `r` for the child `pid` (a failure to write is the reader's missing record, never the spawn's).
 * Self-contained like `serve`, which the thread runs it beside.
 */
export function writePidRecord(write: (path: string, text: string) => void, r: PidRecord, pid: number): void {
  try {
    write(r.path, JSON.stringify({ pid, ...r.fields }) + '\n');
  } catch {
    // the directory is gone: nothing to record into
  }
}

export interface ThreadResult {
  /** null when the child ended by a signal. */
  exitCode: number | null;
  /** The signal that ended it. */
  signal?: string | null | undefined;
  stdout: Buffer;
  stderr: Buffer;
  /** Why the child could not start, and the error's code (ENOENT, EACCES, …). */
  error?: string | undefined;
  errorCode?: string | undefined;
  /** The silence timeout (`blockMs`) killed it. */
  blocked?: boolean | undefined;
}

export interface GitThread {
  /** Starts the child (`onPid` is told its process id as soon as it runs) and resolves when it has ended. */
  spawn(req: ThreadSpawn, onPid?: (pid: number) => void): Promise<ThreadResult>;
  /** Ends the thread; a git still running there is no longer waited for (its call fails); later ones start here. */
  close(): Promise<void>;
}

/** One git to start, as posted to the thread. */
interface Request extends ThreadSpawn {
  id: number;
}

/** What the thread posts back: the thread is up; a git's process id; its end. */
interface Message {
  id: number;
  type: 'ready' | 'pid' | 'done';
  pid?: number | undefined;
  exitCode?: number | null | undefined;
  stdout?: Uint8Array | null | undefined;
  stderr?: Uint8Array | null | undefined;
  error?: string | undefined;
  errorCode?: string | undefined;
  signal?: string | null | undefined;
  blocked?: boolean | undefined;
}

/**
 * Starts the git of `m` and posts its `pid`, then `done`. Self-contained (no outer name, no import): the
 * thread runs its source text, and the caller's own thread runs it while the thread is still starting.
 */
function serve(
  spawn: typeof import('node:child_process').spawn,
  record: (r: PidRecord, pid: number) => void,
  m: Request,
  post: (msg: Message) => void,
): void {
  let done = false;
  const finish = (r: Omit<Message, 'id' | 'type'>) => {
    if (done) return;
    done = true;
    post({ id: m.id, type: 'done', ...r });
  };
  let child: import('node:child_process').ChildProcess;
  try {
    child = spawn(m.file ?? 'git', m.args, {
      cwd: m.cwd ?? '/',
      env: m.env,
      detached: m.detached === true,
      windowsHide: true,
      stdio: [m.input === undefined ? 'ignore' : 'pipe', m.outFds?.[0] ?? 'pipe', m.outFds?.[1] ?? 'pipe'],
    });
  } catch (e) {
    const err = e as NodeJS.ErrnoException | undefined;
    finish({ exitCode: null, error: String(err?.message ?? e), errorCode: err?.code });
    return;
  }
  const pid = child.pid;
  if (pid !== undefined && m.pidRecord) record(m.pidRecord, pid);
  if (pid !== undefined) post({ id: m.id, type: 'pid', pid });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  let blocked = false;
  const quiet = () => {
    if (!m.blockMs) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      blocked = true;
      child.kill('SIGINT');
    }, m.blockMs);
  };
  child.stdout?.on('data', (d: Buffer) => {
    out.push(d);
    quiet();
  });
  child.stderr?.on('data', (d: Buffer) => {
    err.push(d);
    quiet();
  });
  quiet();
  if (m.input !== undefined) {
    child.stdin!.on('error', () => undefined); // the child may exit before reading it all
    child.stdin!.end(m.input);
  }
  if (m.reapGroup === true && m.detached === true && pid !== undefined)
    child.on('exit', () => {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // the group is gone
      }
    });
  child.on('error', (e: NodeJS.ErrnoException) => {
    if (pid !== undefined) return; // it ran: 'close' follows
    clearTimeout(timer);
    finish({ exitCode: null, error: e.message, errorCode: e.code });
  });
  child.on('close', (code, signal) => {
    clearTimeout(timer);
    finish({ exitCode: code, signal, stdout: Buffer.concat(out), stderr: Buffer.concat(err), blocked });
  });
}

/** The thread's code: CommonJS with Node's own modules only, so it runs the same from the bundle and the sources. */
const CODE = `
const { parentPort } = require('node:worker_threads');
const { spawn } = require('node:child_process');
const { writeFileSync } = require('node:fs');
const writePidRecord = ${writePidRecord.toString()};
const record = (r, pid) => writePidRecord(writeFileSync, r, pid);
const serve = ${serve.toString()};
const envs = new Map();
parentPort.on('message', ({ envId, ...m }) => {
  if (m.env) envs.set(envId, m.env);
  else m.env = envs.get(envId);
  serve(spawn, record, m, (msg) => parentPort.postMessage(msg));
});
parentPort.postMessage({ id: 0, type: 'ready' });
`;

interface Pending {
  resolve: (r: ThreadResult) => void;
  onPid?: ((pid: number) => void) | undefined;
  /** Started from the thread (else from this one). */
  threaded: boolean;
}

const bytes = (a: Uint8Array | null | undefined): Buffer =>
  a ? Buffer.from(a.buffer, a.byteOffset, a.byteLength) : Buffer.alloc(0);

/**
 * A thread that starts git children. It keeps the process alive only while a git runs there. Until it is
 * up (a worker takes tens of milliseconds to start), and should it ever fail, git starts from this thread.
 */
export function startGitThread(): GitThread {
  const record = (r: PidRecord, pid: number) => writePidRecord(writeFileSync, r, pid);
  const worker = new Worker(CODE, { eval: true });
  worker.unref();
  const pending = new Map<number, Pending>();
  let next = 0;
  let up = false;
  let running = 0;
  const envIds = new WeakMap<Record<string, string | undefined>, number>();
  let envs = 0;
  const receive = (m: Message) => {
    const p = pending.get(m.id);
    if (!p) return;
    if (m.type === 'pid') return p.onPid?.(m.pid!);
    pending.delete(m.id);
    if (p.threaded && --running === 0) worker.unref();
    p.resolve({
      exitCode: m.exitCode ?? null,
      signal: m.signal ?? null,
      stdout: bytes(m.stdout),
      stderr: bytes(m.stderr),
      error: m.error,
      errorCode: m.errorCode,
      blocked: m.blocked,
    });
  };
  const down = (e: Error) => {
    up = false;
    for (const [id, p] of pending)
      if (p.threaded) receive({ id, type: 'done', exitCode: null, error: `git was not waited for: ${e.message}` });
  };
  worker.on('message', (m: Message) => (m.type === 'ready' ? (up = true) : receive(m)));
  worker.on('error', down);
  worker.on('exit', () => down(new Error('the git thread ended')));
  return {
    spawn(req, onPid) {
      const id = ++next;
      return new Promise<ThreadResult>((resolve) => {
        pending.set(id, { resolve, onPid, threaded: up });
        if (!up) return serve(spawn, record, { id, ...req }, receive);
        if (running++ === 0) worker.ref();
        // An environment goes over once (copying ~50 variables with every git cost the event loop ~0.15 ms).
        const known = envIds.get(req.env);
        const envId = known ?? envIds.set(req.env, ++envs).get(req.env)!;
        worker.postMessage({ id, ...req, envId, env: known === undefined ? req.env : undefined });
      });
    },
    async close() {
      // A timer holds the event loop while the thread ends: a pending terminate() does not (Node 20), so the
      // process could exit with code 0 before the caller's output, as `run` did about once in 100 calls.
      const hold = setInterval(() => undefined, 60_000);
      try {
        await worker.terminate();
      } finally {
        clearInterval(hold);
      }
    },
  };
}

/** The thread each caller environment's git runs from (useGitThread), with its number of users. */
const threads = new WeakMap<NodeJS.ProcessEnv, { thread: GitThread; users: number }>();

export function gitThreadOf(env: NodeJS.ProcessEnv): GitThread | undefined {
  return threads.get(env)?.thread;
}

/**
 * From now on the git calls made with `env` (gitRunner, boundedGitRunner) start their children from a
 * thread; the returned function ends that (the thread ends with its last user).
 */
export function useGitThread(env: NodeJS.ProcessEnv): () => Promise<void> {
  const entry = threads.get(env) ?? { thread: startGitThread(), users: 0 };
  entry.users++;
  threads.set(env, entry);
  let ended = false;
  return async () => {
    if (ended) return;
    ended = true;
    if (--entry.users > 0) return;
    threads.delete(env);
    await entry.thread.close();
  };
}
