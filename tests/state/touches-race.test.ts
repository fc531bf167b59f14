/**
 * The Touches claim rule under concurrency (docs/state.md §3.12), on both backends, through real
 * `tugcode state claim` processes: claimers race on a plan whose ready steps all overlap (never two of them
 * held at once, with and without `--step`), and on a plan of disjoint groups (one step of each group claimed
 * in the same round: disjoint steps still run side by side). Touches declared on substeps count for their
 * top-level step (docs/plan-format.md §2.5), so half of the steps declare theirs on a substep.
 *
 * As in tests/state/race.test.ts, every round races by construction: a gate holds the write lock every claim
 * needs while the claimers start, and lets them go together. On PostgreSQL claims then run side by side and
 * only the Touches lock (advisory class 5) orders them; on SQLite the writer is alone.
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { OpsContext, newCall } from '../../src/ops/context.js';
import { touchesOverlap } from '../../src/plan/touches.js';
import { waitForOtherSessionsGone } from '../helpers/pg.js';
import { BACKENDS, backend, type Backend } from '../pg/backend.js';
import { completeAll, initialized, race } from './race-helpers.js';
import { planText, type StepSpec } from './helpers.js';

const PROCS = 8;
const ROUNDS = Number(process.env.TUGCODE_RACE_ROUNDS || 2);

/**
 * PostgreSQL's deadlock count for the test database (0 on SQLite). A session's statistics reach
 * pg_stat_database when it ends: the claimers have exited when this is read after a round.
 */
async function deadlocks(b: Backend): Promise<number> {
  if (b.kind !== 'postgres') return 0;
  const c = new pg.Client({ connectionString: b.db!.url });
  await c.connect();
  try {
    const own = Number((await c.query('SELECT pg_backend_pid() AS pid')).rows[0].pid);
    await waitForOtherSessionsGone(b.db!.url, [own]);
    const r = await c.query('SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()');
    return Number(r.rows[0].deadlocks);
  } finally {
    await c.end();
  }
}

/** The steps held now, read in-process through the operations layer. */
async function heldNow(b: Backend, root: string): Promise<string[]> {
  const ops = new OpsContext({ cwd: root, env: { ...process.env, ...b.env } });
  try {
    const call = newCall('state show');
    const doc = await (await ops.store(call)).exportPlan(await ops.stateCall(call), { plan: 'demo' });
    return doc.steps
      .filter((s) => s.parent_anchor === null && (s.status === 'claimed' || s.status === 'in_progress'))
      .map((s) => s.anchor);
  } finally {
    await ops.close();
  }
}

/**
 * Top-level step `n` (independent) touching `globs`: on the step itself for odd `n`, on its substep for even
 * `n` (the top-level step declares none of its own).
 */
function touching(n: number, globs: string): StepSpec[] {
  const body = `**Touches:** ${globs}`;
  if (n % 2 === 1) return [{ id: String(n), deps: [], tasks: ['t'], body }];
  return [
    { id: String(n), deps: [], tasks: ['t'] },
    { id: `${n}.1`, level: 5, tasks: ['s'], body },
  ];
}

/** Every pair of these glob lists overlaps: the fixture's premise, checked rather than assumed. */
const OVERLAPPING = [
  'src/**',
  'src/x.ts',
  '**/x.ts',
  'src/*.ts',
  'src/{x,y}.ts',
  'src/**/*.ts',
  'src/x.ts, notes/a.md',
  '**',
];

describe.each(BACKENDS)('Touches claim races between processes [%s]', (kind) => {
  it(`never holds two overlapping steps at once (${PROCS} claimers, ${ROUNDS} rounds)`, async () => {
    const lists = OVERLAPPING.map((g) => g.split(', '));
    for (const a of lists) for (const b of lists) expect(touchesOverlap(a, b), `${a} / ${b}`).toBe(true);
    const b = await backend(kind);
    const steps = Array.from({ length: Math.max(ROUNDS, OVERLAPPING.length) }, (_, i) =>
      touching(i + 1, OVERLAPPING[i % OVERLAPPING.length]!),
    );
    const { root, worktrees } = await initialized(b, planText(steps.flat()), 'o', PROCS);
    const before = await deadlocks(b);
    for (let round = 1; round <= ROUNDS; round++) {
      const results = await race(b, root, worktrees);
      // One winner (on PostgreSQL not necessarily the first step: claims skip rows others have locked);
      // everyone else finds nothing claimable beside it.
      const wins = results.filter((r) => r.claimed);
      expect(wins, `round ${round}: ${JSON.stringify(results)}`).toHaveLength(1);
      const held = wins[0]!.step_anchor!;
      for (const r of results.filter((x) => !x.claimed))
        expect(r).toMatchObject({ reason: 'no_ready_steps', claimed_steps: [held] });
      expect(await heldNow(b, root)).toEqual([held]);
      await completeAll(b, root, wins);
    }
    // Claims that wait for the Touches lock never wait for a row while holding it (no deadlock to retry).
    expect((await deadlocks(b)) - before).toBe(0);
  }, 300_000);

  it(`gives one of ${PROCS} claimers racing for distinct overlapping --step the step; the others wait`, async () => {
    const b = await backend(kind);
    const steps = OVERLAPPING.map((g, i) => touching(i + 1, g));
    const { root, worktrees } = await initialized(b, planText(steps.flat()), 's', PROCS);
    const before = await deadlocks(b);
    const results = await race(b, root, worktrees, (i) => ['--step', `step-${i + 1}`]);
    const wins = results.filter((r) => r.claimed);
    expect(wins, JSON.stringify(results)).toHaveLength(1);
    const winner = wins[0]!.step_anchor!;
    for (const r of results.filter((x) => !x.claimed))
      expect(r).toMatchObject({ reason: 'not_ready', touches_overlap: winner });
    expect(await heldNow(b, root)).toEqual([winner]);
    expect((await deadlocks(b)) - before).toBe(0);
  }, 300_000);

  it(`claims steps with disjoint Touches side by side (${PROCS} claimers, 4 disjoint groups)`, async () => {
    const b = await backend(kind);
    // Steps 1–4 touch four disjoint areas; steps 5–8 overlap them one to one (5 with 1, 6 with 2, …).
    const globs = ['src/a/**', 'src/b/**', 'notes/**', 'test/*.ts'];
    globs.push('src/a/x.ts', 'src/b/**/*.ts', 'notes/guide.md', 'test/{one,two}.ts');
    const group = (anchor: string) => (Number(anchor.slice('step-'.length)) - 1) % 4;
    const { root, worktrees } = await initialized(b, planText(globs.flatMap((g, i) => touching(i + 1, g))), 'd', PROCS);
    const before = await deadlocks(b);
    const all: string[] = [];
    for (let round = 1; round <= 2; round++) {
      const wins = (await race(b, root, worktrees)).filter((r) => r.claimed);
      const anchors = wins.map((w) => w.step_anchor!);
      // Four steps at once, one of each group (which one is up to the race on PostgreSQL).
      expect(anchors.map(group).sort(), `round ${round}: ${anchors}`).toEqual([0, 1, 2, 3]);
      expect((await heldNow(b, root)).sort()).toEqual([...anchors].sort());
      all.push(...anchors);
      await completeAll(b, root, wins);
    }
    expect(all.sort()).toEqual(globs.map((_, i) => `step-${i + 1}`).sort());
    expect((await deadlocks(b)) - before).toBe(0);
  }, 300_000);
});
