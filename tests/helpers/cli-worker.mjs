// The worker thread of tests/helpers/cli-in-process.ts: runs command lines through the built CLI's runArgv
// (dist/cli/argv.js, the code `tugcode` runs after its start-up), one at a time, each with its own directory and
// environment, and wakes the waiting test thread when one is done.
import { workerData } from 'node:worker_threads';
import { pathToFileURL } from 'node:url';

const { port, done, argvModule } = workerData;
const flag = new Int32Array(done);
let runArgv;
let loadError;
try {
  ({ runArgv } = await import(pathToFileURL(argvModule).href));
} catch (e) {
  loadError = e;
}

port.on('message', async ({ argv, cwd, env }) => {
  // A worker has its own copy of process.env: the call sees exactly its environment, as a child process would.
  for (const k of Object.keys(process.env)) delete process.env[k];
  Object.assign(process.env, env);
  let reply;
  try {
    if (loadError) throw loadError;
    const r = await runArgv(argv, { cwd, env: process.env, stdinIsTTY: false, stdoutIsTTY: false });
    reply = { code: r.exitCode, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    reply = { code: -1, stdout: '', stderr: `cli-worker: ${e?.stack ?? e}` };
  }
  port.postMessage(reply);
  Atomics.store(flag, 0, 1);
  Atomics.notify(flag, 0);
});
