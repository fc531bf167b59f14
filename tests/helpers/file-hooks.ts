/**
 * Cleanup that a helper module needs after each test file (or each test), run by the setup file
 * tests/helpers/file-setup.ts. A helper registers it once, when the helper module loads; the setup file runs
 * before every test file and hooks the registered cleanups into that file. A hook written at the top of the
 * helper module itself would be attached only to the first file that imported it when vitest runs several
 * files in one process without isolation (vitest.config.ts).
 */
type Cleanup = () => void | Promise<void>;

interface Registry {
  afterFile: Cleanup[];
  afterTest: Cleanup[];
}

const KEY = Symbol.for('tugcode.tests.fileHooks');

export function registry(): Registry {
  const g = globalThis as { [KEY]?: Registry };
  return (g[KEY] ??= { afterFile: [], afterTest: [] });
}

/** `fn` runs after every test file of this process (once per file, in the order registered). */
export function afterEachFile(fn: Cleanup): void {
  registry().afterFile.push(fn);
}

/** `fn` runs after every test of this process. */
export function afterEachTest(fn: Cleanup): void {
  registry().afterTest.push(fn);
}
