/**
 * vitest globalSetup: one throwaway PostgreSQL server for the whole run (tests/helpers/pg-server.ts), stopped and
 * deleted at teardown.
 *
 * Lazy on purpose: setup only prepares the server's directory (~20 ms) and provides it to the workers
 * (`provide('tugcodePg', { baseDir })`). The first test that asks for PostgreSQL (tests/helpers/pg.ts) runs initdb
 * and starts it (~0.6 s, once per run); the other workers wait for it. Runs without PostgreSQL tests never start it.
 *
 * A failure does not fail the run: only the tests that ask for PostgreSQL fail, with the reason.
 * TUGCODE_TEST_PG=off skips the server altogether.
 */
import type { TestProject } from 'vitest/node';
import {
  destroyPgServer,
  destroyPgServerSync,
  preparePgServer,
  reapStalePgServers,
  type PgServerInfo,
} from './pg-server.js';

export interface ProvidedPg {
  /** The shared server's directory; its ready.json / failed.json say when and how it started. */
  baseDir?: string;
  /** Why there is no shared server. */
  error?: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    tugcodePg: ProvidedPg;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  if (process.env.TUGCODE_TEST_PG === 'off') {
    project.provide('tugcodePg', { error: 'the test PostgreSQL server is disabled (TUGCODE_TEST_PG=off)' });
    return async () => undefined;
  }
  let info: PgServerInfo;
  try {
    await reapStalePgServers();
    info = await preparePgServer({ keepTemplate: true }); // private servers start from its copy
  } catch (e) {
    project.provide('tugcodePg', {
      error: `the test PostgreSQL server could not be prepared: ${(e as Error).message}`,
    });
    return async () => undefined;
  }
  project.provide('tugcodePg', { baseDir: info.baseDir });
  // Backstop if vitest exits without running teardown.
  const onExit = () => destroyPgServerSync(info);
  process.once('exit', onExit);
  return async () => {
    process.off('exit', onExit);
    await destroyPgServer(info);
  };
}
