/**
 * Processes that open a state.db that does not exist yet, all at once (docs/state.md §1, "Creating"): two
 * `tugcode run` of different plans, or a `state show` beside a `state init`. None may find the file half
 * made (empty, or without its schema yet) and refuse it as no tugcode database; there is one schema.
 */
import Database from 'better-sqlite3';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LATEST_SCHEMA_VERSION } from '../../src/state/migrate.js';
import { cliAsync, runCli, type AsyncCliResult } from '../helpers/cli.js';
import { addWorktree } from './cli-helpers.js';
import { DEMO, T0, chainPlan, planRepo } from './helpers.js';

const PLANS = ['a', 'b', 'c', 'd'];
// Before the fix about half the rounds failed: 8 rounds miss it with odds of ~1 in 250.
const ROUNDS = 8;

describe('first open of a state.db by several processes at once', () => {
  it('every process succeeds and the database has one schema', async () => {
    const root = planRepo(
      Object.fromEntries(PLANS.map((p) => [`.tugtool/tugplan-${p}.md`, p === 'a' ? DEMO : chainPlan(2)])),
    );
    const w1 = addWorktree(root, 'one');
    for (let round = 0; round < ROUNDS; round++) {
      // A fresh database each round (a relative TUGCODE_STATE_DB is taken from the main root).
      const name = `.tugtool/race-${round}.db`;
      const env = { TUGCODE_NOW: T0, TUGCODE_STATE_DB: name };
      const runs: [string, Promise<AsyncCliResult>][] = [];
      const start = (args: string[]): void => void runs.push([args.join(' '), cliAsync(root, ['state', ...args], env)]);
      // Creators (one per plan), readers, and a writer that needs an initialized plan: all at the same instant.
      for (const p of PLANS) start(['init', p]);
      start(['show']);
      start(['list']);
      start(['show']);
      start(['claim', 'a', '--worktree', w1]);
      const results = await Promise.all(runs.map(([, r]) => r));
      results.forEach((r, i) => {
        const [what] = runs[i]!;
        const detail = `round ${round}: ${what}: ${JSON.stringify(r.json)} ${r.stderr}`;
        if (what.startsWith('claim') && r.json?.error?.code === 'PlanNotInitialized') return; // ran before `init a`
        expect([r.json?.status, r.code], detail).toEqual(['ok', 0]);
      });
      const file = join(root, name);
      const db = new Database(file, { readonly: true });
      try {
        expect(db.prepare('SELECT version FROM schema_version').all()).toEqual([{ version: LATEST_SCHEMA_VERSION }]);
        expect(db.prepare('SELECT COUNT(*) AS n FROM plans').get()).toEqual({ n: PLANS.length });
        expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      } finally {
        db.close();
      }
      // Nothing but the database and SQLite's own files beside it.
      const beside = readdirSync(join(root, '.tugtool')).filter((f) => f.startsWith(`race-${round}.`));
      expect(
        beside.every((f) => /^race-\d+\.db(-wal|-shm)?$/.test(f)),
        beside.join(', '),
      ).toBe(true);
      expect(existsSync(file)).toBe(true);
    }
  }, 300_000);

  it('a creation removes the stand-ins of killed creators, untouched for a minute and held open by none', () => {
    const root = planRepo();
    const dir = join(root, '.tugtool');
    const standIn = (token: string, ageS: number): string => {
      const d = join(dir, `state.db.${token}.new.lock`);
      mkdirSync(d);
      const f = join(d, 'state.db');
      writeFileSync(f, 'half made');
      const at = Date.now() / 1000 - ageS;
      utimesSync(f, at, at);
      utimesSync(d, at, at); // after its file: making one touches the directory
      return d;
    };
    const stale = standIn('killed1', 120);
    const fresh = standIn('working1', 5); // another creator's, at work
    const held = standIn('held1', 120); // old, but a process still has its file open
    const fd = openSync(join(held, 'state.db'), 'r');
    try {
      const r = runCli(['state', 'init', 'demo', '--json'], { cwd: root, env: { TUGCODE_NOW: T0 } });
      expect([r.json?.status, r.code], r.stderr).toEqual(['ok', 0]);
      expect(existsSync(join(dir, 'state.db'))).toBe(true);
      expect(existsSync(stale)).toBe(false);
      expect(existsSync(fresh)).toBe(true);
      if (process.platform === 'linux') expect(existsSync(held)).toBe(true);
    } finally {
      closeSync(fd);
    }
    // With state.db there, no creation runs and nothing beside it is swept.
    const later = standIn('killed2', 120);
    expect(runCli(['state', 'show', '--json'], { cwd: root, env: { TUGCODE_NOW: T0 } }).code).toBe(0);
    expect(existsSync(later)).toBe(true);
  });
});
