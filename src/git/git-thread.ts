/**
 * git children started from a worker thread, for the one long-lived caller with many git calls: the
 * driver (docs/run.md §1). Starting a child blocks the starting thread until git runs (fork, then exec:
 * ~2 ms on an idle machine, 4–5 ms with both cores busy), and a driver step starts half a dozen; on the
 * main thread that is time in which no other worker's step, heartbeat or timer runs, and with four
 * workers finishing their implementers together it was a third of the driver's CPU. The thread only
 * starts each git, feeds its stdin and collects its output; the callers keep their own rules (exec.ts:
 * bounded concurrency and the silence timeout; bounded.ts: the step's time and the process group).
 */
import { Worker } from 'node:worker_threads';

export interface ThreadSpawn {
  args: string[];
  /** Exactly the child's environment. */
  env: Record<string, string>;
  input?: string | Buffer | undefined;
  /**
   * In a process group of its own (bounded.ts kills the group); whatever is left in the group when git
   * exits (a hook's background child holding the pipes open) is killed then.
   */
  detached?: boolean | undefined;
  /** git printing nothing for this long is killed with SIGINT (simple-git's `timeout.block`). */
  blockMs?: number | undefined;
}

export interface ThreadResult {
  /** null when git ended by a signal. */
  exitCode: number | null;
  stdout: Buffer;
  stderr: Buffer;
  /** Why git could not start. */
  error?: string | undefined;
  /** The silence timeout (`blockMs`) killed it. */
  blocked?: boolean | undefined;
}

export interface GitThread {
  /** Starts git (`onPid` is told its process id as soon as it runs) and resolves when it has ended. */
  spawn(req: ThreadSpawn, onPid?: (pid: number) => void): Promise<ThreadResult>;
  /** Ends the thread; a git still running is no longer waited for (its call fails). */
  close(): Promise<void>;
}

/** The worker's code: CommonJS with Node's own modules only, so it runs the same from the bundle and the sources. */
const CODE = `
const { parentPort } = require('node:worker_threads');
const { spawn } = require('node:child_process');
parentPort.on('message', (m) => {
  let child;
  let done = false;
  const finish = (r) => {
    if (done) return;
    done = true;
    parentPort.postMessage({ id: m.id, type: 'done', ...r });
  };
  try {
    child = spawn('git', m.args, {
      cwd: '/',
      env: m.env,
      detached: m.detached === true,
      windowsHide: true,
      stdio: [m.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
  } catch (e) {
    finish({ exitCode: null, stdout: null, stderr: null, error: String((e && e.message) || e) });
    return;
  }
  if (child.pid !== undefined) parentPort.postMessage({ id: m.id, type: 'pid', pid: child.pid });
  const out = [];
  const err = [];
  let timer;
  let blocked = false;
  const quiet = () => {
    if (!m.blockMs) return;
    clearTimeout(timer);
    timer = setTimeout(() => { blocked = true; child.kill('SIGINT'); }, m.blockMs);
  };
  child.stdout.on('data', (d) => { out.push(d); quiet(); });
  child.stderr.on('data', (d) => { err.push(d); quiet(); });
  quiet();
  if (m.input !== undefined) {
    child.stdin.on('error', () => undefined);
    child.stdin.end(m.input);
  }
  if (m.detached === true)
    child.on('exit', () => { try { process.kill(-child.pid, 'SIGKILL'); } catch {} });
  child.on('error', (e) => {
    if (child.pid === undefined) { clearTimeout(timer); finish({ exitCode: null, stdout: null, stderr: null, error: e.message }); }
  });
  child.on('close', (code) => {
    clearTimeout(timer);
    finish({ exitCode: code, stdout: Buffer.concat(out), stderr: Buffer.concat(err), blocked });
  });
});
`;

interface Pending {
  resolve: (r: ThreadResult) => void;
  onPid?: ((pid: number) => void) | undefined;
}

interface Message {
  id: number;
  type: 'pid' | 'done';
  pid?: number;
  exitCode?: number | null;
  stdout?: Uint8Array | null;
  stderr?: Uint8Array | null;
  error?: string;
  blocked?: boolean;
}

const bytes = (a: Uint8Array | null | undefined): Buffer =>
  a ? Buffer.from(a.buffer, a.byteOffset, a.byteLength) : Buffer.alloc(0);

/** A thread that starts git children. It keeps the process alive only while a git runs. */
export function startGitThread(): GitThread {
  const worker = new Worker(CODE, { eval: true });
  worker.unref();
  const pending = new Map<number, Pending>();
  let next = 0;
  let failed: Error | null = null;
  const ended = (e: Error): ThreadResult => ({
    exitCode: null,
    stdout: Buffer.alloc(0),
    stderr: Buffer.alloc(0),
    error: e.message,
  });
  const fail = (e: Error) => {
    failed = e;
    for (const [, p] of pending) p.resolve(ended(e));
    pending.clear();
  };
  worker.on('error', fail);
  worker.on('exit', () => fail(new Error('the git thread ended')));
  worker.on('message', (m: Message) => {
    const p = pending.get(m.id);
    if (!p) return;
    if (m.type === 'pid') {
      p.onPid?.(m.pid!);
      return;
    }
    pending.delete(m.id);
    if (pending.size === 0) worker.unref();
    p.resolve({
      exitCode: m.exitCode ?? null,
      stdout: bytes(m.stdout),
      stderr: bytes(m.stderr),
      error: m.error,
      blocked: m.blocked,
    });
  });
  return {
    spawn(req, onPid) {
      const id = ++next;
      return new Promise<ThreadResult>((resolve) => {
        if (failed) return resolve(ended(failed));
        if (pending.size === 0) worker.ref();
        pending.set(id, { resolve, onPid });
        worker.postMessage({ id, ...req });
      });
    },
    async close() {
      await worker.terminate(); // a call still waiting ends with an error (the 'exit' above)
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
