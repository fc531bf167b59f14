/**
 * SQLite lock waits must not starve timers (docs/state.md §1, issue 11): while another process holds the
 * write lock, a state write in this process waits in short busy slices with asynchronous backoff between
 * them, so a 100 ms timer in this process keeps ticking; the write still ends in `Busy` after the total
 * timeout. The lock holder is a real second process (BEGIN IMMEDIATE).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { claim } from '../../src/state/claim.js';
import { init } from '../../src/state/init.js';
import { fixedClock } from '../../src/clock.js';
import { WarningSink } from '../../src/contract/envelope.js';
import { CONFIG_DEFAULTS } from '../../src/config/defaults.js';
import { openStateContext } from '../../src/state/sqlite-open.js';
import { busyTimeoutMs } from '../../src/state/db.js';
import { BUSY_SLICE_MS } from '../../src/state/sql/sqlite.js';
import type { SqliteDatabase } from '../../src/state/sql/sqlite.js';
import { DEMO_PATH, T0, dbPathOf, dump, planRepo, stateCtx, withCtx } from './helpers.js';

const require = createRequire(import.meta.url);
const SQLITE = require.resolve('better-sqlite3');

/** A child process that takes the write lock, says "locked", holds it `ms`, then rolls back and exits. */
function holdLock(dbPath: string, ms: number): Promise<ChildProcess> {
  const code = `
    const Database = require(${JSON.stringify(SQLITE)});
    const db = new Database(${JSON.stringify(dbPath)});
    db.prepare('BEGIN IMMEDIATE').run();
    process.stdout.write('locked\\n');
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ${ms});
    db.prepare('ROLLBACK').run();
    db.close();`;
  const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.stdout!.once('data', () => resolve(child));
    child.once('error', reject);
    child.once('exit', (c) => reject(new Error(`lock holder exited early (${c})`)));
  });
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', () => resolve())));
}

/** Runs `fn` while a 100 ms interval ticks; returns its outcome and the longest gap between ticks. */
async function withTicker<T>(
  fn: () => Promise<T>,
): Promise<{ result: PromiseSettledResult<T>; maxGap: number; elapsed: number }> {
  const ticks: number[] = [];
  const t0 = performance.now();
  ticks.push(t0);
  const timer = setInterval(() => ticks.push(performance.now()), 100);
  const [result] = await Promise.allSettled([fn()]);
  const end = performance.now();
  ticks.push(end);
  clearInterval(timer);
  let maxGap = 0;
  for (let i = 1; i < ticks.length; i++) maxGap = Math.max(maxGap, ticks[i]! - ticks[i - 1]!);
  return { result, maxGap, elapsed: end - t0 };
}

describe('state writes under a held lock', () => {
  it('keep a 100 ms timer ticking while they wait, then succeed once the lock is released', async () => {
    const root = planRepo();
    await withCtx(root, {}, (ctx) => init(ctx, { plan: DEMO_PATH }));
    const holder = await holdLock(dbPathOf(root), 2000);
    const ctx = stateCtx(root, { mode: 'write' });
    try {
      const { result, maxGap, elapsed } = await withTicker(() => claim(ctx, { plan: DEMO_PATH, worktree: root }));
      console.log(
        `[busy] wait for a 2 s lock: elapsed ${elapsed.toFixed(0)} ms, longest timer gap ${maxGap.toFixed(0)} ms`,
      );
      expect(result.status).toBe('fulfilled');
      expect(maxGap).toBeLessThan(400);
    } finally {
      await ctx.store?.close();
      await exited(holder);
    }
  });

  it('still end in Busy after the total timeout (lowered under tests), keeping the timer ticking and changing nothing', async () => {
    const root = planRepo();
    await withCtx(root, {}, (ctx) => init(ctx, { plan: DEMO_PATH }));
    const before = dump(dbPathOf(root));
    const holder = await holdLock(dbPathOf(root), 3000);
    const env = { NODE_ENV: 'test', TUGCODE_BUSY_TIMEOUT_MS: '1000' };
    const ctx = openStateContext({
      repoRoot: root,
      workTree: root,
      clock: fixedClock(Date.parse(T0)),
      config: structuredClone(CONFIG_DEFAULTS),
      warnings: new WarningSink(),
      command: 'test',
      mode: 'write',
      env,
      cwd: root,
    });
    try {
      const { result, maxGap, elapsed } = await withTicker(() => claim(ctx, { plan: DEMO_PATH, worktree: root }));
      console.log(
        `[busy] 1 s timeout against a 3 s lock: Busy after ${elapsed.toFixed(0)} ms, longest timer gap ${maxGap.toFixed(0)} ms`,
      );
      expect(result.status).toBe('rejected');
      expect((result as PromiseRejectedResult).reason).toMatchObject({
        code: 'Busy',
        exitCode: 4,
        details: { timeout_ms: 1000 },
      });
      expect(elapsed).toBeGreaterThanOrEqual(950);
      expect(elapsed).toBeLessThan(2900);
      expect(maxGap).toBeLessThan(400);
    } finally {
      await ctx.store?.close();
      await exited(holder);
    }
    expect(dump(dbPathOf(root))).toEqual(before);
  });

  it('keep the 5 s total outside tests, and wait at most one short slice per try', async () => {
    expect(busyTimeoutMs({})).toBe(5000);
    expect(busyTimeoutMs({ TUGCODE_BUSY_TIMEOUT_MS: '100' })).toBe(5000);
    expect(busyTimeoutMs({ NODE_ENV: 'test', TUGCODE_BUSY_TIMEOUT_MS: '100' })).toBe(100);
    expect(BUSY_SLICE_MS).toBeLessThanOrEqual(50);
    const root = planRepo();
    const ctx = stateCtx(root, { mode: 'create' });
    try {
      expect((ctx.store as SqliteDatabase).raw.pragma('busy_timeout', { simple: true })).toBe(BUSY_SLICE_MS);
    } finally {
      await ctx.store?.close();
    }
  });
});
