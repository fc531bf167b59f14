/**
 * The state library's context (02-state.md §7): everything an operation needs, passed explicitly, so the
 * CLI, the driver (`tugcode run`) and an MCP server call the same functions in-process.
 */
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Clock } from '../clock.js';
import type { WarningSink } from '../contract/envelope.js';
import { TugError } from '../contract/errors.js';
import { openRead, openWrite, stateDbPath } from './db.js';
import type { Database } from './sql/conn.js';
import { checkStateConfig } from './lease.js';

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
  /** Where state.db lives (it may not exist yet). */
  dbPath: string;
  env: NodeJS.ProcessEnv;
  /**
   * What owner names carry before the worktree path: `<host>:` on PostgreSQL (02-state.md §8), nothing on
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

export type OpenMode = 'read' | 'write' | 'create';

export interface OpenOptions {
  repoRoot: string;
  workTree: string;
  clock: Clock;
  config: StateConfig;
  warnings: WarningSink;
  command: string;
  mode: OpenMode;
  env?: NodeJS.ProcessEnv;
  /** Override the DB path (else TUGCODE_STATE_DB, else <repoRoot>/.tugtool/state.db). */
  dbPath?: string;
  cwd?: string;
}

/**
 * Open state.db for one command. `create` (state init) makes `.tugtool/` and the DB; `write` opens an
 * existing DB and migrates it (a missing file gives `store: null`: no plan is initialized); `read` opens
 * read-only and never creates or migrates. Without TUGCODE_STATE_DB, a main root without `.tugtool/` is
 * NotInitialized for `write` (state init creates it).
 */
export function openStateContext(o: OpenOptions): StateContext {
  checkStateConfig(o.config);
  const env = o.env ?? process.env;
  const path = o.dbPath ?? stateDbPath(o.repoRoot, env);
  const overridden = Boolean(o.dbPath ?? env.TUGCODE_STATE_DB);
  const store = openStore(o.mode, { repoRoot: o.repoRoot, path, env, overridden });
  return {
    store,
    clock: o.clock,
    repoRoot: o.repoRoot,
    workTree: o.workTree,
    config: o.config,
    warnings: o.warnings,
    command: o.command,
    cwd: o.cwd,
    dbPath: path,
    env,
  };
}

/**
 * The connection for one mode (see openStateContext); null when a reader or writer finds no state.db.
 * `overridden`: the path came from TUGCODE_STATE_DB or the caller, so `.tugtool/` need not exist.
 */
export function openStore(
  mode: OpenMode,
  o: { repoRoot: string; path: string; env: NodeJS.ProcessEnv; overridden: boolean },
): Database | null {
  const hasDir = o.overridden || tugtoolDir(o.repoRoot);
  if (mode === 'create') {
    mkdirSync(dirname(o.path), { recursive: true });
    return openWrite(o.path, { create: true, env: o.env });
  }
  if (mode === 'write') {
    if (!hasDir) throw new TugError('NotInitialized', { repo_root: o.repoRoot });
    return existsSync(o.path) ? openWrite(o.path, { env: o.env }) : null;
  }
  return openRead(o.path, { env: o.env });
}

/**
 * Whether `<repoRoot>/.tugtool/` exists. Anything else by that name (a regular file, a symlink to one) is
 * NotInitialized with the reason, never an empty state: readers would otherwise answer "no plans".
 */
function tugtoolDir(repoRoot: string): boolean {
  const dir = join(repoRoot, '.tugtool');
  const st = statSync(dir, { throwIfNoEntry: false });
  if (st && !st.isDirectory()) {
    throw new TugError('NotInitialized', {
      repo_root: repoRoot,
      path: dir,
      reason: `${dir} is a file, not a directory`,
    });
  }
  return st !== undefined;
}

/**
 * Make sure the context holds a writable store, creating `.tugtool/` and state.db when `create` (state
 * init, after it validated its input, so a refused init creates nothing).
 */
export async function ensureWriter(ctx: StateContext, create: boolean): Promise<Database> {
  if (ctx.store && !ctx.store.readonly) return ctx.store;
  if (ctx.openWriter) return (ctx.store = await ctx.openWriter());
  if (!create && !existsSync(ctx.dbPath)) throw new TugError('InternalError', { reason: 'state.db does not exist' });
  if (create) mkdirSync(dirname(ctx.dbPath), { recursive: true });
  const w = openWrite(ctx.dbPath, { create, env: ctx.env });
  await ctx.store?.close();
  ctx.store = w;
  return w;
}

export async function closeStateContext(ctx: StateContext): Promise<void> {
  await ctx.store?.close();
}
