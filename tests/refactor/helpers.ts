/**
 * Shared setup of the refactor plan-integration tests: a small TypeScript project in a real git repo with
 * a plan whose step declares `**Refactors:**`, a linked worktree, in-process state contexts, and the CLI
 * contract check for the kernel-style envelopes of `refactor run-step` / `refactor skip`.
 */
import { join } from 'node:path';
import { expect } from 'vitest';
import { fixedClock } from '../../src/clock.js';
import { CONFIG_DEFAULTS } from '../../src/config/defaults.js';
import type { Config } from '../../src/config/config.js';
import { WarningSink } from '../../src/contract/envelope.js';
import { refactorErrorEnvelope, runStepEnvelope, skipEnvelope } from '../../src/contract/schemas/refactor.js';
import type { StateContext } from '../../src/state/context.js';
import { openStateContext } from '../../src/state/sqlite-open.js';
import { runStep, type RunStepInput } from '../../src/refactor/run-step.js';
import type { RunStepResult } from '../../src/refactor/result.js';
import type { KernelOptions } from '../../src/kernel/types.js';
import { checkSchema, runCli, type CliResult } from '../helpers/cli.js';
import { git, tempDir, tempRepo } from '../helpers/repo.js';
import { planText, type StepSpec } from '../state/helpers.js';

export const T0 = '2026-03-01T10:00:00.000Z';
export const PLAN_PATH = '.tugtool/tugplan-demo.md';

export const TS_FILES = {
  'tsconfig.json': JSON.stringify({
    compilerOptions: { strict: true, target: 'ES2022', module: 'ESNext', moduleResolution: 'Bundler', noEmit: true },
  }),
  'src/util.ts':
    'export function parseConfig(s: string): number {\n  return s.length;\n}\n\nexport function helper(): number {\n  return 2;\n}\n',
  'src/main.ts': "import { parseConfig, helper } from './util';\n\nexport const n = parseConfig('x') + helper();\n",
};

export const RENAME = 'rename-symbol --symbol src/util.ts::parseConfig --to loadConfig';
export const MISSING = 'rename-symbol --symbol src/util.ts::nothingHere --to other';
export const RENAME_HELPER = 'rename-symbol --symbol src/util.ts::helper --to assist';

/** A one-step plan (`step-1`) whose step declares these refactors, plus a second plain step. */
export function refactorPlan(refactors: string[], more: StepSpec[] = []): string {
  return planText([{ id: '1', deps: [], tasks: ['do it'], refactors, commit: 'refactor: rename' }, ...more]);
}

export interface Setup {
  root: string;
  wt: string;
  branch: string;
}

/** Repo with the project and the plan committed, plus a linked worktree on branch `wt-<n>`. */
export function setup(refactors: string[], extraFiles: Record<string, string> = {}): Setup {
  const root = tempRepo({ ...TS_FILES, [PLAN_PATH]: refactorPlan(refactors), ...extraFiles });
  return { root, ...addWorktree(root, 'wt-a') };
}

export function addWorktree(root: string, branch: string): { wt: string; branch: string } {
  const wt = join(tempDir('tugcode-rwt-'), 'wt');
  git(root, 'worktree', 'add', '-q', wt, '-b', branch);
  return { wt, branch };
}

export function config(): Config {
  return structuredClone(CONFIG_DEFAULTS) as Config;
}

export function ctxAt(
  root: string,
  workTree: string,
  o: { now?: string; command?: string; mode?: 'write' | 'create' } = {},
): StateContext {
  return openStateContext({
    repoRoot: root,
    workTree,
    clock: fixedClock(Date.parse(o.now ?? T0)),
    config: config(),
    warnings: new WarningSink(),
    command: o.command ?? 'test',
    mode: o.mode ?? 'write',
    env: { NODE_ENV: 'test' },
    cwd: root,
  });
}

export async function withCtx<T>(
  root: string,
  workTree: string,
  o: { now?: string; command?: string; mode?: 'write' | 'create' },
  fn: (ctx: StateContext) => T | Promise<T>,
): Promise<T> {
  const ctx = ctxAt(root, workTree, o);
  try {
    return await fn(ctx);
  } finally {
    await ctx.store?.close();
  }
}

/** `state init` + claim of step-1 by `wt` (in-process). Returns the attempt. */
export async function initAndClaim(root: string, wt: string, step = 'step-1'): Promise<number> {
  const { init } = await import('../../src/state/init.js');
  const { claim } = await import('../../src/state/claim.js');
  await withCtx(root, root, { mode: 'create' }, (ctx) => init(ctx, { plan: PLAN_PATH }));
  return withCtx(root, wt, {}, async (ctx) => {
    const c = await claim(ctx, { plan: PLAN_PATH, worktree: wt, step });
    if (!c.claimed) throw new Error(`could not claim ${step}`);
    return c.attempt;
  });
}

/** run-step in-process, as the driver calls it. */
export async function runStepLib(
  root: string,
  wt: string,
  input: Partial<RunStepInput> = {},
  now = T0,
  kernel: Partial<KernelOptions> = {},
): Promise<RunStepResult> {
  return withCtx(root, wt, { now, command: 'refactor run-step' }, (ctx) =>
    runStep(
      ctx,
      { plan: PLAN_PATH, step: 'step-1', worktree: wt, ...input },
      { heartbeat_seconds: 60, max_concurrent_sessions: 1, kernel: { env: { NODE_ENV: 'test' }, ...kernel } },
    ),
  );
}

/** Run `tugcode refactor run-step|skip …` and check the kernel-style envelope against its schema. */
export function runRefactorCli(args: string[], cwd: string, env: Record<string, string> = {}): CliResult {
  const r = runCli(['refactor', ...args], { cwd, env });
  expect(r.json, `stdout is one JSON document:\n${r.stdout}\nstderr:\n${r.stderr}`).toBeDefined();
  if (args[0] === 'skip') checkSchema(r.json.status === 'ok' ? skipEnvelope : refactorErrorEnvelope, r.json);
  else checkSchema('ops' in r.json ? runStepEnvelope : refactorErrorEnvelope, r.json);
  if (r.json.status === 'ok') expect(r.code).toBe(0);
  else {
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`tugcode: ${r.json.error.code}: `);
  }
  return r;
}
