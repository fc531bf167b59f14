/**
 * The repository layout (src/contract/layout.ts) is derived in one place; the names it gives are what the
 * files, ignore lines, pathspecs and branches of existing repositories already use, so they are pinned here
 * letter for letter.
 */
import { describe, expect, it } from 'vitest';
import {
  integrationBranch,
  isCreateBranch,
  isPlanBranch,
  isRuntimeEntry,
  keptRef,
  logEntryPath,
  planPathForSlug,
  runLockName,
  RUNTIME_EXCLUDE_PATHSPECS,
  RUNTIME_IGNORE_LINES,
  STATE_DB_FILES,
  workerBranch,
  workerBranchPattern,
  workerOfBranch,
  workerOfDir,
  worktreeBranch,
  worktreeDir,
  worktreeNameOf,
} from '../../src/contract/layout.js';

describe('the .tugtool/ layout', () => {
  it('keeps the runtime files out of commits with the same lines and pathspecs as before', () => {
    expect(STATE_DB_FILES).toEqual(['.tugtool/state.db', '.tugtool/state.db-wal', '.tugtool/state.db-shm']);
    expect(RUNTIME_IGNORE_LINES).toEqual([
      '.tugtool/state.db',
      '.tugtool/state.db-wal',
      '.tugtool/state.db-shm',
      '.tugtree/',
      '.tug/',
      '.tugtool/logs/',
      '.tugtool/*.lock',
      '.tugtool/*.lock/',
    ]);
    expect(RUNTIME_EXCLUDE_PATHSPECS).toEqual([
      ':(exclude).tugtool/state.db',
      ':(exclude).tugtool/state.db-wal',
      ':(exclude).tugtool/state.db-shm',
      ':(exclude).tugtree',
      ':(exclude).tug',
      ':(exclude).tugtool/logs',
      ':(exclude,glob).tugtool/*.lock',
      ':(exclude,glob).tugtool/*.lock/**',
    ]);
  });

  it('names plans, log entries and run locks', () => {
    expect(planPathForSlug('demo')).toBe('.tugtool/tugplan-demo.md');
    expect(logEntryPath('demo', 'step-1')).toBe('.tugtool/implementation-log/demo/step-1.md');
    expect(runLockName('demo')).toBe('run-demo.lock');
    for (const n of ['state.db', 'state.db-journal', 'logs', 'run-demo.lock', 'integration', 'integration.lock'])
      expect(isRuntimeEntry(n), n).toBe(true);
    for (const n of ['tugplan-demo.md', 'config.toml', 'implementation-log']) expect(isRuntimeEntry(n), n).toBe(false);
  });
});

describe('branches, worktrees and refs', () => {
  it('names and recognises them', () => {
    expect(integrationBranch('demo')).toBe('tugplan/demo');
    expect(worktreeBranch('demo', '20260101-120000')).toBe('tugplan/demo--20260101-120000');
    expect(workerBranch('demo', 2)).toBe('tugplan/demo--w2');
    expect(workerBranchPattern('demo')).toBe('refs/heads/tugplan/demo--w*');
    expect(worktreeDir('/r', 'tugplan/demo--w2')).toBe('/r/.tugtree/tugplan__demo--w2');
    expect(keptRef('demo', 'step-1', 3)).toBe('refs/tugplan/kept/demo/step-1/attempt3');
    expect(workerOfBranch('tugplan/demo--w12', 'demo')).toBe(12);
    expect(workerOfBranch('tugplan/demo--w', 'demo')).toBeNull();
    expect(workerOfBranch('tugplan/demo-x--w1', 'demo')).toBeNull();
    expect(workerOfBranch('tugplan/demo--name', 'demo')).toBeNull();
    expect(workerOfDir('tugplan__demo--w3', 'demo')).toBe(3);
    expect(worktreeNameOf('/r/.tugtree/tugplan__demo--w1')).toBe('w1');
    expect(worktreeNameOf('/r/elsewhere')).toBeNull();
    expect(isPlanBranch('tugplan/demo', 'demo')).toBe(true);
    expect(isPlanBranch('tugplan/demo--w1', 'demo')).toBe(true);
    expect(isPlanBranch('tugplan/demo-2', 'demo')).toBe(false);
    expect(isCreateBranch('tugplan/demo--20260101-120000', 'demo')).toBe(true);
    expect(isCreateBranch('tugplan/demo--w1')).toBe(false);
    expect(isCreateBranch('tugplan/demo')).toBe(false);
  });
});
