// run (issue 12, Speed): `tugcode run` on a plan of 12 independent steps whose implementer sleeps 0.5 s and
// writes one file, with 1, 2 and 4 workers, each run in a fresh repository (the runs are interleaved so
// machine noise hits all worker counts alike). Targets: speed-up t1/t2 ≥ 1.9 and t1/t4 ≥ 3.3 (medians of
// the summary's wall_ms); driver overhead per step ≤ 100 ms (median over the steps of the 1-worker runs).
// Overhead of a step = the time from the worker's previous step_completed event to this one (claim, reset,
// spawning the implementer, commit, integrate, complete) minus the implementer's own lifetime, which the
// implementer records itself (process start → file written). The 4-worker speed-up comes from the
// implementers sleeping, not from CPU: the machine may have fewer cores than workers. An info row times one
// review round (docs/run.md §6) with an instant reviewer script: the 1-worker overhead with `--reviewer`.
// Another times one conflict resolution in the same attempt (docs/run.md §1.9) with an instant resolver
// script, 2 workers: the `conflict` → `conflict_resolved` events minus the resolver's own lifetime.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, median, RUN_ENV as ENV, tempDir } from './state-bench-util.mjs';

// Medians of 5 interleaved runs per worker count: single 2-worker walls on this machine spread over ~100 ms.
const RUNS = Number(process.env.BENCH_RUN_RUNS ?? 5);
const WORKERS = [1, 2, 4];
const STEPS = 12;
const SLEEP_MS = 500;
const PLAN = '.tugtool/tugplan-bench.md';

/**
 * `n` top-level steps, each with `Depends on: none` (a plan with no Depends-on line would be sequential), or
 * with `chain` each depending on the one before (as the driver tests' plans do).
 */
export function benchPlan(n = STEPS, o = { chain: false }) {
  const out = ['## Phase 1.0: Run bench {#phase-bench}', '', '### Execution Steps {#execution-steps}', ''];
  for (let i = 1; i <= n; i++)
    out.push(
      `#### Step ${i}: Write file ${i} {#step-${i}}`,
      '',
      `**Depends on:** ${o.chain && i > 1 ? `#step-${i - 1}` : 'none'}`,
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

/** A fresh repository: git init, `tugcode init`, the plan (and `files`), one commit. */
function freshRepo(plan = PLAN, text = benchPlan(), files = {}) {
  const dir = tempDir('tugcode-bench-run-');
  const root = join(dir, 'repo');
  mkdirSync(join(root, '.tugtool'), { recursive: true });
  execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: root });
  execFileSync(process.execPath, [CLI, 'init', '--json'], { cwd: root, env: ENV, stdio: 'ignore' });
  writeFileSync(join(root, plan), text);
  for (const [f, body] of Object.entries(files)) writeFileSync(join(root, f), body);
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

/** `tugcode <args> --json` in `root`: its events, the summary (the last one), and whether it ended ok. */
function runJson(root, args, env) {
  const r = spawnSync(process.execPath, [CLI, ...args, '--json'], {
    cwd: root,
    env,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const events = r.stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  const summary = events.at(-1);
  return { r, events, summary, ok: r.status === 0 && summary?.type === 'summary' && summary.status === 'ok' };
}

export function runOnce(workers, o = { review: false }) {
  const { dir, root } = freshRepo();
  const argv = implementer(dir);
  const extra = o.review ? ['--reviewer', reviewer(dir)] : [];
  const times = join(dir, 'times.jsonl');
  writeFileSync(times, '');
  const t0 = process.hrtime.bigint();
  const { r, events, summary, ok } = runJson(
    root,
    ['run', PLAN, '--workers', String(workers), '--implementer', argv, ...extra],
    { ...ENV, BENCH_TIMES: times },
  );
  const processMs = Number(process.hrtime.bigint() - t0) / 1e6;
  if (!ok || summary.steps_completed.length !== STEPS)
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

// One conflict resolved in the same attempt (docs/run.md §1.9), set up as tests/run/resolve-helpers.ts does:
// step-2 and step-3 rewrite the middle line of shared.txt, step-3's first attempt waits until step-2's
// commit is on the integration branch (so its rebase conflicts), and an instant resolver keeps both lines.
const CONFLICT_PLAN = '.tugtool/tugplan-conflict.md';
const CONFLICT_RUNS = Number(process.env.BENCH_RESOLVE_RUNS ?? 5);
const SHARED = 'top\nmiddle\nbottom\n';
/** The trace spans (TUGCODE_RUN_TRACE) of a resolution, in the order they run. */
const RESOLVE_SPANS = ['resolve.prepare', 'resolver', 'resolve.check', 'resolve.continue', 'resolve.verify'];

/** Steps 1 (base), 2 and 3 (both after 1); step-3's checkpoint checks its line survived the merge. */
function conflictPlan() {
  const step = (n, title, dep, checkpoint) => [
    `#### Step ${n}: ${title} {#step-${n}}`,
    '',
    `**Depends on:** ${dep ? `#step-${dep}` : 'none'}`,
    '',
    `**Commit:** \`feat: ${title.toLowerCase()}\``,
    '',
    '**Tasks:**',
    `- [ ] write ${title.toLowerCase()}`,
    '',
    ...(checkpoint ? ['**Checkpoint:**', `- [ ] \`${checkpoint}\``, ''] : []),
  ];
  return [
    '## Phase 1.0: Conflict bench {#phase-conflict}',
    '',
    '### Execution Steps {#execution-steps}',
    '',
    ...step(1, 'Base'),
    ...step(2, 'Left', 1),
    ...step(3, 'Right', 1, 'grep -q step-3 shared.txt'),
  ].join('\n');
}

/** Each step writes `<step>.txt`; step-2 and step-3 rewrite shared.txt's middle line, step-3 (attempt 1) late. */
function racingImplementer(dir) {
  const script = join(dir, 'impl.sh');
  writeFileSync(
    script,
    `printf '%s\\n' "$TUG_STEP" > "$TUG_WORKTREE/$TUG_STEP.txt"
case "$TUG_STEP" in step-2|step-3)
  if [ "$TUG_STEP" = step-3 ] && [ "$TUG_ATTEMPT" = 1 ]; then
    i=0
    until git -C "$TUG_REPO_ROOT" log --format='%(trailers:key=Tug-Step,valueonly)' tugplan/conflict 2>/dev/null | grep -q step-2 || [ $i -ge 1200 ]; do
      sleep 0.05; i=$((i + 1))
    done
  fi
  sed -i "2s/.*/middle from $TUG_STEP/" "$TUG_WORKTREE/shared.txt" ;;
esac
`,
  );
  return `sh ${JSON.stringify(script)}`;
}

/** The instant resolver: keeps both sides' middle lines; appends its own lifetime to $BENCH_TIMES. */
function mergingResolver(dir) {
  const script = join(dir, 'resolve.sh');
  writeFileSync(
    script,
    `start=$(date +%s%3N)
cat >/dev/null
f="$TUG_WORKTREE/shared.txt"
ours=$(sed -n '/^<<<<<<< /{n;p;q}' "$f")
theirs=$(sed -n '/^=======$/{n;p;q}' "$f")
printf 'top\\n%s\\n%s\\nbottom\\n' "$ours" "$theirs" > "$f"
echo 'merged shared.txt'
end=$(date +%s%3N)
printf '{"start":%s,"end":%s}\\n' "$start" "$end" >> "$BENCH_TIMES"
`,
  );
  return `sh ${JSON.stringify(script)}`;
}

/**
 * One run of the conflict plan with `workers` workers and the instant resolver; the resolution's times
 * (ms): `driver` = conflict → conflict_resolved minus the resolver's own lifetime; `through` = conflict →
 * the next integrate phase (rebase continue and checkpoints included) minus the same; and its parts.
 */
export function resolveOnce(workers = 2) {
  const { dir, root } = freshRepo(CONFLICT_PLAN, conflictPlan(), { 'shared.txt': SHARED });
  const times = join(dir, 'times.jsonl');
  const trace = join(dir, 'trace.jsonl');
  writeFileSync(times, '');
  const argv = ['run', CONFLICT_PLAN, '--workers', String(workers), '--implementer', racingImplementer(dir)];
  const { r, events, summary, ok } = runJson(root, [...argv, '--resolver', mergingResolver(dir)], {
    ...ENV,
    BENCH_TIMES: times,
    TUGCODE_RUN_TRACE: trace,
  });
  if (!ok || summary.steps_completed.length !== 3 || summary.conflicts_resolved?.length !== 1)
    throw new Error(`conflict run failed (${r.status}): ${r.stderr}\n${r.stdout.slice(-2000)}`);
  const t = (e) => Date.parse(e.at);
  const i = events.findIndex((e) => e.type === 'conflict');
  const conflict = events[i];
  const mine = (type, phase) =>
    events.slice(i).find((e) => e.worker === conflict.worker && e.type === type && (!phase || e.phase === phase));
  const resolved = t(mine('conflict_resolved'));
  const checkpoints = t(mine('phase', 'checkpoints'));
  const integrate = t(mine('phase', 'integrate'));
  const [self] = readFileSync(times, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  const resolver = self.end - self.start;
  const spans = readFileSync(trace, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l))
    .filter((s) => s.step === conflict.step_anchor);
  const span = Object.fromEntries(RESOLVE_SPANS.map((n) => [n, spans.find((s) => s.name === n)?.ms ?? NaN]));
  return {
    driver: resolved - t(conflict) - resolver,
    through: integrate - t(conflict) - resolver,
    parts: {
      'conflict→conflict_resolved': resolved - t(conflict),
      'resolver (own lifetime)': resolver,
      ...span,
      'resolver spawn+exit': span.resolver - resolver,
      'conflict_resolved→checkpoints phase (continue, verify)': checkpoints - resolved,
      'checkpoints re-run (→integrate phase)': integrate - checkpoints,
      'artifact, event (rest)':
        resolved - t(conflict) - span['resolve.prepare'] - span.resolver - span['resolve.check'],
    },
  };
}

const r0 = (x) => Math.round(x);
const r2 = (x) => Number(x.toFixed(2));

export async function run() {
  checkParallel();
  const runs = Object.fromEntries(WORKERS.map((w) => [w, []]));
  const reviewed = [];
  const resolutions = [];
  for (let i = 0; i < Math.max(RUNS, CONFLICT_RUNS); i++) {
    if (i < RUNS) {
      for (const w of WORKERS) runs[w].push(runOnce(w));
      reviewed.push(runOnce(1, { review: true }));
    }
    if (i < CONFLICT_RUNS) resolutions.push(resolveOnce(2));
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
  rows.push({
    metric: 'one conflict resolution, instant resolver (info)',
    value: r0(median(resolutions.map((x) => x.driver))),
    unit: 'ms',
  });
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
    `conflict resolution: ${CONFLICT_RUNS} runs, 2 workers, a 3-step plan whose step-3 rebase conflicts once; the row = conflict → conflict_resolved event minus the resolver's own lifetime (its sh spawn and exit stay in); with the rebase continue and the checkpoints re-run (conflict → next integrate phase): ${r0(median(resolutions.map((x) => x.through)))} ms`,
    `conflict resolution parts, medians (ms): ${Object.keys(resolutions[0].parts)
      .map((k) => `${k} ${r0(median(resolutions.map((x) => x.parts[k])))}`)
      .join(', ')}`,
    `first step of each worker (creates its worktree), 1 worker: overhead ${r0(median(runs[1].map((x) => x.perStep[0].overhead)))} ms (not in the median)`,
  ];
  return { name: 'run', rows, notes };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const r = await run();
  console.log(JSON.stringify(r, null, 2));
  if (r.rows.some((row) => row.ok === false)) process.exitCode = 1;
}
