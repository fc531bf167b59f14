/**
 * The environment the suite's processes start with, prepared once in vitest's main process
 * (vitest.config.ts) before any worker forks: every test file and every process it starts inherits it.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, isAbsolute, join } from 'node:path';
import { which } from '../../src/kernel/backends/python/interpreter.js';

export function prepareSuiteEnv(env: NodeJS.ProcessEnv): void {
  withoutExtraCaCerts(env);
  interpreterBeforeShim(env);
}

/**
 * A machine-wide NODE_EXTRA_CA_CERTS makes every Node process parse that certificate bundle as it starts:
 * ~90 ms of CPU here, against ~20 ms for the rest of `node -e 0`, and the suite starts ~2,500 Node processes
 * (the CLI, drivers, pyright, the agent CLIs) that only talk to 127.0.0.1. The tests' processes start without
 * it; the one call that reaches the npm registry (tests/helpers/agent-clis.ts) hands it back.
 */
function withoutExtraCaCerts(env: NodeJS.ProcessEnv): void {
  if (env.NODE_EXTRA_CA_CERTS === undefined) return;
  env.TUGCODE_TEST_EXTRA_CA_CERTS = env.NODE_EXTRA_CA_CERTS;
  delete env.NODE_EXTRA_CA_CERTS;
}

/** Whether the file starts with `#!` (a script, such as a version manager's shim). */
function isScript(file: string): boolean {
  const fd = openSync(file, 'r');
  try {
    const head = Buffer.alloc(2);
    return readSync(fd, head, 0, 2, 0) === 2 && head.toString() === '#!';
  } finally {
    closeSync(fd);
  }
}

/**
 * A `python3` on PATH that is a version manager's shim (pyenv's is a bash script that runs ~20 processes to
 * pick the interpreter) costs ~0.14 s of CPU per call against ~0.07 s for the interpreter itself, and the
 * Python tests start ~250 of them (the kernel's probe, pyright's three queries per cold start, py-compile).
 * The tests' processes find, first on PATH, a `python3` link to the interpreter the shim picks here (the
 * same sys.path); nothing else on PATH moves.
 */
function interpreterBeforeShim(env: NodeJS.ProcessEnv): void {
  const shim = which('python3', env);
  if (!shim || !isScript(shim)) return;
  const r = spawnSync(shim, ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8', env });
  const exe = r.status === 0 ? r.stdout.trim() : '';
  if (!isAbsolute(exe) || !existsSync(exe) || isScript(exe)) return;
  // One directory per interpreter, shared by concurrent runs: the link is replaced atomically.
  const dir = join(tmpdir(), `tugcode-test-python-${createHash('sha256').update(exe).digest('hex').slice(0, 12)}`);
  mkdirSync(dir, { recursive: true });
  const tmp = join(dir, `.python3-${process.pid}`);
  rmSync(tmp, { force: true });
  symlinkSync(exe, tmp);
  renameSync(tmp, join(dir, 'python3'));
  env.PATH = `${dir}${delimiter}${env.PATH ?? ''}`;
}
