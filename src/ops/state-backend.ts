/**
 * Which state store a process opens (docs/state.md §8): `[state] url` (or TUGCODE_STATE_URL) names a
 * PostgreSQL server; without it, the embedded `.tugtool/state.db`. On PostgreSQL the project id defaults to
 * the hash of the repository's root commit (every clone agrees on it) and owners carry this machine's id.
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { Clock } from '../clock.js';
import type { Config } from '../config/config.js';
import { TugError } from '../contract/errors.js';
import { workTreeHolding, type Repo } from '../git/repo.js';
import type { StateStore } from '../state/store.js';

export interface BackendOptions {
  repo: Repo;
  config: Config;
  clock: Clock;
  env: NodeJS.ProcessEnv;
  longLived: boolean;
}

export async function openStateStore(o: BackendOptions): Promise<StateStore> {
  const url = o.config.state.url;
  if (!url) {
    const { SqliteStateStore } = await import('../state/store.js');
    return new SqliteStateStore({
      repoRoot: o.repo.mainRoot,
      clock: o.clock,
      config: o.config,
      env: o.env,
      workTreeHolding: (abs) => workTreeHolding(o.repo, abs),
    });
  }
  const { PgStateStore } = await import('../state/pg-store.js');
  return new PgStateStore({
    url,
    project: o.config.state.project || (await rootCommit(o.repo, o.env)),
    host: o.config.state.host || machineId(),
    machine: machineId(),
    repoRoot: o.repo.mainRoot,
    clock: o.clock,
    config: o.config,
    env: o.env,
    longLived: o.longLived,
    workTreeHolding: (abs) => workTreeHolding(o.repo, abs),
  });
}

/** The repository's first root commit (the smallest hash when histories were joined). */
async function rootCommit(repo: Repo, env: NodeJS.ProcessEnv): Promise<string> {
  const { gitRunner } = await import('../git/exec.js');
  const r = await gitRunner(env).tryRun(['rev-list', '--max-parents=0', 'HEAD'], repo.mainRoot);
  const roots = r.status === 0 ? r.stdout.split('\n').filter(Boolean).sort() : [];
  if (roots.length === 0) {
    throw new TugError('ConfigInvalid', {
      source: 'state.project',
      reason: 'the repository has no commit yet, so it has no project id for the shared state',
      hint: 'commit once, or set [state] project in .tugtool/config.toml (or TUGCODE_STATE_PROJECT)',
    });
  }
  return roots[0]!.slice(0, 20);
}

/** This machine: the first 12 characters of its machine id, else its host name. */
export function machineId(): string {
  for (const f of ['/etc/machine-id', '/var/lib/dbus/machine-id']) {
    try {
      const id = readFileSync(f, 'utf8').trim();
      if (/^[0-9a-f]{12,}$/i.test(id)) return id.slice(0, 12).toLowerCase();
    } catch {
      // next
    }
  }
  return hostname().replace(/[^A-Za-z0-9._-]/g, '_') || 'localhost';
}
