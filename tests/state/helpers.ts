/**
 * Helpers of the state tests: plan texts, a real repo with plans, in-process state contexts at a chosen
 * time, and a dump of every table (to prove a refused command changed nothing).
 */
import Database from 'better-sqlite3';
import { cpSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { fixedClock } from '../../src/clock.js';
import { WarningSink } from '../../src/contract/envelope.js';
import { CONFIG_DEFAULTS } from '../../src/config/defaults.js';
import type { StateContext } from '../../src/state/context.js';
import { openStateContext, type OpenMode } from '../../src/state/sqlite-open.js';
import { planText, type StepSpec } from '../helpers/plan.js';
import { tempDir, tempRepo } from '../helpers/repo.js';

export const T0 = '2026-03-01T10:00:00.000Z';

/** ISO time `seconds` after T0. */
export function at(seconds: number): string {
  return new Date(Date.parse(T0) + seconds * 1000).toISOString();
}

export { anchorOf, planText, type StepSpec } from '../helpers/plan.js';

/** The seed mock's shape: step-0, step-1 with two substeps, step-2 depending on step-1. */
export const DEMO_STEPS: StepSpec[] = [
  {
    id: '0',
    title: 'Create API client',
    deps: [],
    tasks: ['Write the client', 'Wire the client'],
    tests: ['Client test'],
    checkpoints: ['npm test', 'npm run lint'],
  },
  {
    id: '1',
    title: 'Add caching layer',
    deps: ['step-0'],
    tasks: ['Implement cache store', 'Add cache invalidation', 'Wire up to API client'],
    tests: ['Cache test'],
    checkpoints: ['npm test'],
  },
  { id: '1.1', title: 'Cache store implementation', level: 5, tasks: ['Store a', 'Store b'], tests: ['Store test'] },
  {
    id: '1.2',
    title: 'Cache invalidation',
    level: 5,
    deps: ['step-1-1'],
    tasks: ['Invalidate a', 'Invalidate b'],
    tests: ['Invalidation test'],
  },
  {
    id: '2',
    title: 'Add monitoring',
    deps: ['step-1'],
    tasks: ['Metrics', 'Alerts'],
    tests: ['Monitor test'],
    checkpoints: ['dashboards load'],
  },
];

export const DEMO = planText(DEMO_STEPS);
export const DEMO_PATH = '.tugtool/tugplan-demo.md';

/** n top-level steps, each depending on the step `gap` before it (none for the first `gap`). */
export function chainPlan(n: number, gap = 1, itemsPerStep = 1): string {
  const steps: StepSpec[] = [];
  for (let i = 1; i <= n; i++) {
    steps.push({
      id: String(i),
      deps: i > gap ? [`step-${i - gap}`] : [],
      tasks: Array.from({ length: itemsPerStep }, (_, k) => `task ${k}`),
    });
  }
  return planText(steps);
}

/** A repo with `.tugtool/` and the given plans (path → text), committed. */
export function planRepo(plans: Record<string, string> = { [DEMO_PATH]: DEMO }): string {
  return tempRepo(plans);
}

export interface CtxOptions {
  now?: string;
  mode?: OpenMode;
  command?: string;
  workTree?: string;
  maxAttempts?: number;
  leaseSeconds?: number;
}

/** An in-process state context on the repo's state.db at a fixed time. Remember to close it. */
export function stateCtx(root: string, o: CtxOptions = {}): StateContext {
  const config = structuredClone(CONFIG_DEFAULTS);
  if (o.maxAttempts !== undefined) config.state.max_attempts = o.maxAttempts;
  if (o.leaseSeconds !== undefined) config.state.lease_seconds = o.leaseSeconds;
  return openStateContext({
    repoRoot: root,
    workTree: o.workTree ?? root,
    clock: fixedClock(Date.parse(o.now ?? T0)),
    config,
    warnings: new WarningSink(),
    command: o.command ?? 'test',
    mode: o.mode ?? (existsSync(join(root, '.tugtool', 'state.db')) ? 'write' : 'create'),
    env: { NODE_ENV: 'test' },
    cwd: root,
  });
}

/** Run `fn` with a fresh context at `now` and close it. */
export async function withCtx<T>(root: string, o: CtxOptions, fn: (ctx: StateContext) => T | Promise<T>): Promise<T> {
  const ctx = stateCtx(root, o);
  try {
    return await fn(ctx);
  } finally {
    await ctx.store?.close();
  }
}

export const TABLES = [
  'schema_version',
  'plans',
  'steps',
  'step_deps',
  'step_lifted_deps',
  'checklist_items',
  'step_artifacts',
  'step_refactors',
  'step_usage',
  'events',
];

/** Every row of every table, in a stable order (null when the DB does not exist). */
export function dump(dbPath: string): Record<string, unknown[]> | null {
  if (!existsSync(dbPath)) return null;
  const db = new Database(dbPath, { readonly: true });
  try {
    const out: Record<string, unknown[]> = {};
    for (const t of TABLES) out[t] = db.prepare(`SELECT * FROM ${t} ORDER BY rowid`).all();
    return out;
  } finally {
    db.close();
  }
}

export function dbPathOf(root: string): string {
  return join(root, '.tugtool', 'state.db');
}

/** Query the DB directly (tests only). */
export function sql<T = Record<string, unknown>>(root: string, query: string, ...params: unknown[]): T[] {
  const db = new Database(dbPathOf(root), { readonly: true });
  try {
    return db.prepare(query).all(...params) as T[];
  } finally {
    db.close();
  }
}

/**
 * Directories standing in for worktrees in library tests: each holds a copy of the repo's `.tugtool/`
 * plans (the library reads the plan from the caller's worktree; the CLI checks that it is a real one).
 */
export function fakeWorktrees(root: string, n: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const d = tempDir('tugcode-wt-');
    cpSync(join(root, '.tugtool'), join(d, '.tugtool'), {
      recursive: true,
      filter: (src) => !src.includes('state.db'),
    });
    out.push(d);
  }
  return out;
}
