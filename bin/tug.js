#!/usr/bin/env node
// The `tug` refactor kernel CLI (05-kernel.md §3). Loads only the kernel; typescript is imported lazily.
import { statSync } from 'node:fs';

// The bundle (dist/bundle-tug, scripts/bundle.mjs) starts faster; a later plain `tsc` build makes it stale.
const mtime = (u) => {
  try {
    return statSync(u).mtimeMs;
  } catch {
    return -1;
  }
};
const bundled = new URL('../dist/bundle-tug/tug.js', import.meta.url);
const dir =
  mtime(bundled) >= mtime(new URL('../dist/kernel/cli/tug.js', import.meta.url))
    ? '../dist/bundle-tug/'
    : '../dist/kernel/cli/';
const { runKernelCli } = await import(new URL(dir + 'tug.js', import.meta.url).href);
const { installSignalHandlers } = await import(new URL(dir + 'signals.js', import.meta.url).href);

// SIGINT/SIGTERM: backends, verifier processes, sandboxes and the lock are released, then 130/143.
installSignalHandlers((code, errors) => {
  for (const e of errors) process.stderr.write(`tug: cleanup failed: ${e}\n`);
  process.exit(code);
});

process.stdout.on('error', (e) => {
  if (e.code === 'EPIPE') process.exit(0);
});

try {
  const r = await runKernelCli(process.argv.slice(2), {
    prog: 'tug',
    env: process.env,
    cwd: process.cwd(),
    writeLog: (line) => process.stderr.write(line),
  });
  if (r.stdout) process.stdout.write(r.stdout);
  if (r.stderr) process.stderr.write(r.stderr);
  process.exitCode = r.exitCode;
} catch (e) {
  process.stderr.write(`tug: InternalError: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exitCode = 10;
}
