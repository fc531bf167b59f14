/**
 * Opening the embedded store for one command (docs/state.md §1, §7). Kept apart from context.ts because it
 * loads better-sqlite3 (db.ts), a native module: a process whose state is on PostgreSQL imports the context
 * types and helpers, never this module.
 */
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Clock } from '../clock.js';
import type { WarningSink } from '../contract/envelope.js';
import { TugError } from '../contract/errors.js';
import { TUGTOOL_DIR } from '../contract/layout.js';
import { stateDbPath, type StateConfig, type StateContext } from './context.js';
import { openRead, openWrite } from './db.js';
import type { Database } from './sql/conn.js';
import { checkStateConfig } from './lease.js';

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
  const dir = join(repoRoot, TUGTOOL_DIR);
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
