import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { delimiter, isAbsolute, join } from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The longest files, longest first. With no durations cached (a fresh clone) vitest keeps the files in path
 * order, so one of these could start last and keep one worker busy alone while the other idles: they start
 * first instead, and the many short files fill in around them.
 */
const SLOW_FIRST = [
  'tests/board/demo.test.ts',
  'tests/pg/contract.test.ts',
  'tests/board/browser.test.ts',
  'tests/run/fault-injection.test.ts',
  'tests/state/race.test.ts',
  'tests/kernel/python/fixtures-1.test.ts',
  'tests/kernel/python/fixtures-2.test.ts',
  'tests/kernel/python/fixtures-3.test.ts',
  'tests/pg/state-move.test.ts',
  'tests/pg/run-hosts.test.ts',
  'tests/cli/envelopes.test.ts',
  'tests/kernel/operation-guarantees.test.ts',
  'tests/agents-real/claude.test.ts',
  'tests/run/worktree-faults.test.ts',
  'tests/kernel/python/verify.test.ts',
  'tests/agents-real/codex.test.ts',
  'tests/kernel/e2e.test.ts',
  'tests/run/demo.test.ts',
  'tests/kernel/envelopes.test.ts',
  'tests/pg/retry.test.ts',
  'tests/kernel/rename-paths.test.ts',
];

/**
 * A machine-wide NODE_EXTRA_CA_CERTS makes every Node process parse that certificate bundle as it starts:
 * ~90 ms of CPU here, against ~20 ms for the rest of `node -e 0`, and the suite starts ~2,500 Node processes
 * (the CLI, drivers, pyright, the agent CLIs) that only talk to 127.0.0.1. The tests' processes start without
 * it; the one call that reaches the npm registry (tests/helpers/agent-clis.ts) hands it back.
 */
if (process.env.NODE_EXTRA_CA_CERTS !== undefined) {
  process.env.TUGCODE_TEST_EXTRA_CA_CERTS = process.env.NODE_EXTRA_CA_CERTS;
  delete process.env.NODE_EXTRA_CA_CERTS;
}

/**
 * A `python3` on PATH that is a version manager's shim (pyenv's is a bash script that runs ~20 processes to
 * pick the interpreter) costs ~0.14 s of CPU per call against ~0.07 s for the interpreter itself, and the
 * Python tests start ~250 of them (the kernel's probe, pyright's three queries per cold start, py-compile).
 * The tests' processes find, first on PATH, a `python3` link to the interpreter the shim picks here (the
 * same sys.path); nothing else on PATH moves.
 */
function firstOnPath(name: string): string | null {
  for (const d of (process.env.PATH ?? '').split(delimiter)) {
    if (d && existsSync(join(d, name))) return join(d, name);
  }
  return null;
}
{
  const shim = firstOnPath('python3');
  const isScript = (f: string) => {
    const fd = openSync(f, 'r');
    try {
      const head = Buffer.alloc(2);
      return readSync(fd, head, 0, 2, 0) === 2 && head.toString() === '#!';
    } finally {
      closeSync(fd);
    }
  };
  const r =
    shim && isScript(shim) ? spawnSync(shim, ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }) : null;
  const exe = r?.status === 0 ? r.stdout.trim() : '';
  if (isAbsolute(exe) && existsSync(exe) && !isScript(exe)) {
    // One directory per interpreter, shared by concurrent runs: the link is replaced atomically.
    const dir = join(tmpdir(), `tugcode-test-python-${createHash('sha256').update(exe).digest('hex').slice(0, 12)}`);
    mkdirSync(dir, { recursive: true });
    const tmp = join(dir, `.python3-${process.pid}`);
    rmSync(tmp, { force: true });
    symlinkSync(exe, tmp);
    renameSync(tmp, join(dir, 'python3'));
    process.env.PATH = `${dir}${delimiter}${process.env.PATH ?? ''}`;
  }
}

const FORKS = Number(process.env.TUGCODE_TEST_FORKS) || Math.min(availableParallelism(), 8) + 1;

class SlowFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (f: TestSpecification) => {
      const i = SLOW_FIRST.findIndex((s) => f.moduleId.endsWith(s));
      return i < 0 ? SLOW_FIRST.length : i;
    };
    return (await super.sort(files))
      .map((f, i) => ({ f, i, r: rank(f) }))
      .sort((a, b) => a.r - b.r || a.i - b.i)
      .map((x) => x.f);
  }
}

export default defineConfig({
  // src/kernel/code-cache.cts is CommonJS TypeScript (bin/tugcode.cjs requires its build output).
  esbuild: { include: /\.(m?ts|cts|[jt]sx)$/ },
  test: {
    include: ['tests/**/*.test.ts'],
    pool: 'forks',
    // One throwaway PostgreSQL server for the run (tests/helpers/pg.ts hands it to the tests).
    globalSetup: ['./tests/helpers/pg-global-setup.ts'],
    // TUGCODE_CPU_PROBE=<file.jsonl>: each file's CPU seconds and span, for bench/suite-cpu.mjs.
    setupFiles: process.env.TUGCODE_CPU_PROBE ? ['./tests/helpers/cpu-probe.ts'] : [],
    reporters: ['default', './tests/helpers/summary-reporter.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // One worker more than the cores: a file waiting on its child processes (a notify timeout, a watchdog's
    // stall, a browser) leaves a core idle otherwise. On 2 cores: 2 workers kept 1.59 cores busy (857 CPU-s
    // in 550 s), 3 kept 1.80 (845 CPU-s in 469 s). TUGCODE_TEST_FORKS=<n> sets another count.
    poolOptions: { forks: { maxForks: FORKS, minForks: 1 } },
    sequence: { sequencer: SlowFirst },
  },
});
