/**
 * vitest globalSetup: one temporary directory for the run, removed at teardown. Test processes keep in it what
 * outlives a test file (tests/helpers/repo.ts's initialised `.git`), since vitest may end its worker processes
 * without their exit handlers running.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    tugcodeRunTmp: string;
  }
}

export default function setup(project: TestProject): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'tugcode-suite-'));
  project.provide('tugcodeRunTmp', dir);
  return () => rmSync(dir, { recursive: true, force: true });
}
