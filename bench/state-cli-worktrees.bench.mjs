// cli-floor-wt (issue 24, start-up): the hot `tugcode state` commands as an implementer runs them — from
// inside a linked worktree (`git worktree add`) of a repository with a 200-step plan and four implementers
// holding claims — against the floor: a minimal CommonJS node script that loads better-sqlite3, opens
// state.db with the store's pragmas and runs the claim transaction of the state design's seed (BEGIN
// EXCLUSIVE; the ready-step SELECT with its NOT EXISTS over step_deps; the three UPDATEs; COMMIT).
//
// The floor claims on a plan of its own in the same state.db and leaves a lease that has already expired,
// so every floor run reclaims the same step and writes the same rows. Runs go round-robin (floor, claim,
// floor, heartbeat, floor, show, …) so machine load hits all alike; each command run is paired with the
// floor run just before it and the median of the pair ratios is reported. Targets: claim and heartbeat
// ≤ 1.2×, show ≤ 1.3×.
import { execFileSync, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, ROOT, cli, median, planText, tempRepo } from './state-bench-util.mjs';
import { timeProcess } from './lib.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 31);
const STEPS = 200;
const PLAN = '.tugtool/tugplan-bench.md';
const FLOOR_PLAN = '.tugtool/tugplan-floor.md';
const TARGETS = { claim: 1.2, heartbeat: 1.2, show: 1.3 };

const FLOOR = `'use strict';
const Database = require(${JSON.stringify(join(ROOT, 'node_modules', 'better-sqlite3'))});
const [db_path, plan_path, worktree] = process.argv.slice(2);
const db = new Database(db_path, { timeout: 5000, fileMustExist: true });
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
db.pragma('foreign_keys = ON');
const now = new Date().toISOString();
db.exec('BEGIN EXCLUSIVE');
const s = db.prepare(\`SELECT s.anchor, s.step_index FROM steps s
  WHERE s.plan_path = ? AND s.parent_anchor IS NULL
    AND (s.status = 'pending' OR (s.status = 'claimed' AND s.lease_expires_at < ?))
    AND NOT EXISTS (SELECT 1 FROM step_deps d
      JOIN steps dep ON dep.plan_path = d.plan_path AND dep.anchor = d.depends_on
      WHERE d.plan_path = s.plan_path AND d.step_anchor = s.anchor AND dep.status != 'completed')
  ORDER BY s.step_index LIMIT 1\`).get(plan_path, now);
if (!s) throw new Error('floor: no step to claim');
// The lease ends when it starts: the next floor run reclaims this step.
db.prepare(\`UPDATE steps SET status = 'claimed', claimed_by = ?, claimed_at = ?, lease_expires_at = ?,
  heartbeat_at = NULL, started_at = NULL WHERE plan_path = ? AND anchor = ?\`).run(worktree, now, now, plan_path, s.anchor);
db.prepare(\`UPDATE steps SET status = 'claimed', claimed_by = ?, claimed_at = ?, lease_expires_at = ?,
  heartbeat_at = NULL, started_at = NULL WHERE plan_path = ? AND parent_anchor = ? AND status != 'completed'\`)
  .run(worktree, now, now, plan_path, s.anchor);
db.prepare(\`UPDATE checklist_items SET status = 'open', updated_at = ? WHERE plan_path = ? AND step_anchor IN (
  SELECT anchor FROM steps WHERE plan_path = ? AND parent_anchor = ? AND status = 'claimed') AND status != 'completed'\`)
  .run(now, plan_path, plan_path, s.anchor);
db.exec('COMMIT');
db.close();
`;

/** One node run of `argv` in `cwd`, wall ms (lib.mjs's timer). */
const timed = (argv, cwd) => timeProcess([process.execPath, ...argv], { cwd });

/** A repository with the plan, four linked worktrees each holding a claim, and the floor script. */
export function setup() {
  const root = tempRepo({ [PLAN]: planText(STEPS, 4, 3), [FLOOR_PLAN]: planText(STEPS, 4, 3) });
  const floorFile = join(root, '..', 'floor.cjs');
  writeFileSync(floorFile, FLOOR);
  const wts = [1, 2, 3, 4].map((i) => {
    const wt = join(root, '..', `wt-${i}`);
    execFileSync('git', ['worktree', 'add', '-q', '-b', `tugplan/bench-${i}`, wt], { cwd: root });
    return wt;
  });
  cli(['state', 'init', 'bench'], root);
  cli(['state', 'init', 'floor'], root);
  // Steps 1–3 held by worktrees 2–4; worktree 1 claims step 4 and releases it on every round.
  const held = wts
    .slice(1)
    .map((wt) => JSON.parse(cli(['state', 'claim', 'bench', '--worktree', wt, '--json'], wt)).step_anchor);
  return { root, floorFile, db: join(root, '.tugtool', 'state.db'), wts, held };
}

export async function run() {
  const { floorFile, db, wts, held } = setup();
  const floor = () => timed([floorFile, db, FLOOR_PLAN, join(wts[0], '..', 'floor-worker')], wts[0]);
  const commands = {
    claim: {
      cwd: wts[0],
      args: ['state', 'claim', 'bench', '--worktree', wts[0], '--json'],
      // Untimed: the step goes back to pending, so every timed claim is a fresh claim of it.
      after: (out) => cli(['state', 'release', 'bench', JSON.parse(out).step_anchor, '--worktree', wts[0]], wts[0]),
    },
    heartbeat: { cwd: wts[1], args: ['state', 'heartbeat', 'bench', held[0], '--worktree', wts[1], '--json'] },
    show: { cwd: wts[2], args: ['state', 'show', 'bench', '--json'] },
  };
  // BENCH_BASE_CLI=<another checkout>/bin/tugcode.cjs times that build too, in the same rounds (before/after).
  const builds = { this: CLI, ...(process.env.BENCH_BASE_CLI ? { base: process.env.BENCH_BASE_CLI } : {}) };
  const ratios = {};
  const f = {};
  const c = {};
  for (let i = -1; i < RUNS; i++) {
    for (const [name, cmd] of Object.entries(commands)) {
      for (const [build, bin] of Object.entries(builds)) {
        const fm = floor();
        const t = process.hrtime.bigint();
        const r = spawnSync(process.execPath, [bin, ...cmd.args], { cwd: cmd.cwd, encoding: 'utf8' });
        const ms = Number(process.hrtime.bigint() - t) / 1e6;
        if (r.status !== 0) throw new Error(`${bin} ${cmd.args.join(' ')} failed: ${r.stderr}`);
        cmd.after?.(r.stdout);
        // Round -1 warms the code caches and the page cache.
        if (i < 0) continue;
        (ratios[`${name} ${build}`] ??= []).push(ms / fm);
        if (build === 'this') {
          (f[name] ??= []).push(fm);
          (c[name] ??= []).push(ms);
        }
      }
    }
  }
  const rows = [];
  for (const name of Object.keys(commands)) {
    const ratio = median(ratios[`${name} this`]);
    rows.push({
      metric: `${name} median (floor ${median(f[name]).toFixed(0)} ms)`,
      value: Number(median(c[name]).toFixed(1)),
      unit: 'ms',
    });
    rows.push({
      metric: `${name} / floor`,
      value: Number(ratio.toFixed(2)),
      unit: 'x',
      target: `<= ${TARGETS[name]}`,
      ok: ratio <= TARGETS[name],
    });
    if (builds.base)
      rows.push({
        metric: `${name} / floor, BENCH_BASE_CLI (info)`,
        value: Number(median(ratios[`${name} base`]).toFixed(2)),
        unit: 'x',
      });
  }
  const empty = [];
  for (let i = 0; i < 11; i++) empty.push(timed(['-e', '0'], wts[0]));
  return {
    name: 'cli-floor-wt',
    rows,
    notes: [
      `${STEPS}-step plan, 4 linked worktrees holding claims, commands run from inside one; ${RUNS} rounds`,
      `empty node ${median(empty).toFixed(0)} ms; floor ${median(Object.values(f).flat()).toFixed(0)} ms`,
      ...(builds.base ? [`BENCH_BASE_CLI: ${builds.base}`] : []),
    ],
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const r = await run();
  for (const row of r.rows)
    console.log(row.metric.padEnd(40), row.value, row.unit, row.ok === undefined ? '' : row.ok ? 'ok' : 'MISS');
  for (const n of r.notes) console.log('note:', n);
}
