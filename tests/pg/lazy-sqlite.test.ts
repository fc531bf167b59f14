/**
 * A process whose state is on PostgreSQL never loads better-sqlite3 (a native module, tens of ms to load):
 * the built CLI, preloaded with a tracer that records every file `require` and the ESM loader resolve.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';
import { packagesLoaded } from '../helpers/imports.js';
import { createTestDatabase } from '../helpers/pg.js';
import { addWorktree, st } from '../state/cli-helpers.js';
import { planRepo, T0 } from '../state/helpers.js';

/** The unbundled build of the same sources (bin/tugcode.cjs runs dist/bundle/tugcode.cjs). */
const UNBUNDLED = join(ROOT, 'dist', 'cli', 'main.js');

const traced = (root: string, args: string[], env: Record<string, string>, cli?: string) =>
  packagesLoaded(['state', ...args, '--json'], root, { NODE_ENV: 'test', TUGCODE_NOW: T0, ...env }, cli);

describe('state on PostgreSQL does not load SQLite', () => {
  it('init, claim, heartbeat, show, ready and log run without better-sqlite3', async () => {
    const db = await createTestDatabase('lazy');
    const root = planRepo();
    const w1 = addWorktree(root, 'one');
    const env = { TUGCODE_STATE_URL: db.url, TUGCODE_STATE_HOST: 'hosta' };
    const commands = [
      ['init', 'demo'],
      ['claim', 'demo', '--worktree', w1],
      ['heartbeat', 'demo', 'step-0', '--worktree', w1],
      ['show', 'demo'],
      ['ready', 'demo'],
      ['log', 'demo'],
      ['list'],
      ['export', 'demo'],
    ];
    for (const args of commands) {
      const loaded = traced(root, args, env);
      expect(loaded.has('pg'), `${args.join(' ')} loads pg`).toBe(true);
      expect(loaded.has('better-sqlite3'), `${args.join(' ')} loads better-sqlite3`).toBe(false);
    }
    // The ES modules of dist/cli too (dynamic imports there are real module loads, not bundle init calls).
    for (const args of [
      ['show', 'demo'],
      ['heartbeat', 'demo', 'step-0', '--worktree', w1],
    ]) {
      const loaded = traced(root, args, env, UNBUNDLED);
      expect(loaded.has('pg'), `${args.join(' ')} (dist/cli) loads pg`).toBe(true);
      expect(loaded.has('better-sqlite3'), `${args.join(' ')} (dist/cli) loads better-sqlite3`).toBe(false);
    }
    // The commands above really ran against PostgreSQL.
    const s = st(root, ['show', 'demo'], { env });
    expect(s.json.plans[0].steps[0].claimed_by, s.stdout + s.stderr).toBe(`hosta:${w1}`);
  });

  it('the same commands on the embedded store do load it (the tracer sees it)', () => {
    const root = planRepo();
    const w1 = addWorktree(root, 'one');
    for (const args of [
      ['init', 'demo'],
      ['claim', 'demo', '--worktree', w1],
      ['show', 'demo'],
    ]) {
      const loaded = traced(root, args, {});
      expect(loaded.has('better-sqlite3'), `${args.join(' ')} loads better-sqlite3`).toBe(true);
      expect(loaded.has('pg'), `${args.join(' ')} loads pg`).toBe(false);
    }
  });
});
