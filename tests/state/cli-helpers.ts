/** CLI-process helpers for the state contract tests: real repos, real linked worktrees, the built CLI. */
import { join } from 'node:path';
import { expect } from 'vitest';
import { runCli, runJson, type CliResult, type RunOpts as CliRunOpts } from '../helpers/cli.js';
import { git, tempDir } from '../helpers/repo.js';
import { dbPathOf, dump, planRepo, T0 } from './helpers.js';

export interface RunOptions {
  cwd?: string;
  env?: Record<string, string | undefined>;
  input?: string;
  now?: string;
  /** The runner: the real CLI (default) or runCliInProcess. */
  run?: (args: string[], opts: CliRunOpts) => CliResult;
}

/** `tugcode state <sub> …args --json`, checked against the command's schema. */
export function st(root: string, args: string[], o: RunOptions = {}): CliResult {
  return runJson(
    `state ${args[0]}`,
    ['state', ...args],
    { cwd: o.cwd ?? root, env: { TUGCODE_NOW: o.now ?? T0, ...o.env }, input: o.input },
    o.run,
  );
}

/** Text mode (no --json). */
export function stText(root: string, args: string[], o: RunOptions = {}): CliResult {
  return runCli(['state', ...args], {
    cwd: o.cwd ?? root,
    env: { TUGCODE_NOW: o.now ?? T0, ...o.env },
    input: o.input,
  });
}

/** A linked worktree of `root` on a new branch; returns its canonical path. */
export function addWorktree(root: string, name: string): string {
  const path = join(tempDir('tugcode-lw-'), name);
  git(root, 'worktree', 'add', '-q', path, '-b', `wt-${name}-${Math.random().toString(36).slice(2, 8)}`);
  return path;
}

/** A repo with the demo plan committed and initialized, plus two linked worktrees. */
export function cliRepo(plans?: Record<string, string>): { root: string; w1: string; w2: string } {
  const root = planRepo(plans);
  const w1 = addWorktree(root, 'one');
  const w2 = addWorktree(root, 'two');
  const r = st(root, ['init', 'demo']);
  expect(r.json.status, r.stdout + r.stderr).toBe('ok');
  return { root, w1, w2 };
}

/** Run a command expected to fail with `code`/`exit` and prove that no table changed. */
export function refusedCli(root: string, args: string[], code: string, exit: number, o: RunOptions = {}): CliResult {
  const before = dump(dbPathOf(root));
  const r = st(root, args, o);
  expect(r.json?.status, r.stdout + r.stderr).toBe('error');
  expect(r.json.error.code, JSON.stringify(r.json.error)).toBe(code);
  expect(r.code).toBe(exit);
  expect(dump(dbPathOf(root))).toEqual(before);
  return r;
}
