/**
 * The one subprocess runner of the verifiers: argv only, never a shell; its own process group, killed on
 * timeout and on an interrupted call; a 16 KiB tail of stdout+stderr for the check's `output`, and, when the
 * caller needs it (JSON reports of py-compile, the pyright CLI and cargo), stdout itself up to 64 MiB.
 */
import { spawn } from 'node:child_process';
import { onAbort } from '../lifecycle.js';

const TAIL = 16 * 1024;
const MAX_STDOUT = 64 * 1024 * 1024;

export interface Captured {
  exit_code: number | null;
  signal: string | null;
  timed_out: boolean;
  stdout: string;
  output: string;
  spawn_error: string | null;
  duration_ms: number;
}

export function runCapture(
  argv: string[],
  cwd: string,
  timeoutMs: number,
  env: Record<string, string> = {},
  opts: { keepStdout?: boolean } = {},
): Promise<Captured> {
  const keepStdout = opts.keepStdout ?? true;
  const t0 = Date.now();
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tail = '';
    let timedOut = false;
    const child = spawn(argv[0]!, argv.slice(1), {
      cwd,
      env: { ...process.env, TUG_SANDBOX: '1', ...env },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // The child runs in its own process group; an interrupted call kills the whole group.
    const unregister = onAbort(`process ${argv[0]}`, () => {
      if (child.pid) process.kill(-child.pid, 'SIGKILL');
    });
    const addTail = (d: Buffer) => {
      tail = (tail + d.toString('utf8')).slice(-TAIL);
    };
    child.stdout?.on('data', (d: Buffer) => {
      if (keepStdout && size < MAX_STDOUT) {
        chunks.push(d);
        size += d.length;
      }
      addTail(d);
    });
    child.stderr?.on('data', addTail);
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    }, timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      unregister();
      resolve({
        exit_code: null,
        signal: null,
        timed_out: false,
        stdout: '',
        output: '',
        spawn_error: (e as NodeJS.ErrnoException).code ?? e.message,
        duration_ms: Date.now() - t0,
      });
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      unregister();
      resolve({
        exit_code: code,
        signal,
        timed_out: timedOut,
        stdout: Buffer.concat(chunks).toString('utf8'),
        output: tail,
        spawn_error: null,
        duration_ms: Date.now() - t0,
      });
    });
  });
}
