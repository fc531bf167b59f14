// pg (issue 14, "Speed"): the contention workload on both backends side by side. 16 claimers, each in its own
// linked worktree, drain a 400-step plan of independent steps (`state claim` → `state start` →
// `state complete --force`, the contention benchmark's loop, docs/quality.md §2), first on SQLite
// (.tugtool/state.db), then on a throwaway PostgreSQL server the bench starts itself. Reports claims/s, p50/p99
// claim latency and double claims, checked from the final state (every step completed exactly once) and from
// `state log` (no step ever had two live claims). Target: PostgreSQL claims/s >= SQLite's, 0 double claims on both.
//
// Two shapes of claimer: long-lived processes that keep their store open and loop through the operations layer
// (the shape of the `contention` row and of `tugcode run`'s workers: the target applies here), and one CLI
// process per call (informational: there a call's cost is mostly Node's start and, on PostgreSQL, loading `pg`
// and a SCRAM login, on the same 2 cores as the server).
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { withPgServer } from './pg.mjs';
import { CLI, ROOT, cli, planText, runNode, tempDir, tempRepo } from './state-bench-util.mjs';

const PROCS = Number(process.env.BENCH_PROCS ?? 16);
const STEPS = Number(process.env.BENCH_STEPS ?? 400);
/**
 * Runs of the long-lived shape per backend, alternating. SQLite's rate moves a lot between runs (its claimers
 * sleep between tries for the write lock), so each backend's row is its median run; every run is checked.
 */
const LONG_RUNS = Number(process.env.BENCH_PG_LONG_RUNS ?? 3);

/** The run with the median claims/s, its checks failing if any run's did. */
function medianRun(runs) {
  const sorted = [...runs].sort((a, b) => a.claimsPerS - b.claimsPerS);
  const mid = sorted[Math.floor((sorted.length - 1) / 2)];
  const worst = runs.find((r) => r.claims !== STEPS || r.detail.notCompleted !== 0);
  return {
    ...mid,
    claims: worst ? worst.claims : mid.claims,
    detail: worst ? worst.detail : mid.detail,
    doubles: Math.max(...runs.map((r) => r.doubles)),
    all: runs.map((r) => r.claimsPerS),
  };
}

/** One CLI call as a child process (async, so the claimers run side by side): its JSON and its wall time. */
async function call(args, cwd, env) {
  const { out, ms } = await runNode([CLI, ...args, '--json'], { cwd, env });
  return { ms, data: JSON.parse(out) };
}

/** Claims and completes until the plan is done. Returns the steps it claimed and each claim's latency. */
async function claimer(wt, env) {
  const claimed = [];
  const latency = [];
  let idle = 0;
  for (;;) {
    const { ms, data } = await call(['state', 'claim', 'bench', '--worktree', wt], wt, env);
    if (!data.claimed) {
      if (data.reason === 'all_completed') break;
      // Every remaining step is claimed by another claimer: wait for the plan to finish.
      idle++;
      await new Promise((r) => setTimeout(r, 20));
      continue;
    }
    latency.push(ms);
    claimed.push(data.step_anchor);
    await call(['state', 'start', 'bench', data.step_anchor, '--worktree', wt], wt, env);
    await call(['state', 'complete', 'bench', data.step_anchor, '--worktree', wt, '--force', 'bench'], wt, env);
  }
  return { claimed, latency, idle };
}

/**
 * A long-lived claimer: one process, its store open, claim → complete until the plan is done. It first warms up
 * (loads the operations, connects, reads the plan's readiness), then waits at a barrier until every claimer is
 * ready: the clock measures claiming, not 16 Node processes starting on 2 cores.
 */
function longLivedScript(wt, barrier) {
  const url = (p) => JSON.stringify(pathToFileURL(join(ROOT, 'dist', p)).href);
  return `
import { OpsContext, newCall } from ${url('ops/context.js')};
const ops = new OpsContext({ cwd: ${JSON.stringify(wt)}, env: process.env, longLived: true });
// The events carry the CLI's command names, so the checks read them as they read the CLI claimers'.
const store = await ops.store(newCall('state claim'));
const sc = await ops.stateCall(newCall('state claim'));
const scStart = await ops.stateCall(newCall('state start'));
const scDone = await ops.stateCall(newCall('state complete'));
const w = ${JSON.stringify(wt)};
await store.ready(await ops.stateCall(newCall('state ready')), { plan: 'bench' });
const { existsSync, writeFileSync } = await import('node:fs');
writeFileSync(${JSON.stringify(barrier.ready)}, '');
while (!existsSync(${JSON.stringify(barrier.go)})) await new Promise((r) => setTimeout(r, 2));
const cpu0 = process.cpuUsage();
const claimed = [];
const latency = [];
let idle = 0;
for (;;) {
  const t0 = performance.now();
  const c = await store.claim(sc, { plan: 'bench', worktree: w });
  if (!c.claimed) {
    if (c.reason === 'all_completed') break;
    idle++;
    await new Promise((r) => setTimeout(r, 5));
    continue;
  }
  latency.push(performance.now() - t0);
  claimed.push(c.step_anchor);
  await store.start(scStart, { plan: 'bench', step: c.step_anchor, worktree: w });
  await store.complete(scDone, { plan: 'bench', step: c.step_anchor, worktree: w, force: 'bench' });
}
await ops.close();
const cpu = process.cpuUsage(cpu0);
process.stdout.write(JSON.stringify({ claimed, latency, idle, cpuMs: (cpu.user + cpu.system) / 1000 }));
`;
}

async function longLived(wt, env, barrier) {
  const file = join(tempDir('tugcode-bench-claimer-'), 'claimer.mjs');
  writeFileSync(file, longLivedScript(wt, barrier));
  return JSON.parse((await runNode([file], { cwd: wt, env })).out);
}

/** Resolves when `n` claimers have written their ready file; then opens the barrier. */
async function openBarrier(dir, n) {
  while (readdirSync(dir).filter((f) => f.startsWith('ready-')).length < n) await new Promise((r) => setTimeout(r, 5));
  writeFileSync(join(dir, 'go'), '');
}

/** Every event of the plan, paging `state log` forward. */
async function allEvents(root, env) {
  const events = [];
  let after = 0;
  for (;;) {
    const { data } = await call(['state', 'log', 'bench', '--limit', '1000', '--after-id', String(after)], root, env);
    events.push(...data.events);
    if (data.events.length < 1000) return events;
    after = data.next_after_id;
  }
}

/**
 * Double claims found after the run: steps not completed exactly once in the final state and the log, and steps
 * claimed while another worktree held a live claim on them (no lease expires in the run: leases are 2 h).
 */
async function verify(root, env) {
  const { data: show } = await call(['state', 'show', 'bench'], root, env);
  const steps = show.plans[0].steps.filter((s) => s.parent_anchor === null);
  const notCompleted = steps.filter((s) => s.status !== 'completed').length;
  const holder = new Map();
  const completions = new Map();
  let overlapping = 0;
  for (const e of await allEvents(root, env)) {
    if (!e.step_anchor) continue;
    if (e.command === 'state claim' && e.details.claimed) {
      const held = holder.get(e.step_anchor);
      if (held !== undefined && held !== e.actor) overlapping++;
      holder.set(e.step_anchor, e.actor);
    } else if (e.command === 'state complete' && !e.details.already_completed) {
      holder.delete(e.step_anchor);
      completions.set(e.step_anchor, (completions.get(e.step_anchor) ?? 0) + 1);
    } else if (e.command === 'state release' || e.command === 'state fail' || e.command === 'state reset') {
      holder.delete(e.step_anchor);
    }
  }
  const notOnce = steps.filter((s) => completions.get(s.anchor) !== 1).length;
  return { steps: steps.length, notCompleted, notOnce, overlapping };
}

function pct(xs, p) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}

/** The whole workload on one backend: a fresh repo, `state init`, PROCS linked worktrees, the drain, the checks. */
/** CPU time (ms) of a process and its reaped children: for the PostgreSQL server, the postmaster and its backends. */
function cpuMs(pid) {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) * 10;
}

export async function workload(env, shape = 'cli', serverPid = null) {
  const root = tempRepo({ '.tugtool/tugplan-bench.md': planText(STEPS, 0, 1) });
  cli(['state', 'init', 'bench'], root, env);
  const base = tempDir('tugcode-bench-wt-');
  const wts = [];
  for (let i = 0; i < PROCS; i++) {
    const wt = join(base, `wt-${i}`);
    execFileSync('git', ['worktree', 'add', '-q', '-b', `claimer-${i}`, wt], { cwd: root });
    wts.push(wt);
  }
  const gate = tempDir('tugcode-bench-barrier-');
  const barrier = (i) => ({ ready: join(gate, `ready-${i}`), go: join(gate, 'go') });
  const started = Promise.all(
    wts.map((wt, i) => (shape === 'cli' ? claimer(wt, env) : longLived(wt, env, barrier(i)))),
  );
  if (shape !== 'cli') await Promise.race([openBarrier(gate, PROCS), started]);
  const t0 = performance.now();
  const server0 = serverPid ? cpuMs(serverPid) : 0;
  const runs = await started;
  const wall = (performance.now() - t0) / 1000;
  const serverCpuMs = serverPid ? cpuMs(serverPid) - server0 : 0;
  const claims = runs.flatMap((r) => r.claimed);
  const latency = runs.flatMap((r) => r.latency);
  const byStep = new Map();
  for (const s of claims) byStep.set(s, (byStep.get(s) ?? 0) + 1);
  const seenTwice = [...byStep.values()].filter((n) => n > 1).length;
  const v = await verify(root, env);
  return {
    claims: claims.length,
    claimsPerS: claims.length / wall,
    wall,
    p50: pct(latency, 50),
    p99: pct(latency, 99),
    doubles: seenTwice + v.overlapping + v.notOnce,
    detail: v,
    idle: runs.reduce((n, r) => n + r.idle, 0),
    // Long-lived claimers only: CPU per claimed step of the claimers' loops, and of the server.
    clientCpuPerStep: runs.reduce((n, r) => n + (r.cpuMs ?? 0), 0) / claims.length,
    serverCpuPerStep: serverCpuMs / claims.length,
  };
}

export async function run() {
  // SQLite first: TUGCODE_STATE_URL from the caller's environment must not send it to a server.
  const SQLITE = { TUGCODE_STATE_URL: '' };
  const results = await withPgServer(async ({ url, info }) => {
    const postmaster = Number(readFileSync(join(info.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    const PG = (shape) => ({ TUGCODE_STATE_URL: url, TUGCODE_STATE_PROJECT: `bench${process.pid}${shape}` });
    const out = {};
    const long = { sqlite: [], pg: [] };
    for (let i = 0; i < LONG_RUNS; i++) {
      long.sqlite.push(await workload(SQLITE, 'long'));
      long.pg.push(await workload(PG(`long${i}`), 'long', postmaster));
    }
    out.long = { sqlite: medianRun(long.sqlite), pg: medianRun(long.pg) };
    out.cli = { sqlite: await workload(SQLITE, 'cli'), pg: await workload(PG('cli'), 'cli', postmaster) };
    return out;
  });
  const rows = [];
  for (const shape of ['long', 'cli']) {
    const label = shape === 'long' ? `${PROCS} long-lived claimers` : `${PROCS} CLI claimers, info`;
    const { sqlite, pg } = results[shape];
    for (const [name, r] of [
      ['sqlite', sqlite],
      ['pg', pg],
    ]) {
      rows.push(
        { metric: `${name} claims/s (${label})`, value: Number(r.claimsPerS.toFixed(1)), unit: '/s' },
        { metric: `${name} claim p50 (${shape})`, value: Number(r.p50.toFixed(1)), unit: 'ms' },
        { metric: `${name} claim p99 (${shape})`, value: Number(r.p99.toFixed(1)), unit: 'ms' },
        {
          metric: `${name} steps claimed (of ${STEPS}, ${shape})`,
          value: r.claims,
          unit: 'steps',
          target: `= ${STEPS}`,
          ok: r.claims === STEPS && r.detail.notCompleted === 0,
        },
        {
          metric: `${name} double claims (${shape})`,
          value: r.doubles,
          unit: 'steps',
          target: '= 0',
          ok: r.doubles === 0,
        },
      );
    }
    const ratio = pg.claimsPerS / sqlite.claimsPerS;
    rows.push(
      shape === 'long'
        ? {
            metric: 'pg / sqlite claims/s (long-lived)',
            value: Number(ratio.toFixed(2)),
            unit: 'x',
            target: '>= 1',
            ok: ratio >= 1,
          }
        : { metric: 'pg / sqlite claims/s (CLI, info)', value: Number(ratio.toFixed(2)), unit: 'x' },
    );
    if (shape === 'long') {
      const ms = (v) => Number(v.toFixed(2));
      rows.push(
        { metric: 'sqlite CPU per step (claimers)', value: ms(sqlite.clientCpuPerStep), unit: 'ms' },
        { metric: 'pg CPU per step (claimers)', value: ms(pg.clientCpuPerStep), unit: 'ms' },
        { metric: 'pg CPU per step (server)', value: ms(pg.serverCpuPerStep), unit: 'ms' },
      );
    }
  }
  const { long, cli: perCall } = results;
  return {
    name: 'pg',
    rows,
    notes: [
      `${PROCS} claimers (one linked worktree each), ${STEPS} independent steps, claim → start → complete --force`,
      `long-lived shape: ${LONG_RUNS} runs per backend, alternating; rows are each backend's median run (claims/s of every run: sqlite ${long.sqlite.all.map((x) => x.toFixed(0)).join(', ')}; pg ${long.pg.all.map((x) => x.toFixed(0)).join(', ')})`,
      `wall (long-lived): sqlite ${long.sqlite.wall.toFixed(1)} s, pg ${long.pg.wall.toFixed(1)} s; (CLI): sqlite ${perCall.sqlite.wall.toFixed(1)} s, pg ${perCall.pg.wall.toFixed(1)} s`,
      "the PostgreSQL server is the tests' throwaway one (loopback, SCRAM auth, fsync off, same 2 cores); SQLite runs with synchronous=FULL",
      'long-lived claimers start, connect and read the plan before a barrier; the clock starts when all are ready',
      'CPU per step: user + system time of the claimers between the barrier and their exit (and of the server and its backends), divided by the steps claimed',
    ],
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const r = await run();
  for (const row of r.rows)
    console.log(row.metric.padEnd(40), row.value, row.unit, row.ok === undefined ? '' : row.ok ? 'ok' : 'MISS');
  for (const n of r.notes) console.log('note:', n);
}
