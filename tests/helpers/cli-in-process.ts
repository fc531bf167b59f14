/**
 * The built CLI's own path from argv to output (dist/cli/argv.js: commander, the input tables, the operation,
 * the envelope) run in a worker thread of the test process instead of a `node bin/tugcode.cjs` child: ~5 ms
 * instead of ~0.1 s of CPU per call. For tests of the engines' rules that make many calls (the state contract on
 * both backends); the tests of the CLI itself, and at least one test of each command, spawn the real CLI
 * (tests/helpers/cli.ts). Synchronous like runCli: the test thread waits on an Atomics flag. No stdin: a call
 * with input goes through the real CLI. The worker is shared by the file's calls and ends with the file.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { MessageChannel, Worker, receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import { afterEachFile } from './file-hooks.js';
import { ROOT, type CliResult, type RunOpts } from './cli.js';

const ARGV_JS = join(ROOT, 'dist', 'cli', 'argv.js');
const WORKER = join(ROOT, 'tests', 'helpers', 'cli-worker.mjs');

let worker: { thread: Worker; port: MessagePort; flag: Int32Array } | undefined;

function started() {
  if (worker) return worker;
  if (!existsSync(ARGV_JS)) throw new Error(`${ARGV_JS} is missing: npm run build`);
  const done = new SharedArrayBuffer(4);
  const { port1, port2 } = new MessageChannel();
  const thread = new Worker(WORKER, {
    workerData: { port: port2, done, argvModule: ARGV_JS },
    transferList: [port2],
    stdout: true,
    stderr: true,
  });
  thread.unref();
  worker = { thread, port: port1, flag: new Int32Array(done) };
  return worker;
}

afterEachFile(async () => {
  const w = worker;
  worker = undefined;
  if (w) {
    w.port.close();
    await w.thread.terminate();
  }
});

/**
 * Whether a call reads stdin (given input, a `-` file, `state update --batch`, `state import` with no file) or
 * never ends (`--watch`): the real CLI's business, since the worker shares the test process's stdin.
 */
export function needsRealCli(args: string[], input?: string): boolean {
  const words = args.filter((a) => !a.startsWith('-'));
  return (
    input !== undefined ||
    args.includes('-') ||
    args.includes('--batch') ||
    args.includes('--watch') ||
    (words[0] === 'state' && words[1] === 'import' && words.length < 3)
  );
}

/** `tugcode …args` in-process, with runCli's environment (NODE_ENV=test, NO_COLOR) and result. */
export function runCliInProcess(args: string[], opts: RunOpts): CliResult {
  if (needsRealCli(args, opts.input)) throw new Error(`tugcode ${args.join(' ')} needs the real CLI (runCli)`);
  const w = started();
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...process.env, NODE_ENV: 'test', NO_COLOR: '1', ...opts.env }))
    if (v !== undefined) env[k] = v;
  Atomics.store(w.flag, 0, 0);
  w.port.postMessage({ argv: args, cwd: opts.cwd, env });
  // The worker's start-up (loading the CLI's modules) comes first on the first call.
  if (Atomics.wait(w.flag, 0, 0, 120_000) === 'timed-out') {
    worker = undefined; // the next call starts a fresh worker
    void w.thread.terminate();
    throw new Error(`tugcode ${args.join(' ')}: no answer in 120 s`);
  }
  const m = receiveMessageOnPort(w.port);
  if (!m) throw new Error(`tugcode ${args.join(' ')}: the worker answered nothing`);
  const r = m.message as { code: number; stdout: string; stderr: string };
  let json: unknown;
  try {
    json = JSON.parse(r.stdout);
  } catch {
    json = undefined;
  }
  return { code: r.code, stdout: r.stdout, stderr: r.stderr, json };
}
