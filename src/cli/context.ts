/**
 * The per-invocation context built by the CLI (style.md §3): clock, repo, config and warnings, each
 * resolved lazily and at most once, so commands that do not need a repo never look for one.
 */
import type { Clock } from '../clock.js';
import { clockFromEnv } from '../clock.js';
import { WarningSink } from '../contract/envelope.js';
import type { Repo } from '../git/repo.js';
import { resolveRepo } from '../git/repo.js';
import type { Config } from '../config/config.js';
import { loadConfig } from '../config/config.js';

export interface GlobalOptions {
  json: boolean;
  quiet: boolean;
  verbose: boolean;
  dir?: string;
}

export class CliContext {
  readonly warnings = new WarningSink();
  private _clock?: Clock;
  private _loaded?: { repo: Repo; config: Config };

  constructor(
    readonly globals: GlobalOptions,
    readonly env: NodeJS.ProcessEnv = process.env,
    readonly processCwd: string = process.cwd(),
  ) {}

  get cwd(): string {
    return this.globals.dir ?? this.processCwd;
  }

  get clock(): Clock {
    return (this._clock ??= clockFromEnv(this.env));
  }

  /**
   * The repository and its configuration. Every command that works in a repository calls this first,
   * so a malformed config.toml is ConfigInvalid for every such command (04-git.md §8).
   */
  async load(): Promise<{ repo: Repo; config: Config }> {
    if (!this._loaded) {
      const repo = resolveRepo(this.cwd, this.env);
      const config = await loadConfig(repo.mainRoot, this.env, this.warnings);
      this._loaded = { repo, config };
    }
    return this._loaded;
  }

  debug(msg: string): void {
    if (this.globals.verbose) process.stderr.write(`tugcode: debug: ${msg}\n`);
  }
}
