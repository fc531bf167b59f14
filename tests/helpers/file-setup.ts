/** Runs before each test file: the helpers' registered cleanups (tests/helpers/file-hooks.ts) for this file. */
import { afterAll, afterEach } from 'vitest';
import { registry } from './file-hooks.js';

afterEach(async () => {
  for (const fn of registry().afterTest) await fn();
});

afterAll(async () => {
  for (const fn of registry().afterFile) await fn();
});
