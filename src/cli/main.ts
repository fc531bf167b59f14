/**
 * The tugcode entry point: the process's argv, environment and streams, and the only place that writes the
 * output and sets the exit code. The commander wiring is argv.ts.
 */
import { existsSync, writeSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { helpOfSubcommand, runArgv } from './argv.js';
import { runRefactor, splitRefactorArgv } from '../commands/refactor.js';
import { stdoutClosed } from './stdout-closed.js';

export async function main(argv: string[] = process.argv.slice(2)): Promise<number> {
  const cwd = workingDir();
  argv = helpOfSubcommand(argv);
  // `tugcode refactor …` bypasses commander: the kernel front door owns its argv (docs/kernel.md §3.1).
  const refactor = splitRefactorArgv(argv, cwd);
  if (refactor) {
    // SIGINT/SIGTERM: the kernel releases its lock and sandboxes, then we exit 130/143 (docs/kernel.md §3.4).
    const { installSignalHandlers } = await import('../kernel/light.js');
    const off = installSignalHandlers((code, errors) => {
      for (const e of errors) process.stderr.write(`tugcode: cleanup failed: ${e}\n`);
      process.exit(code);
    });
    const r = await runRefactor(refactor.rest, refactor.cwd, process.env, (line) => process.stderr.write(line));
    off();
    if (r.stdout) process.stdout.write(r.stdout);
    if (r.stderr) process.stderr.write(r.stderr);
    return r.exitCode;
  }
  // Under `tugcode run`, an agent's state commands go through the driver (docs/agents.md §1.5).
  const relay = process.env.TUG_STATE_RELAY;
  if (relay) {
    const { relayed, sendToRelay } = await import('../run/state-relay.js');
    if (relayed(argv)) {
      const r = await sendToRelay(relay, argv, cwd);
      process.stdout.write(r.stdout);
      process.stderr.write(r.stderr);
      return r.exit;
    }
  }
  // Asked only when needed (text colours, reading stdin): creating process.stdin or process.stdout loads net
  // and the stream modules.
  const r = await runArgv(argv, {
    cwd,
    env: process.env,
    get stdinIsTTY() {
      return Boolean(process.stdin.isTTY);
    },
    get stdoutIsTTY() {
      return Boolean(process.stdout.isTTY);
    },
  });
  writeAll(1, r.stdout);
  writeAll(2, r.stderr);
  return r.exitCode;
}

/**
 * The working directory. One deleted under the shell has none (process.cwd() throws ENOENT): it is then
 * named by $PWD when that is gone too (else a path that cannot exist), so the command reports a directory
 * that does not exist, as one JSON document, and `-C <dir>` still works (docs/output.md §1).
 */
function workingDir(): string {
  try {
    return process.cwd();
  } catch {
    const pwd = process.env.PWD;
    return pwd && isAbsolute(pwd) && !existsSync(pwd) ? pwd : '/(the deleted working directory)';
  }
}

/**
 * Writes a command's output with fs.writeSync: the process.stdout stream would load net and the stream
 * modules (~5 ms of a hot command). A full non-blocking pipe (EAGAIN) hands the rest to the stream; a reader
 * gone (EPIPE) ends the process as the stream's handler below does.
 */
function writeAll(fd: 1 | 2, text: string): void {
  if (!text) return;
  const bytes = Buffer.from(text, 'utf8');
  let done = 0;
  try {
    while (done < bytes.length) done += writeSync(fd, bytes, done);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EAGAIN') (fd === 1 ? process.stdout : process.stderr).write(bytes.subarray(done));
    else if (code === 'EPIPE') {
      if (fd === 1) stdoutClosed();
    } else throw e;
  }
}

/**
 * A reader gone from stdout ends the process quietly (or stops a `run`, stdout-closed.ts), whoever writes to
 * the stream. The handler is attached when the stream is first used, since creating it costs what writeAll saves.
 */
function onStreamCreated(name: 'stdout' | 'stderr', attach: (s: NodeJS.WriteStream) => void): void {
  const d = Object.getOwnPropertyDescriptor(process, name);
  if (!d?.get || !d.configurable) return attach(process[name]);
  const get = d.get;
  Object.defineProperty(process, name, {
    configurable: true,
    enumerable: d.enumerable,
    get() {
      Object.defineProperty(process, name, d);
      const s = get.call(process) as NodeJS.WriteStream;
      attach(s);
      return s;
    },
  });
}

onStreamCreated('stdout', (s) =>
  s.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') stdoutClosed();
  }),
);
// A reader gone from stderr (`tugcode … 2>&1 | head`): its lines are lost, as writeAll drops them, and the
// command goes on to its end (a run releases its claims, a demo removes its repository) instead of dying of
// an unhandled stream error.
onStreamCreated('stderr', (s) =>
  s.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE') throw e;
  }),
);

main().then(
  (code) => {
    process.exitCode = code;
  },
  (e) => {
    // Last resort: never a Node stack trace on stdout.
    process.stderr.write(`tugcode: InternalError: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 10;
  },
);
