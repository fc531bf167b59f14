import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { prepareSuiteEnv } from './tests/helpers/suite-env.js';

/**
 * The longest files, longest first. With no durations cached (a fresh clone) vitest keeps the files in path
 * order, so one of these could start last and keep one worker busy alone while the others idle: they start
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

// The processes' environment: no NODE_EXTRA_CA_CERTS, the real python3 before a version manager's shim.
prepareSuiteEnv(process.env);

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
    // A worker process runs file after file without starting again: vitest's start-up and the modules the
    // files share (typescript, the helpers) are paid once per worker instead of once per file. The helpers'
    // per-file cleanups are hooked in by tests/helpers/file-setup.ts.
    isolate: false,
    // One throwaway PostgreSQL server for the run (tests/helpers/pg.ts hands it to the tests), and the run's
    // temporary directory.
    globalSetup: ['./tests/helpers/pg-global-setup.ts', './tests/helpers/tmp-global-setup.ts'],
    // TUGCODE_CPU_PROBE=<file.jsonl>: each file's CPU seconds and span, for bench/suite-cpu.mjs.
    // tests/helpers/file-setup.ts hooks the helpers' cleanups into each file (tests/helpers/file-hooks.ts).
    setupFiles: [
      './tests/helpers/file-setup.ts',
      ...(process.env.TUGCODE_CPU_PROBE ? ['./tests/helpers/cpu-probe.ts'] : []),
    ],
    reporters: ['default', './tests/helpers/summary-reporter.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // One worker more than the cores: a file waiting on its child processes (a notify timeout, a watchdog's
    // stall, a browser) leaves a core idle otherwise. On 2 cores: 2 workers kept 1.59 cores busy (857 CPU-s
    // in 550 s), 3 kept 1.80 (845 CPU-s in 469 s). TUGCODE_TEST_FORKS=<n> sets another count.
    // minForks = maxForks: a pool allowed to shrink ends an idle worker that, without isolation, vitest still
    // counts on ("Terminating worker thread", an unhandled rejection that fails the run).
    poolOptions: { forks: { maxForks: FORKS, minForks: FORKS } },
    sequence: { sequencer: SlowFirst },
  },
});
