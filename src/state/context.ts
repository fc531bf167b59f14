/**
 * The state library's context (docs/state.md §7): everything an operation needs, passed explicitly, so the
 * CLI, the driver (`tugcode run`) and an MCP server call the same functions in-process.
 *
 * This module never loads better-sqlite3 (a native module, tens of ms to load): a process whose state is
 * on PostgreSQL imports it too. Opening the embedded store is sqlite-open.ts (openStateContext, openStore).
 */
import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Clock } from '../clock.js';
import type { WarningSink } from '../contract/envelope.js';
import { STATE_DB } from '../contract/layout.js';
import type { Database } from './sql/conn.js';

export type { OpenMode, OpenOptions } from './sqlite-open.js';

/**
 * `<main root>/.tugtool/state.db`, or TUGCODE_STATE_DB; a relative TUGCODE_STATE_DB is relative to the main
 * root, so every process of a run (the driver, implementers in worker worktrees) opens the same file.
 */
export function stateDbPath(mainRoot: string, env: NodeJS.ProcessEnv = process.env): string {
  const override = env.TUGCODE_STATE_DB;
  return override ? resolve(mainRoot, override) : join(mainRoot, STATE_DB);
}

/** The configuration keys the state library reads (a subset of the full Config). */
export interface StateConfig {
  state: { lease_seconds: number; max_attempts: number };
  validate?: { level: 'lenient' | 'normal' | 'strict' };
}

export interface StateContext {
  /** The open database; null when a reader found no state.db (read-only commands then report nothing). */
  store: Database | null;
  clock: Clock;
  /** Canonical main repo root (where `.tugtool/state.db` lives). */
  repoRoot: string;
  /** Canonical root of the work tree the command runs in (plans are read from here without --worktree). */
  workTree: string;
  config: StateConfig;
  warnings: WarningSink;
  /** The event `command` of changes made through this context: `state claim`, `run`, `commit`, … */
  command: string;
  /** Base directory for relative plan paths (default: the process cwd). */
  cwd?: string | undefined;
  /** The work tree of the repository holding an absolute path (src/plan/resolve.ts `workTreeHolding`). */
  workTreeHolding?: ((abs: string) => string | null) | undefined;
  /** Where state.db lives (it may not exist yet). */
  dbPath: string;
  env: NodeJS.ProcessEnv;
  /**
   * What owner names carry before the worktree path: `<host>:` on PostgreSQL (docs/state.md §8), nothing on
   * SQLite. Inputs name owners; files are read from the path after it (ownerPath).
   */
  ownerPrefix?: string;
  /**
   * A store other than the embedded one makes its writer here (PostgreSQL: creates and migrates the
   * project's schema); ensureWriter calls it instead of creating state.db.
   */
  openWriter?: () => Promise<Database>;
}

/** The worktree path of an owner name (plans and kernel workspaces are read from there). */
export function ownerPath(ctx: Pick<StateContext, 'ownerPrefix'>, owner: string): string {
  const p = ctx.ownerPrefix;
  return p && owner.startsWith(p) ? owner.slice(p.length) : owner;
}

/**
 * Make sure the context holds a writable store, creating `.tugtool/` and state.db when missing (state init
 * and import, after they validated their input, so a refused command creates nothing).
 */
export async function ensureWriter(ctx: StateContext): Promise<Database> {
  if (ctx.store && !ctx.store.readonly) return ctx.store;
  if (ctx.openWriter) return (ctx.store = await ctx.openWriter());
  mkdirSync(dirname(ctx.dbPath), { recursive: true });
  const { openWrite } = await import('./db.js');
  const w = openWrite(ctx.dbPath, { create: true, env: ctx.env });
  await ctx.store?.close();
  ctx.store = w;
  return w;
}

export async function closeStateContext(ctx: StateContext): Promise<void> {
  await ctx.store?.close();
}
