/**
 * Shared setup for the git-flow tests: a real repository with `.tugtool/` and a committed plan, a FlowCtx
 * for in-process library calls, and the state calls an agent makes between `worktree create` and `commit`.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fixedClock, parseInstant } from '../../src/clock.js';
import { CONFIG_DEFAULTS } from '../../src/config/defaults.js';
import type { Config } from '../../src/config/config.js';
import { WarningSink } from '../../src/contract/envelope.js';
import type { FlowCtx } from '../../src/gitflow/flow-context.js';
import { resolveRepo } from '../../src/git/repo.js';
import { createWorktree } from '../../src/gitflow/worktree.js';
import { expect } from 'vitest';
import { afterEachTest } from '../helpers/file-hooks.js';
import { closeStateContext } from '../../src/state/context.js';
import { SqliteStateStore } from '../../src/state/store.js';
import { openStateContext } from '../../src/state/sqlite-open.js';
import { runCli } from '../helpers/cli.js';
import { initializedRepo } from '../helpers/plan.js';
import { git, writeFiles } from '../helpers/repo.js';

export const T0 = '2026-03-01T10:00:00.000Z';

export const PLAN = `## Phase 1.0: Demo {#phase-demo}

**Purpose:** exercise the git flow.

### Execution Steps {#execution-steps}

#### Step 1: Add alpha {#step-1}

**Commit:** \`feat: alpha\`

**Tasks:**
- [ ] write alpha

#### Step 2: Add beta {#step-2}

**Depends on:** #step-1

**Commit:** \`feat: beta\`

**Tasks:**
- [ ] write beta
`;

export const PLAN_PATH = '.tugtool/tugplan-demo.md';

/** A repository on `main` with `tugcode init` done and the demo plan committed. */
export function planRepo(plan = PLAN, slug = 'demo'): string {
  return initializedRepo(plan, slug);
}

/** The stores flowCtx opened: closed after each test (a closed store opens again on its next call). */
const stores: SqliteStateStore[] = [];
afterEachTest(async () => {
  for (const s of stores.splice(0)) await s.close();
});

/** A FlowCtx in `cwd` with a state store of its own, as the operations layer would pass it. */
export function flowCtx(cwd: string, now = T0, env: NodeJS.ProcessEnv = {}): FlowCtx {
  const config = structuredClone(CONFIG_DEFAULTS) as Config;
  const repo = resolveRepo(cwd);
  const clock = fixedClock(parseInstant(now)!);
  const fullEnv = { ...process.env, NODE_ENV: 'test', ...env };
  const store = new SqliteStateStore({ repoRoot: repo.mainRoot, clock, config, env: fullEnv });
  stores.push(store);
  return { repo, config, clock, warnings: new WarningSink(), env: fullEnv, store };
}

async function withState<T>(
  ctx: FlowCtx,
  worktree: string,
  fn: (s: ReturnType<typeof openStateContext>) => Promise<T> | T,
): Promise<T> {
  const s = openStateContext({
    repoRoot: ctx.repo.mainRoot,
    workTree: worktree,
    clock: ctx.clock,
    config: ctx.config,
    warnings: ctx.warnings,
    command: 'test',
    mode: 'write',
    env: ctx.env,
  });
  try {
    return await fn(s);
  } finally {
    await closeStateContext(s);
  }
}

/** What an agent does between claim and commit: claim the step, start it, tick every item. */
export async function workOn(ctx: FlowCtx, worktree: string, step: string, planPath = PLAN_PATH): Promise<number> {
  const { claim } = await import('../../src/state/claim.js');
  const { start } = await import('../../src/state/start.js');
  const { update } = await import('../../src/state/update.js');
  return withState(ctx, worktree, async (s) => {
    const c = await claim(s, { plan: planPath, worktree, step });
    if (!c.claimed) throw new Error(`could not claim ${step}: ${JSON.stringify(c)}`);
    await start(s, { plan: planPath, step, worktree });
    await update(s, { plan: planPath, step, worktree, complete_remaining: true });
    return c.attempt;
  });
}

export async function claimOnly(ctx: FlowCtx, worktree: string, step: string, planPath = PLAN_PATH): Promise<void> {
  const { claim } = await import('../../src/state/claim.js');
  await withState(ctx, worktree, async (s) => {
    const c = await claim(s, { plan: planPath, worktree, step });
    if (!c.claimed) throw new Error(`could not claim ${step}`);
  });
}

export async function stepRows(ctx: FlowCtx, planPath = PLAN_PATH) {
  const { planSteps } = await import('../../src/gitflow/state-bridge.js');
  return (await planSteps(ctx, planPath)) ?? [];
}

/**
 * Everything a refused command could have changed: the work tree files (outside .git, runtime files
 * excluded), the index, every ref, HEAD, the config, the worktree registrations and (unless
 * `objects: false`) the object count.
 */
export function snapshot(root: string, opts: { objects?: boolean } = {}): string {
  const files: string[] = [];
  const walk = (dir: string, rel: string) => {
    for (const name of readdirSync(dir).sort()) {
      if (name === '.git' && rel === '') continue;
      const abs = join(dir, name);
      const r = rel ? `${rel}/${name}` : name;
      if (/^\.tugtool\/(state\.db|.*\.lock)/.test(r)) continue;
      const st = statSync(abs);
      if (st.isDirectory()) walk(abs, r);
      else files.push(`${r}:${readFileSync(abs).toString('base64')}`);
    }
  };
  walk(root, '');
  const gitDir = join(root, '.git');
  const refs = git(root, 'for-each-ref', '--format=%(refname) %(objectname)');
  const head = readFileSync(join(gitDir, 'HEAD'), 'utf8');
  const index = readFileSync(join(gitDir, 'index')).toString('base64');
  const config = readFileSync(join(gitDir, 'config'), 'utf8');
  const worktrees = git(root, 'worktree', 'list', '--porcelain');
  const objects = opts.objects === false ? '' : git(root, 'count-objects', '-v');
  return JSON.stringify({ files, refs, head, index, config, worktrees, objects });
}

/** Create a worktree for the demo plan and commit both steps in it, writing `files[i]` for step i+1. */
export async function finishPlan(
  root: string,
  files: Record<string, string>[],
  opts: { integrate?: boolean; now?: string } = {},
) {
  const { createWorktree } = await import('../../src/gitflow/worktree.js');
  const { commitStep } = await import('../../src/gitflow/commit.js');
  const ctx = flowCtx(root, opts.now);
  const created = await createWorktree(ctx, { plan: 'demo', new: true });
  const wt = created.worktree_path;
  const hashes: string[] = [];
  for (const [i, step] of ['step-1', 'step-2'].entries()) {
    const attempt = await workOn(ctx, wt, step);
    const f = files[i];
    writeFiles(wt, f && Object.keys(f).length > 0 ? f : { [`f${i}.txt`]: `${i}\n` });
    const c = await commitStep(flowCtx(wt, opts.now), {
      worktree: wt,
      plan: PLAN_PATH,
      step,
      message: `feat: step ${i + 1}`,
      attempt,
      integrate: opts.integrate,
    });
    if (c.state_update_failed) throw new Error(`completion failed: ${JSON.stringify(c.state_error)}`);
    hashes.push(c.commit_hash);
  }
  return { wt, branch: created.branch_name, hashes };
}

/** `tugcode commit` of the fixture plan's step-1 ("feat: alpha") in worktree `wt`, then `extra` flags. */
export function step1CommitArgs(wt: string, ...extra: string[]): string[] {
  return ['commit', '--worktree', wt, '--plan', 'demo', '--step', 'step-1', '--message', 'feat: alpha', ...extra];
}

/** One step whose task can be done while its checkpoint stays open (a step commit that cannot complete it). */
export const OPEN_CHECKPOINT_PLAN = `## Phase 1.0: Demo {#phase-demo}

### Execution Steps {#execution-steps}

#### Step 1: Add alpha {#step-1}

**Commit:** \`feat: alpha\`

**Tasks:**
- [ ] write alpha

**Checkpoint:**
- [ ] alpha reviewed
`;

/** Step 1 of OPEN_CHECKPOINT_PLAN claimed and started in a worktree, its task done, a change to commit. */
export async function startedStepWithOpenCheckpoint(): Promise<{ root: string; wt: string }> {
  const root = planRepo(OPEN_CHECKPOINT_PLAN);
  const wt = (await createWorktree(flowCtx(root), { plan: 'demo' })).worktree_path;
  for (const args of [
    ['state', 'claim', 'demo', '--worktree', wt],
    ['state', 'start', 'demo', 'step-1', '--worktree', wt],
    ['state', 'update', 'demo', 'step-1', '--worktree', wt, '--all-tasks', 'completed'],
  ])
    expect(runCli([...args, '--json'], { cwd: root, env: { TUGCODE_NOW: T0 } }).code, args.join(' ')).toBe(0);
  writeFiles(wt, { 'alpha.txt': 'alpha\n' });
  return { root, wt };
}
