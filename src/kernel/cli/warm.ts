/**
 * Warm kernels for a long-lived front door (the MCP server, docs/run.md §5): the same argv and envelopes as
 * `tug`, but one kernel per workspace (and settings) stays open between calls, with its backends warm, and
 * takes the session lock per operation, so a `tug` call in between is never locked out. `KernelThreads`
 * serves them from worker threads, one per workspace, so that the host's own event loop stays free.
 */
import { resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import { KernelError, toKernelError } from '../errors.js';
import { errorEnvelope, type KernelWarning } from '../envelope.js';
import { openKernel, resolveWorkspace } from '../kernel.js';
import { Logger } from '../log.js';
import type { Kernel } from '../kernel.js';
import { parseArgs } from './args.js';
import { cliClock, kernelOptions, runOnKernel, settingsFor, withCallWarnings, type CommandEnv } from './commands.js';

export interface WarmResult {
  envelope: Record<string, unknown>;
  exitCode: number;
  /**
   * From a kernel thread: `JSON.stringify(envelope, null, 2)`, made there. A rename's envelope can be
   * megabytes (its patch), and the host's event loop is what the thread is there to keep free.
   */
  text?: string;
}

/** Warm kernels kept at once (each holds backends: a TypeScript program, maybe language servers). */
const MAX_WARM = 4;

export class KernelHost {
  /** In use order: the least recently used first. */
  private readonly kernels = new Map<string, Promise<Kernel>>();

  constructor(private readonly ce: CommandEnv) {}

  /** One `tug analyze-impact | run | verify …` argv, answered with the envelope `tug --json` prints. */
  async call(argv: string[]): Promise<WarmResult> {
    let debug = false;
    try {
      const a = parseArgs(argv, this.ce.env);
      debug = a.logLevel === 'debug';
      if (a.command !== 'analyze-impact' && a.command !== 'run' && a.command !== 'verify')
        throw new KernelError(
          'InvalidArgument',
          `only analyze-impact, run and verify are served warm, not ${a.command}`,
          {
            message: `unsupported command ${a.command}`,
          },
        );
      const ws = resolveWorkspace(a.workspace ? resolve(this.ce.cwd, a.workspace) : this.ce.cwd);
      const sessionDir = a.sessionDir ? resolve(this.ce.cwd, a.sessionDir) : resolve(ws, '.tug');
      const clock = cliClock(this.ce.env);
      const log = new Logger(a.logLevel ?? 'error', this.ce.logSink, () => clock.now());
      const warnings: KernelWarning[] = [];
      const settings = await settingsFor(a, ws, this.ce, log, warnings);
      const key = JSON.stringify([ws, sessionDir, settings]);
      let opening = this.kernels.get(key);
      if (opening)
        this.kernels.delete(key); // re-inserted below: now the most recently used
      else {
        while (this.kernels.size >= MAX_WARM) {
          const [oldest, k] = this.kernels.entries().next().value as [string, Promise<Kernel>];
          this.kernels.delete(oldest);
          void k.then((x) => x.close()).catch(() => undefined);
        }
        // Per-operation lock: the warm kernel never holds the session between calls.
        opening = openKernel({
          ...kernelOptions(a, ws, a.command, settings, this.ce, log),
          holdLock: false,
          sessionDir,
        });
        opening.catch(() => this.kernels.delete(key));
      }
      this.kernels.set(key, opening);
      // Each call reads the config again, so each reports its unknown keys.
      const envelope = await withCallWarnings(warnings, async () => runOnKernel(await opening, a, settings));
      return { envelope, exitCode: 0 };
    } catch (e) {
      const err = toKernelError(e, debug);
      return { envelope: errorEnvelope(err) as Record<string, unknown>, exitCode: err.exitCode };
    }
  }

  async close(): Promise<void> {
    const all = [...this.kernels.values()];
    this.kernels.clear();
    for (const k of all) await (await k.catch(() => null))?.close();
  }
}

/** Worker threads kept at once, one per workspace (each holds its workspace's warm kernels). */
const MAX_THREADS = 4;

/** What a kernel thread (warm-thread.ts) posts back. */
export type ThreadMessage =
  { type: 'log'; line: string } | { type: 'done'; id: number; result: WarmResult } | { type: 'closed' };

/** What the host posts to a kernel thread. */
export type ThreadRequest = { type: 'call'; id: number; argv: string[] } | { type: 'close' };

/** The envelope of a call its thread did not answer (the thread failed or ended under it). */
function threadFailure(e: unknown): WarmResult {
  const err = toKernelError(e);
  return { envelope: errorEnvelope(err) as Record<string, unknown>, exitCode: err.exitCode };
}

/** One workspace's thread: a KernelHost of its own, its calls answered in the order the thread finishes them. */
class KernelThread {
  private readonly worker: Worker;
  private readonly pending = new Map<number, (r: WarmResult) => void>();
  private next = 0;
  private retiring = false;
  private closing: Promise<void> | undefined;
  private readonly exited: Promise<void>;
  private closed: (() => void) | undefined;

  constructor(ce: CommandEnv, entry: URL) {
    const { logSink, ...data } = ce;
    this.worker = new Worker(entry, { workerData: data });
    // Only a call under way keeps the process alive (ref'd in call()).
    this.worker.unref();
    this.worker.on('message', (m: ThreadMessage) => {
      if (m.type === 'log') logSink?.(m.line);
      else if (m.type === 'closed') this.closed?.();
      else this.settle(m.id, m.result);
    });
    const fail = (e: unknown) => {
      for (const id of [...this.pending.keys()]) this.settle(id, threadFailure(e));
    };
    this.worker.on('error', fail);
    this.exited = new Promise((res) =>
      this.worker.once('exit', (code) => {
        fail(new Error(`the kernel thread ended (exit code ${code})`));
        this.closed?.();
        res();
      }),
    );
  }

  call(argv: string[]): Promise<WarmResult> {
    const id = ++this.next;
    return new Promise((resolve) => {
      if (this.pending.size === 0) this.worker.ref();
      this.pending.set(id, resolve);
      this.worker.postMessage({ type: 'call', id, argv } satisfies ThreadRequest);
    });
  }

  private settle(id: number, result: WarmResult) {
    const resolve = this.pending.get(id);
    if (!resolve) return;
    this.pending.delete(id);
    if (this.pending.size === 0) {
      this.worker.unref();
      if (this.retiring) void this.close();
    }
    resolve(result);
  }

  /** Out of the host's set: closed once its calls are answered. */
  retire() {
    this.retiring = true;
    if (this.pending.size === 0) void this.close();
  }

  /** Closes the thread's kernels (their language servers) and ends the thread. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      // A pending terminate() does not hold the event loop (Node 20): this timer does, until the thread ended.
      const hold = setInterval(() => undefined, 60_000);
      try {
        const closed = new Promise<void>((res) => (this.closed = res));
        this.worker.postMessage({ type: 'close' } satisfies ThreadRequest);
        await closed;
        await this.worker.terminate();
        await this.exited;
      } finally {
        clearInterval(hold);
      }
    })();
    return this.closing;
  }
}

/**
 * KernelHost's calls, each run in its workspace's worker thread: a TypeScript rename is seconds of
 * synchronous CPU (the LanguageService), during which the MCP server must still answer a state call, a ping
 * or a cancellation (docs/run.md §5). Each thread keeps its workspace's kernels warm between calls; calls on
 * one workspace go to one thread, calls on different workspaces run in parallel. `entry` is the thread's
 * module, warm-thread.js of the build. A call refused before it names a workspace is answered here (the
 * same KernelHost code, which opens no kernel for it).
 */
export class KernelThreads {
  /** In use order: the least recently used first. */
  private readonly threads = new Map<string, KernelThread>();
  private readonly local: KernelHost;

  constructor(
    private readonly ce: CommandEnv,
    private readonly entry: URL,
  ) {
    this.local = new KernelHost(ce);
  }

  async call(argv: string[]): Promise<WarmResult> {
    let ws: string;
    try {
      const a = parseArgs(argv, this.ce.env);
      ws = resolveWorkspace(a.workspace ? resolve(this.ce.cwd, a.workspace) : this.ce.cwd);
    } catch {
      return this.local.call(argv);
    }
    let thread = this.threads.get(ws);
    if (thread) this.threads.delete(ws);
    else {
      while (this.threads.size >= MAX_THREADS) {
        const [oldest, t] = this.threads.entries().next().value as [string, KernelThread];
        this.threads.delete(oldest);
        t.retire();
      }
      thread = new KernelThread(this.ce, this.entry);
    }
    this.threads.set(ws, thread);
    return thread.call(argv);
  }

  async close(): Promise<void> {
    const all = [...this.threads.values()];
    this.threads.clear();
    await Promise.all(all.map((t) => t.close()));
    await this.local.close();
  }
}
