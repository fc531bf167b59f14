// run (issue 12, Speed): `tugcode run` on a plan of 12 independent steps whose implementer sleeps 0.5 s and
// writes one file, with 1, 2 and 4 workers, each run in a fresh repository (the runs are interleaved so
// machine noise hits all worker counts alike). Targets: speed-up t1/t2 ≥ 1.9 and t1/t4 ≥ 3.3 (medians of
// the summary's wall_ms); driver overhead per step ≤ 100 ms (median over the steps of the 1-worker runs).
// Overhead of a step = the time from the worker's previous step_completed event to this one (claim, reset,
// spawning the implementer, commit, integrate, complete) minus the implementer's own lifetime, which the
// implementer records itself (process start → file written). The 4-worker speed-up comes from the
// implementers sleeping, not from CPU: the machine may have fewer cores than workers. An info row times one
// review round (docs/run.md §6) with an instant reviewer script: the 1-worker overhead with `--reviewer`.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, median, tempDir } from './state-bench-util.mjs';

// Medians of 5 interleaved runs per worker count: single 2-worker walls on this machine spread over ~100 ms.
const RUNS = Number(process.env.BENCH_RUN_RUNS ?? 5);
const WORKERS = [1, 2, 4];
const STEPS = 12;
const SLEEP_MS = 500;
const PLAN = '.tugtool/tugplan-bench.md';
const ENV = {
  ...process.env,
  NO_COLOR: '1',
  GIT_AUTHOR_NAME: 'b',
  GIT_AUTHOR_EMAIL: 'b@e',
  GIT_COMMITTER_NAME: 'b',
  GIT_COMMITTER_EMAIL: 'b@e',
};

/** 12 top-level steps, each with `Depends on: none` (a plan with no Depends-on line would be sequential). */
export function benchPlan(n = STEPS) {
  const out = ['## Phase 1.0: Run bench {#phase-bench}', '', '### Execution Steps {#execution-steps}', ''];
  for (let i = 1; i <= n; i++)
    out.push(
      `#### Step ${i}: Write file ${i} {#step-${i}}`,
      '',
      '**Depends on:** none',
      '',
      `**Commit:** \`feat: write file ${i}\``,
      '',
      '**Tasks:**',
      `- [ ] write file ${i}`,
      '',
    );
  return out.join('\n');
}

/**
 * The implementer: sleeps, writes `<step>.txt`, appends its own lifetime to `times` (outside the repo). A
 * shell script, not node: a node process costs ~55 ms of CPU to start, and with 4 of them starting at once on
 * a 2-core machine the row would measure that contention instead of the driver.
 */
function implementer(dir) {
  const script = join(dir, 'impl.sh');
  writeFileSync(
    script,
    `start=$(date +%s%3N)
sleep ${SLEEP_MS / 1000}
printf '%s\\n' "$TUG_STEP" > "$TUG_WORKTREE/$TUG_STEP.txt"
end=$(date +%s%3N)
printf '{"step":"%s","start":%s,"end":%s}\\n' "$TUG_STEP" "$start" "$end" >> "$BENCH_TIMES"
`,
  );
  return `sh ${JSON.stringify(script)}`;
}

/** An instant reviewer: reads its input and approves (the review gate's own cost, not a reviewer's). */
function reviewer(dir) {
  const script = join(dir, 'review.sh');
  writeFileSync(script, `cat >/dev/null\necho '{"verdict":"APPROVE","summary":"ok","issues":[]}'\n`);
  return `sh ${JSON.stringify(script)}`;
}

/** A fresh repository: git init, `tugcode init`, the plan, one commit. */
function freshRepo() {
  const dir = tempDir('tugcode-bench-run-');
  const root = join(dir, 'repo');
  mkdirSync(join(root, '.tugtool'), { recursive: true });
  execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: root });
  execFileSync(process.execPath, [CLI, 'init', '--json'], { cwd: root, env: ENV, stdio: 'ignore' });
  writeFileSync(join(root, PLAN), benchPlan());
  execFileSync('git', ['add', '-A'], { cwd: root });
  execFileSync('git', ['commit', '-q', '-m', 'bench plan'], { cwd: root, env: ENV });
  return { dir, root };
}

/** The plan really is parallel: `state init` says not implicit-sequential and all 12 steps are ready. */
function checkParallel() {
  const { root } = freshRepo();
  const init = JSON.parse(
    execFileSync(process.execPath, [CLI, 'state', 'init', PLAN, '--json'], { cwd: root, env: ENV }),
  );
  const ready = JSON.parse(
    execFileSync(process.execPath, [CLI, 'state', 'ready', PLAN, '--json'], { cwd: root, env: ENV }),
  );
  if (init.implicit_sequential || ready.ready_steps.length !== STEPS)
    throw new Error(`bench plan is not ${STEPS} independent steps: ${JSON.stringify(ready.ready_steps)}`);
}

export function runOnce(workers, o = { review: false }) {
  const { dir, root } = freshRepo();
  const argv = implementer(dir);
  const extra = o.review ? ['--reviewer', reviewer(dir)] : [];
  const times = join(dir, 'times.jsonl');
  writeFileSync(times, '');
  const t0 = process.hrtime.bigint();
  const r = spawnSync(
    process.execPath,
    [CLI, 'run', PLAN, '--workers', String(workers), '--implementer', argv, ...extra, '--json'],
    {
      cwd: root,
      env: { ...ENV, BENCH_TIMES: times },
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  const processMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const events = r.stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  const summary = events.at(-1);
  if (
    r.status !== 0 ||
    summary?.type !== 'summary' ||
    summary.status !== 'ok' ||
    summary.steps_completed.length !== STEPS
  )
    throw new Error(`run --workers ${workers} failed (${r.status}): ${r.stderr}\n${r.stdout.slice(-2000)}`);
  const impl = Object.fromEntries(
    readFileSync(times, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .map((t) => [t.step, t]),
  );
  return {
    workers,
    processMs,
    wallMs: summary.wall_ms,
    events,
    impl,
    perStep: perStep(events, impl),
    fixed: fixedCosts(events),
  };
}

const PHASES = ['claim', 'reset', 'spawn', 'implementer', 'exit', 'commit', 'review', 'integrate', 'complete'];

/**
 * Per completed step: its overhead and a phase breakdown from the event times (ms). `claim` is the gap from
 * the worker's previous step_completed to `claimed` (unknown for a worker's first step, which also creates
 * its worktree); `spawn` is the `implementer` phase event → the implementer process start, `exit` its
 * last write → the next phase event.
 */
function perStep(events, impl) {
  const t = (e) => Date.parse(e.at);
  const out = [];
  const lastDone = new Map();
  const cur = new Map();
  for (const e of events) {
    if (e.type === 'claimed') cur.set(e.worker, { step: e.step_anchor, claimed: t(e), phase: {} });
    else if (e.type === 'phase') cur.get(e.worker).phase[e.phase] = t(e);
    else if (e.type === 'step_completed') {
      const c = cur.get(e.worker);
      const done = t(e);
      const p = c.phase;
      const im = impl[c.step];
      const after = p.checkpoints ?? p.commit;
      const prev = lastDone.get(e.worker);
      const row = {
        step: c.step,
        first: prev === undefined,
        claim: prev === undefined ? null : c.claimed - prev,
        reset: p.implementer - p.reset,
        spawn: im.start - p.implementer,
        implementer: im.end - im.start,
        exit: after - im.end,
        commit: (p.review ?? p.integrate) - p.commit,
        review: p.review === undefined ? 0 : p.integrate - p.review,
        integrate: p.complete - p.integrate,
        complete: done - p.complete,
      };
      row.overhead = done - (prev ?? c.claimed) - row.implementer;
      out.push(row);
      lastDone.set(e.worker, done);
    }
  }
  return out;
}

/**
 * The parts of a run's wall that do not scale with the steps: driver start (preflight, state init, the
 * integration branch) → run_started; run_started → the last worker's first claim (worker worktrees are
 * created there); the last step_completed → summary (reconcile, summary).
 */
function fixedCosts(events) {
  const t = (e) => Date.parse(e.at);
  const summary = events.at(-1);
  const start = t(summary) - summary.wall_ms;
  const started = t(events.find((e) => e.type === 'run_started'));
  const firstClaims = new Map();
  for (const e of events) if (e.type === 'claimed' && !firstClaims.has(e.worker)) firstClaims.set(e.worker, t(e));
  const done = events.filter((e) => e.type === 'step_completed').map(t);
  return {
    start: started - start,
    worktrees: Math.max(...firstClaims.values()) - started,
    tail: t(summary) - Math.max(...done),
  };
}

const r0 = (x) => Math.round(x);
const r2 = (x) => Number(x.toFixed(2));

export async function run() {
  checkParallel();
  const runs = Object.fromEntries(WORKERS.map((w) => [w, []]));
  const reviewed = [];
  for (let i = 0; i < RUNS; i++) {
    for (const w of WORKERS) runs[w].push(runOnce(w));
    reviewed.push(runOnce(1, { review: true }));
  }
  const wall = Object.fromEntries(WORKERS.map((w) => [w, median(runs[w].map((x) => x.wallMs))]));
  const proc = Object.fromEntries(WORKERS.map((w) => [w, median(runs[w].map((x) => x.processMs))]));
  const rows = [];
  for (const w of WORKERS)
    rows.push({
      metric: `wall, ${w} worker${w > 1 ? 's' : ''} (process ${r0(proc[w])} ms)`,
      value: r0(wall[w]),
      unit: 'ms',
    });
  const s2 = wall[1] / wall[2];
  const s4 = wall[1] / wall[4];
  rows.push({ metric: 'speed-up t1/t2', value: r2(s2), unit: 'x', target: '>= 1.9', ok: s2 >= 1.9 });
  rows.push({ metric: 'speed-up t1/t4', value: r2(s4), unit: 'x', target: '>= 3.3', ok: s4 >= 3.3 });
  rows.push({ metric: 'speed-up t1/t4, process wall (info)', value: r2(proc[1] / proc[4]), unit: 'x' });
  // Overhead: the steps of the 1-worker runs after each run's first (which also creates the worktree).
  const steady = (w) => runs[w].flatMap((x) => x.perStep.filter((s) => !s.first));
  const oh = median(steady(1).map((s) => s.overhead));
  rows.push({
    metric: 'driver overhead per step, 1 worker (median)',
    value: r0(oh),
    unit: 'ms',
    target: '<= 100',
    ok: oh <= 100,
  });
  rows.push({
    metric: 'driver overhead per step, 4 workers (info)',
    value: r0(median(steady(4).map((s) => s.overhead))),
    unit: 'ms',
  });
  const withReview = median(reviewed.flatMap((x) => x.perStep.filter((s) => !s.first)).map((s) => s.overhead));
  rows.push({
    metric: 'driver overhead per step, 1 worker, instant reviewer (info)',
    value: r0(withReview),
    unit: 'ms',
  });
  rows.push({ metric: 'one review round, instant reviewer (info)', value: r0(withReview - oh), unit: 'ms' });
  const phases = (w) => PHASES.map((k) => `${k} ${r0(median(steady(w).map((s) => s[k])))}`).join(', ');
  const notes = [
    `runs per worker count: ${RUNS} (fresh repository each, interleaved); ${STEPS} steps, implementer sleeps ${SLEEP_MS} ms`,
    `wall = the summary's wall_ms (the driver from preflight to summary); process wall adds node start-up and worktree removal`,
    `phase medians, 1 worker (ms): ${phases(1)}`,
    `phase medians, 4 workers (ms): ${phases(4)}`,
    `phase medians, 1 worker with an instant reviewer (ms): ${PHASES.map((k) => `${k} ${r0(median(reviewed.flatMap((x) => x.perStep.filter((s) => !s.first)).map((s) => s[k])))}`).join(', ')}`,
    ...WORKERS.map(
      (w) =>
        `fixed costs, ${w} worker${w > 1 ? 's' : ''} (ms): ` +
        ['start', 'worktrees', 'tail'].map((k) => `${k} ${r0(median(runs[w].map((x) => x.fixed[k])))}`).join(', '),
    ),
    `first step of each worker (creates its worktree), 1 worker: overhead ${r0(median(runs[1].map((x) => x.perStep[0].overhead)))} ms (not in the median)`,
  ];
  return { name: 'run', rows, notes };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const r = await run();
  console.log(JSON.stringify(r, null, 2));
  if (r.rows.some((row) => row.ok === false)) process.exitCode = 1;
}
