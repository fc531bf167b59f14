import { defineConfig } from 'vitest/config';

export default defineConfig({
  // src/kernel/code-cache.cts is CommonJS TypeScript (bin/tugcode.cjs requires its build output).
  esbuild: { include: /\.(m?ts|cts|[jt]sx)$/ },
  test: {
    include: ['tests/**/*.test.ts'],
    pool: 'forks',
    // One throwaway PostgreSQL server for the run (tests/helpers/pg.ts hands it to the tests).
    globalSetup: ['./tests/helpers/pg-global-setup.ts'],
    reporters: ['default', './tests/helpers/summary-reporter.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Tests spawn real CLI processes and git; on 2 cores more workers only add contention.
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
  },
});
