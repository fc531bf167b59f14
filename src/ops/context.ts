/**
 * The one context of a process (docs/architecture.md §1): a CLI call, the driver or the MCP server opens it once and
 * passes it to every operation. It holds the environment, the clock, the repository and its config
 * (resolved on first use, so commands that need no repository never look for one) and the open state
 * store. Each call passes its own `Call`: the event `command` and a warnings sink.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { clockFromEnv, type Clock } from '../clock.js';
import { WarningSink } from '../contract/envelope.js';
import { CONFIG_FILE } from '../contract/layout.js';
import type { Naming } from '../contract/inputs/fields.js';
import type { Config } from '../config/config.js';
import type { Repo } from '../git/repo.js';
import type { StateCall, StateStore } from '../state/store.js';

export interface OpenOptions {
  /** The directory the process works in (`-C DIR` already applied). */
  cwd: string;
  /**
   * The directory the user named with `-C DIR` (absolute), when they did: the commands a hint suggests name
   * it, so they work pasted in the shell the user ran tugcode from (docs/run.md §1.2).
   */
  dir?: string | undefined;
  /** The environment: the only one any operation reads (git and child processes get exactly this). */
  env: NodeJS.ProcessEnv;
  /** Default: TUGCODE_NOW from `env`, else the system clock. */
  clock?: Clock;
  /**
   * A process that serves many calls (the driver, the MCP server): git facts go through simple-git and
   * never block the event loop. A CLI call (default) uses the faster synchronous calls.
   */
  longLived?: boolean;
  /**
   * Long-lived only: read config.toml again (and open the state store again) once it changed, as the next
   * CLI call would. The MCP server follows the file; a run keeps the configuration it started with
   * (docs/run.md §1).
   */
  followConfig?: boolean;
}

/** What one operation call brings. */
export interface Call {
  command: string;
  warnings: WarningSink;
  /** The front door: flags (`cli`) or a tool call's field names (`tool`), for the few texts an operation words. */
  naming: Naming;
  /**
   * Debug lines (`-v/--verbose`, docs/output.md §1), present only when asked for: where the repository, its
   * config and the state store were found. The front door prints them; a few per call, never a secret.
   */
  debug?: string[];
}

export function newCall(command: string, naming: Naming = 'cli', o: { debug?: boolean } = {}): Call {
  return { command, warnings: new WarningSink(), naming, ...(o.debug ? { debug: [] } : {}) };
}

export class OpsContext {
  readonly cwd: string;
  readonly dir: string | undefined;
  readonly env: NodeJS.ProcessEnv;
  readonly clock: Clock;
  readonly longLived: boolean;
  private readonly followConfig: boolean;
  private loaded?: Promise<{ repo: Repo; config: Config }>;
  /** config.toml and its stamp when it was read (long-lived only): see `load`. */
  private configFile?: { path: string; stamp: string };
  private storeP?: Promise<StateStore>;
  /** The state.db file (device and inode, or absent) when the store was opened: see `store`. */
  private storeFile?: string;
  /** Stores replaced while a call may still use them: closed with the context. */
  private replaced: Promise<StateStore>[] = [];

  constructor(o: OpenOptions) {
    this.cwd = o.cwd;
    this.dir = o.dir;
    this.env = o.env;
    this.clock = o.clock ?? clockFromEnv(o.env);
    this.longLived = Boolean(o.longLived);
    this.followConfig = Boolean(o.longLived && o.followConfig);
  }

  /**
   * The repository and its configuration, resolved once. A malformed config.toml is ConfigInvalid for
   * every command that works in a repository (docs/git.md §8); its warnings go to the first call's sink.
   */
  load(call: Call): Promise<{ repo: Repo; config: Config }> {
    this.forgetChangedConfig();
    this.loaded ??= (async () => {
      const { resolveRepo } = await import('../git/repo.js');
      const { loadConfig } = await import('../config/config.js');
      const repo = resolveRepo(this.cwd, this.env);
      if (this.followConfig) {
        // Stamped before it is read: an edit made while reading is seen by the next call.
        const path = join(repo.mainRoot, ...CONFIG_FILE.split('/'));
        this.configFile = { path, stamp: fileStamp(path) };
      }
      call.debug?.push(
        `repository ${repo.mainRoot}` + (repo.worktreeRoot === repo.mainRoot ? '' : ` (worktree ${repo.worktreeRoot})`),
      );
      const config = await loadConfig(repo.mainRoot, this.env, call.warnings, call.debug);
      return { repo, config };
    })();
    // A failed load is not cached: the next call tries again (a long-lived process may see it fixed).
    this.loaded.catch(() => (this.loaded = undefined));
    return this.loaded;
  }

  /**
   * The state store, opened on first use and kept until close(). A long-lived process (the MCP server, the
   * board, the driver) opens it again when state.db was moved aside, deleted or replaced since: the old
   * connection would go on serving the unlinked file, where nobody else sees a claim (docs/state.md §1).
   */
  async store(call: Call): Promise<StateStore> {
    this.forgetChangedConfig();
    if (this.longLived && this.storeP) {
      const p = this.storeP;
      const s = await p.catch(() => null);
      if (s?.backend === 'sqlite' && this.storeP === p && fileId(s.location) !== this.storeFile) {
        this.storeP = undefined;
        this.replaced.push(p);
      }
    }
    this.storeP ??= (async () => {
      const { repo, config } = await this.load(call);
      const { openStateStore } = await import('./state-backend.js');
      const s = await openStateStore({ repo, config, clock: this.clock, env: this.env, longLived: this.longLived });
      this.storeFile = s.backend === 'sqlite' ? fileId(s.location) : undefined;
      call.debug?.push(`state store: ${s.backend} ${s.described}`);
      return s;
    })();
    this.storeP.catch(() => (this.storeP = undefined));
    return this.storeP;
  }

  /**
   * Which state.db file the open store reads (`dev:ino`, or `absent`); undefined before the store is opened
   * and on PostgreSQL. It changes when `store` opened a replaced file again (the board starts its reading
   * over then).
   */
  get storeFileId(): string | undefined {
    return this.storeFile;
  }

  /**
   * `followConfig`: config.toml is read again once it changed, as the next CLI call would (an agent's MCP
   * server lives for its whole session), and the state store opened again with it: the edit may set another
   * lease or move the state to PostgreSQL (docs/state.md §8).
   */
  private forgetChangedConfig(): void {
    const file = this.configFile;
    if (!file || fileStamp(file.path) === file.stamp) return;
    this.configFile = undefined;
    this.loaded = undefined;
    if (this.storeP) this.replaced.push(this.storeP);
    this.storeP = undefined;
  }

  /**
   * A state call in the current work tree (or `workTree`); relative plan paths resolve against the
   * context's directory (or `cwd`).
   */
  async stateCall(call: Call, workTree?: string, cwd: string = this.cwd): Promise<StateCall> {
    const { repo } = await this.load(call);
    // Loaded already: the store came first (store() is what every state operation asks for).
    const { stateCall } = await import('../state/store.js');
    return stateCall(call, workTree ?? repo.worktreeRoot, cwd);
  }

  /** Closes the state store; the context can be opened again by the next call. */
  async close(): Promise<void> {
    const s = this.storeP;
    this.storeP = undefined;
    if (s) await (await s.catch(() => null))?.close();
    for (const r of this.replaced.splice(0)) await (await r.catch(() => null))?.close();
  }
}

/** Which file is at `path` now and when it was last written, or `absent`. */
function fileStamp(path: string): string {
  try {
    const st = statSync(path, { bigint: true });
    return `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}`;
  } catch {
    return 'absent';
  }
}

/** Which file is at `path` now: its device and inode, or `absent`. */
function fileId(path: string): string {
  try {
    const st = statSync(path);
    return `${st.dev}:${st.ino}`;
  } catch {
    return 'absent';
  }
}
