/**
 * A small LSP client over stdio (docs/kernel.md §6.3 "Timeouts", §6.4): vscode-jsonrpc framing, server→client
 * requests answered by the backend, and every failure mapped to a kernel error — a request past its
 * deadline is `BackendTimeout`, EOF or process exit is `BackendCrashed` (with the stderr tail), a waited-for
 * condition that never comes is whatever the caller names (`IndexingTimeout`), an error response is
 * `BackendError` (callers may map it further). Stderr goes to `<session>/logs/<backend>.log`, capped at 1 MiB.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import * as rpc from 'vscode-jsonrpc/node.js';
import { KernelError } from '../../errors.js';
import { onAbort } from '../../lifecycle.js';
import { removePidFile, writePidFile } from '../../session.js';
import { LspErrorCode, Method } from './protocol.js';

export const INITIALIZE_TIMEOUT_MS = 30_000;
export const REQUEST_TIMEOUT_MS = 60_000;
const LOG_CAP = 1024 * 1024;
const TAIL = 4096;
const KILL_AFTER_MS = 2000;

export type ServerRequestHandler = (method: string, params: unknown) => unknown;

export interface LspClientOptions {
  /** Backend name used in errors, logs and the pid file: `pyright`, `rust-analyzer`. */
  backend: string;
  argv: string[];
  cwd: string;
  /** The server's whole environment (the caller's; the kernel never reads process.env). Default: empty. */
  env?: NodeJS.ProcessEnv;
  /** Session dir: stderr goes to logs/<backend>.log and the pid to backends/<backend>.pid. */
  sessionDir?: string | null;
  initializeTimeoutMs?: number;
  requestTimeoutMs?: number;
  /** Server→client requests; `undefined` answers MethodNotFound. */
  onRequest?: ServerRequestHandler;
}

export interface Exited {
  exit_code: number | null;
  signal: string | null;
}

export class LspClient {
  private readonly child: ChildProcess;
  private readonly conn: rpc.MessageConnection;
  private readonly listeners = new Map<string, ((params: unknown) => void)[]>();
  private stderrTail = '';
  private logBytes = 0;
  private exited: Exited | null = null;
  private readonly exitWaiters: ((e: Exited) => void)[] = [];
  private spawnError: string | null = null;
  private closing = false;
  readonly requestTimeoutMs: number;
  readonly initializeTimeoutMs: number;

  constructor(readonly o: LspClientOptions) {
    this.requestTimeoutMs = o.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
    this.initializeTimeoutMs = o.initializeTimeoutMs ?? INITIALIZE_TIMEOUT_MS;
    const logFile = o.sessionDir ? join(o.sessionDir, 'logs', `${o.backend}.log`) : null;
    if (logFile) {
      try {
        mkdirSync(dirname(logFile), { recursive: true });
        writeFileSync(logFile, '');
      } catch {
        /* logging is best effort */
      }
    }
    this.child = spawn(o.argv[0]!, o.argv.slice(1), {
      cwd: o.cwd,
      env: o.env ?? {},
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.child.on('error', (e) => {
      this.spawnError = (e as NodeJS.ErrnoException).code ?? e.message;
      this.markExited({ exit_code: null, signal: null });
    });
    this.child.on('exit', (code, signal) => this.markExited({ exit_code: code, signal }));
    this.child.stdin?.on('error', () => undefined);
    this.child.stderr?.on('data', (d: Buffer) => {
      const s = d.toString('utf8');
      this.stderrTail = (this.stderrTail + s).slice(-TAIL);
      if (logFile && this.logBytes < LOG_CAP) {
        const chunk = d.subarray(0, LOG_CAP - this.logBytes);
        this.logBytes += chunk.length;
        try {
          appendFileSync(logFile, chunk);
        } catch {
          /* best effort */
        }
      }
    });
    this.conn = rpc.createMessageConnection(
      new rpc.StreamMessageReader(this.child.stdout!),
      new rpc.StreamMessageWriter(this.child.stdin!),
    );
    this.conn.onRequest((method: string, params: unknown) => {
      const r = o.onRequest?.(method, params);
      if (r === undefined) return new rpc.ResponseError(LspErrorCode.MethodNotFound, `unhandled method ${method}`);
      return r;
    });
    this.conn.onNotification((method: string, params: unknown) => {
      for (const l of this.listeners.get(method) ?? []) l(params);
    });
    this.conn.onError(() => undefined);
    this.conn.onClose(() => {
      // EOF on stdout: the process is gone or about to be; exit status arrives through 'exit'.
      if (!this.exited)
        setTimeout(
          () => this.markExited({ exit_code: this.child.exitCode, signal: this.child.signalCode }),
          200,
        ).unref();
    });
    this.conn.listen();
    if (o.sessionDir && this.child.pid) writePidFile(o.sessionDir, o.backend, this.child.pid);
    // An interrupted CLI call (SIGINT/SIGTERM) must not leave the server running.
    this.unregisterAbort = onAbort(`${o.backend} language server`, () => {
      if (!this.exited) this.child.kill('SIGKILL');
    });
  }

  private readonly unregisterAbort: () => void;

  private released(): void {
    this.unregisterAbort();
    this.conn.dispose();
    if (this.o.sessionDir) removePidFile(this.o.sessionDir, this.o.backend);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get alive(): boolean {
    return this.exited === null;
  }

  /** The last few KiB of the server's stderr. */
  get stderr(): string {
    return this.stderrTail;
  }

  private markExited(e: Exited): void {
    if (this.exited) return;
    this.exited = e;
    for (const w of this.exitWaiters.splice(0)) w(e);
  }

  private crashed(e: Exited): KernelError {
    if (this.spawnError) {
      return new KernelError('BackendUnavailable', `cannot start ${this.o.backend}: ${this.spawnError}`, {
        backend: this.o.backend,
        searched: [this.o.argv[0]],
        probe_error: this.spawnError,
      });
    }
    const how = e.signal ? `signal ${e.signal}` : `exit code ${e.exit_code}`;
    return new KernelError('BackendCrashed', `${this.o.backend} exited unexpectedly (${how})`, {
      backend: this.o.backend,
      exit_code: e.exit_code,
      signal: e.signal,
      stderr_tail: this.stderrTail.trim(),
    });
  }

  private whenExited(): Promise<Exited> {
    if (this.exited) return Promise.resolve(this.exited);
    return new Promise((r) => this.exitWaiters.push(r));
  }

  /**
   * Race `p` against the deadline and the process's exit. A deadline gives `onTimeout()`, an exit gives
   * `BackendCrashed` (or `BackendUnavailable` when the process never started).
   */
  race<T>(p: Promise<T>, timeoutMs: number, onTimeout: () => KernelError, cancel?: () => void): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let done = false;
      const finish = (f: () => void) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        f();
      };
      const timer = setTimeout(() => {
        cancel?.();
        finish(() => reject(onTimeout()));
      }, timeoutMs);
      p.then(
        (v) => finish(() => resolve(v)),
        (e) => finish(() => reject(e)),
      );
      void this.whenExited().then((e) => finish(() => reject(this.crashed(e))));
    });
  }

  /** A request with the kernel's timeout and error mapping. */
  async request<T>(
    method: string,
    params: unknown,
    timeoutMs = method === Method.initialize ? this.initializeTimeoutMs : this.requestTimeoutMs,
  ): Promise<T> {
    // A process that never started (ENOENT) has no pid; its 'error' event arrives on the next tick.
    if (this.child.pid === undefined) throw this.crashed(await this.whenExited());
    if (this.exited) throw this.crashed(this.exited);
    const cts = new rpc.CancellationTokenSource();
    const sent = this.conn.sendRequest(method, params, cts.token) as Promise<T>;
    try {
      return await this.race(
        sent,
        timeoutMs,
        () =>
          new KernelError('BackendTimeout', `${this.o.backend} did not answer ${method} within ${timeoutMs / 1000} s`, {
            backend: this.o.backend,
            request: method,
            timeout_seconds: timeoutMs / 1000,
          }),
        () => cts.cancel(),
      );
    } catch (e) {
      if (e instanceof KernelError) throw e;
      if (e instanceof rpc.ResponseError) {
        throw new KernelError('BackendError', `${this.o.backend} failed ${method}: ${e.message}`, {
          backend: this.o.backend,
          request: method,
          lsp_code: e.code,
          message: e.message,
        });
      }
      if (this.exited) throw this.crashed(this.exited);
      const msg = e instanceof Error ? e.message : String(e);
      throw new KernelError('BackendError', `${this.o.backend} failed ${method}: ${msg}`, {
        backend: this.o.backend,
        request: method,
        lsp_code: null,
        message: msg,
      });
    } finally {
      cts.dispose();
    }
  }

  notify(method: string, params?: unknown): void {
    if (this.exited || this.child.pid === undefined) return;
    void this.conn.sendNotification(method, params).catch(() => undefined);
  }

  /** Listen to a server notification. */
  on(method: string, listener: (params: unknown) => void): void {
    let l = this.listeners.get(method);
    if (!l) this.listeners.set(method, (l = []));
    l.push(listener);
  }

  /** Shutdown: `shutdown`, then `exit`, then SIGKILL after 2 s. Never throws. */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    if (!this.exited) {
      try {
        await this.request(Method.shutdown, null, KILL_AFTER_MS);
      } catch {
        /* the server may be wedged; we kill it below */
      }
      this.notify(Method.exit);
      const t = setTimeout(() => this.child.kill('SIGKILL'), KILL_AFTER_MS);
      await this.whenExited();
      clearTimeout(t);
    }
    this.released();
  }

  /** Kill without the shutdown handshake (a backend that already failed). */
  async kill(): Promise<void> {
    this.closing = true;
    if (!this.exited) {
      this.child.kill('SIGKILL');
      await this.whenExited();
    }
    this.released();
  }
}
