/**
 * A lost connection in a long-lived process (docs/state.md §8.1, docs/run.md §1 item 5): the retry
 * budget belongs to the database handle, not to each call (once the connection has been lost that long,
 * every call fails at once until one succeeds again), and the process's stop ends the retries at once, so a
 * SIGTERM during an outage stops `tugcode run` promptly with its summary.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LATEST_SCHEMA_VERSION, migrationsDir } from '../../src/state/migrate.js';
import { pgTarget } from '../../src/state/sql/pg-sql.js';
import { openPg, type PgDatabase } from '../../src/state/sql/postgres.js';
import { startPrivatePg } from '../helpers/pg.js';
import { holdingImplementer, planText, runRepo, startRun, step, waitUntil } from '../run/helpers.js';

async function openLongLived(url: string, retryMs: number): Promise<PgDatabase> {
  const db = await openPg(
    {
      url,
      target: pgTarget(url, {}),
      schema: 'tug_retry',
      mode: 'create',
      retryMs,
      migrationsDir: `${migrationsDir()}/pg`,
    },
    LATEST_SCHEMA_VERSION,
  );
  return db!;
}

/** How long `p` takes to settle, and its error (it must fail). */
async function failure(p: Promise<unknown>): Promise<{ ms: number; error: any }> {
  const t0 = performance.now();
  try {
    await p;
  } catch (error) {
    return { ms: performance.now() - t0, error };
  }
  throw new Error('expected a failure');
}

const ping = (db: PgDatabase) => db.read((c) => c.get<{ one: number }>('SELECT 1 AS one'));

describe('retrying a lost PostgreSQL connection', () => {
  it('shares one budget per database: past it every call fails at once, until a call succeeds again', async () => {
    const own = await startPrivatePg();
    const pdb = await own.createDatabase('budget');
    const db = await openLongLived(pdb.url, 1500);
    try {
      expect(await ping(db)).toEqual({ one: 1 });
      await own.stop('fast');
      const first = await failure(ping(db));
      expect(first.error.code).toBe('DatabaseUnavailable');
      expect(first.ms).toBeGreaterThan(1000);
      expect(first.ms).toBeLessThan(6000);
      // The budget is spent: the next calls (a transaction, a statement) get one attempt each.
      for (const call of [() => ping(db), () => db.get('SELECT 1'), () => db.write((c) => c.run('SELECT 1'))]) {
        const next = await failure(call());
        expect(next.error.code).toBe('DatabaseUnavailable');
        expect(next.ms).toBeLessThan(500);
      }
      // Back: the first call succeeds, and the budget is whole again for the next outage.
      await own.start();
      expect(await ping(db)).toEqual({ one: 1 });
      await own.stop('fast');
      const again = await failure(ping(db));
      expect(again.ms).toBeGreaterThan(1000);
    } finally {
      await db.close();
    }
  }, 60_000);

  it('calls retrying side by side share the deadline', async () => {
    const own = await startPrivatePg();
    const pdb = await own.createDatabase('shared');
    const db = await openLongLived(pdb.url, 2000);
    try {
      await ping(db);
      await own.stop('fast');
      const t0 = performance.now();
      const late = (async () => {
        // Not a synchronisation: a call that starts 1 s into the outage is the case under test.
        await new Promise((r) => setTimeout(r, 1000));
        return failure(ping(db));
      })();
      const [a, b] = await Promise.all([failure(ping(db)), late]);
      // The later call does not get 2 s of its own: both end when the first failure is 2 s old.
      expect(a.error.code).toBe('DatabaseUnavailable');
      expect(b.error.code).toBe('DatabaseUnavailable');
      expect(performance.now() - t0).toBeLessThan(2900);
    } finally {
      await db.close();
    }
  }, 60_000);

  it('stops retrying at once when the stop signal aborts', async () => {
    const own = await startPrivatePg();
    const pdb = await own.createDatabase('abort');
    const db = await openLongLived(pdb.url, 120_000);
    const stop = new AbortController();
    db.stopOn(stop.signal);
    try {
      await ping(db);
      await own.stop('fast');
      const call = failure(ping(db));
      // Kept: the stop must land while the call is retrying (0.7 s into a 120 s budget); a retry in progress
      // leaves no trace outside the process to wait on (the server is down).
      await new Promise((r) => setTimeout(r, 700));
      const aborted = performance.now();
      stop.abort();
      const r = await call;
      expect(r.error.code).toBe('DatabaseUnavailable');
      expect(performance.now() - aborted).toBeLessThan(500);
      // Stopped: later calls make one attempt; with the server back they work.
      expect((await failure(ping(db))).ms).toBeLessThan(500);
      await own.start();
      expect(await ping(db)).toEqual({ one: 1 });
    } finally {
      await db.close();
    }
  }, 60_000);
});

describe('tugcode run during a PostgreSQL outage', () => {
  /** A run of a 3-step plan with its one worker held in step-1; resolves once the implementer holds. */
  async function heldRun(env: Record<string, string>, o: { text?: boolean } = {}) {
    const own = await startPrivatePg();
    const pdb = await own.createDatabase('runout');
    const root = runRepo(planText([step(1, 'One'), step(2, 'Two'), step(3, 'Three')]));
    const impl = holdingImplementer();
    writeFileSync(join(impl.hold, 'step-1-a1'), '');
    const run = startRun(
      root,
      ['demo', '--workers', '1', '--implementer', impl.argv, '--heartbeat', '1'],
      {
        TUGCODE_STATE_URL: pdb.url,
        TUGCODE_STATE_HOST: 'h',
        ...env,
      },
      o,
    );
    const started = join(impl.started, 'step-1-a1');
    await waitUntil('step-1 held', () => {
      if (run.child.exitCode !== null) throw new Error(`run ended early: ${run.stdout()}`);
      return existsSync(started) && readFileSync(started, 'utf8') !== '';
    });
    return { own, run, release: () => rmSync(join(impl.hold, 'step-1-a1'), { force: true }) };
  }

  it('a SIGTERM while the driver retries stops the run promptly: exit 143, the summary last', async () => {
    const { own, run, release } = await heldRun({});
    await own.stop('fast');
    release(); // the worker now commits and calls the state: a lost connection, retried for up to 120 s
    // The run says it waits (once), so the SIGTERM lands while the driver retries.
    const unreachable = () => run.events().filter((e: any) => e.type === 'warning' && e.code === 'DatabaseUnavailable');
    const said = await waitUntil('the run to say it waits for PostgreSQL', () => unreachable()[0]);
    expect(said.message).toMatch(
      new RegExp(
        `^PostgreSQL at 127\\.0\\.0\\.1:${own.info.port} \\(database \\w+\\) is unreachable \\(.+\\): the run waits for it, up to 120 s$`,
      ),
    );
    const signalled = Date.now();
    run.child.kill('SIGTERM');
    const r = await run.done;
    expect(Date.now() - signalled, r.stderr).toBeLessThan(15_000);
    expect(r.code, r.stdout + r.stderr).toBe(143);
    expect(r.events.at(-1)?.type).toBe('summary');
    expect(r.stdout + r.stderr).not.toContain(own.info.password);
    expect(r.events.filter((e: any) => e.type === 'warning' && e.code === 'DatabaseUnavailable')).toHaveLength(1);
  }, 120_000);

  it('an outage ridden out is said once as it starts and once as it ends (text mode), and the run finishes', async () => {
    const { own, run, release } = await heldRun({}, { text: true });
    await own.stop('fast');
    release();
    const lines = (out: string) =>
      out.split('\n').filter((l) => l.includes('warning: DatabaseUnavailable: PostgreSQL at'));
    await waitUntil('the run to say it waits for PostgreSQL', () => lines(run.stdout()).length > 0);
    await own.start();
    const r = await run.done;
    expect(r.code, r.stdout + r.stderr).toBe(0);
    // As it happens (the run's lines), and again with the run's other warnings on stderr at its end.
    for (const out of [r.stdout, r.stderr]) {
      const said = lines(out);
      expect(said, out).toHaveLength(2);
      expect(said[0]).toMatch(/is unreachable \(.+\): the run waits for it, up to 120 s$/);
      expect(said[1]).toMatch(/is back after \d+ s: the run goes on$/);
    }
    expect(r.stdout + r.stderr).not.toContain(own.info.password);
  }, 120_000);

  it('without a signal the run gives up once the shared budget is spent, not once per call', async () => {
    const { own, run, release } = await heldRun({ TUGCODE_PG_RETRY_MS: '4000' });
    await own.stop('fast');
    const stopped = Date.now();
    release();
    const r = await run.done;
    // Complete, release, reconcile and summary each had 4 s of their own before: at least 12 s.
    expect(Date.now() - stopped, r.stdout).toBeLessThan(10_000);
    expect(r.code, r.stdout + r.stderr).toBe(10);
    const summary = r.events.at(-1);
    expect(summary?.type).toBe('summary');
    expect(summary.error.code).toBe('DatabaseUnavailable');
  }, 120_000);
});
