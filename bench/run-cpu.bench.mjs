// run-cpu: the driver's OWN CPU for one `tugcode run` of a 3-step sequential plan with an instant shell
// implementer (the test suite runs the real driver hundreds of times, each run like this one). Each run is in
// a fresh repository. A `--require` probe (through NODE_OPTIONS, so node children load it too) writes every
// node process's pid, parent pid and process.cpuUsage() at exit: the driver is the process this bench spawned,
// and its user+sys excludes its children. GIT_TRACE2_EVENT counts the git processes the driver starts (the
// top-level ones: a sid without '/'; git's own sub-processes are listed apart). Info rows, no targets.
//   node bench/run.mjs run-cpu            (BENCH_RUN_CPU_RUNS=N, default 7)
//   node bench/run-cpu.bench.mjs [--argv] (the same, printed; --argv lists the last run's git calls)
// A profile of one run: BENCH_RUN_CPU_PROF=<dir> writes the driver's --cpu-prof there.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { benchPlan } from './run.bench.mjs';
import { CLI, median, RUN_ENV, tempDir } from './state-bench-util.mjs';

const RUNS = Number(process.env.BENCH_RUN_CPU_RUNS ?? 7);
const STEPS = 3;
const PLAN = '.tugtool/tugplan-cpu.md';
const ENV = { ...RUN_ENV };
// The test suite runs without it (it makes every node start read a certificate file).
delete ENV.NODE_EXTRA_CA_CERTS;

const plan = () => benchPlan(STEPS, { chain: true });

const PROBE = `const fs = require('node:fs');
process.on('exit', () => {
  const u = process.cpuUsage();
  fs.appendFileSync(process.env.BENCH_PROBE_OUT, JSON.stringify({ pid: process.pid, ppid: process.ppid,
    user: u.user, sys: u.system, rss: process.memoryUsage.rss(), argv: process.argv.slice(1, 3) }) + '\\n');
});
`;

function freshRepo(dir) {
  const root = join(dir, 'repo');
  mkdirSync(join(root, '.tugtool'), { recursive: true });
  execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: root });
  execFileSync(process.execPath, [CLI, 'init', '--json'], { cwd: root, env: ENV, stdio: 'ignore' });
  writeFileSync(join(root, PLAN), plan());
  execFileSync('git', ['add', '-A'], { cwd: root });
  execFileSync('git', ['commit', '-q', '-m', 'bench plan'], { cwd: root, env: ENV });
  return root;
}

/** One run in a fresh repo: the driver's own CPU (ms), its max RSS (MB), its git and node children. */
export function runOnce(prof, cli = CLI) {
  const dir = tempDir('tugcode-bench-run-cpu-');
  const root = freshRepo(dir);
  const probe = join(dir, 'probe.cjs');
  writeFileSync(probe, PROBE);
  const impl = join(dir, 'impl.sh');
  writeFileSync(impl, `printf '%s\\n' "$TUG_STEP" > "$TUG_WORKTREE/$TUG_STEP.txt"\n`);
  const probeOut = join(dir, 'probe.jsonl');
  const trace = join(dir, 'trace2.json');
  const env = {
    ...ENV,
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${JSON.stringify(probe)}`.trim(),
    BENCH_PROBE_OUT: probeOut,
    GIT_TRACE2_EVENT: trace,
  };
  const argv = [cli, 'run', PLAN, '--implementer', `sh ${JSON.stringify(impl)}`, '--json'];
  // BENCH_RUN_CPU_WORKERS: `--workers N` (default: the config's, 2, though this plan is sequential).
  if (process.env.BENCH_RUN_CPU_WORKERS) argv.push('--workers', process.env.BENCH_RUN_CPU_WORKERS);
  if (prof) argv.unshift('--cpu-prof', '--cpu-prof-dir', prof);
  const r = spawnSync(process.execPath, argv, { cwd: root, env, encoding: 'utf8', maxBuffer: 64 << 20 });
  const summary = r.stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .at(-1);
  if (r.status !== 0 || summary?.status !== 'ok')
    throw new Error(`run failed (${r.status}): ${r.stderr}\n${r.stdout.slice(-2000)}`);
  const procs = readFileSync(probeOut, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  const driver = procs.find((p) => p.pid === r.pid);
  if (!driver) throw new Error('the probe saw no driver');
  const starts = readFileSync(trace, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .filter((e) => e.event === 'start');
  const top = starts.filter((e) => !e.sid.includes('/'));
  const out = {
    cpu: (driver.user + driver.sys) / 1000,
    user: driver.user / 1000,
    sys: driver.sys / 1000,
    rss: driver.rss / 2 ** 20,
    git: top.length,
    gitNested: starts.length - top.length,
    node: procs.length - 1,
    gitArgv: top.map((e) => e.argv.slice(1).join(' ')),
    dir,
  };
  rmSync(dir, { recursive: true, force: true });
  return out;
}

/** `node -e 0` with the same probe: the floor of any node process here. */
function nodeFloor() {
  const dir = tempDir('tugcode-bench-run-cpu-');
  const probe = join(dir, 'probe.cjs');
  writeFileSync(probe, PROBE);
  const probeOut = join(dir, 'probe.jsonl');
  spawnSync(process.execPath, ['-e', '0'], {
    env: { ...ENV, NODE_OPTIONS: `--require ${JSON.stringify(probe)}`, BENCH_PROBE_OUT: probeOut },
  });
  const p = JSON.parse(readFileSync(probeOut, 'utf8').trim());
  rmSync(dir, { recursive: true, force: true });
  return (p.user + p.sys) / 1000;
}

export async function run() {
  runOnce(); // warms the code cache of `run`
  const runs = [];
  const floor = [];
  for (let i = 0; i < RUNS; i++) {
    runs.push(runOnce());
    floor.push(nodeFloor());
  }
  const m = (k) => Math.round(median(runs.map((x) => x[k])) * 10) / 10;
  const notes = [];
  if (process.env.BENCH_RUN_CPU_PROF) {
    runOnce(process.env.BENCH_RUN_CPU_PROF);
    notes.push(`profile in ${process.env.BENCH_RUN_CPU_PROF}`);
  }
  return {
    name: 'run-cpu',
    rows: [
      { metric: `driver own CPU, ${STEPS}-step run (median of ${RUNS})`, value: m('cpu'), unit: 'ms' },
      { metric: 'driver own CPU: user', value: m('user'), unit: 'ms' },
      { metric: 'driver own CPU: sys', value: m('sys'), unit: 'ms' },
      { metric: 'node -e 0 CPU (same probe)', value: Math.round(median(floor) * 10) / 10, unit: 'ms' },
      { metric: 'driver RSS at exit', value: m('rss'), unit: 'MB' },
      { metric: 'git processes the driver starts', value: m('git'), unit: 'count' },
      { metric: "git's own sub-processes", value: m('gitNested'), unit: 'count' },
      { metric: 'node child processes', value: m('node'), unit: 'count' },
    ],
    notes,
    runs,
  };
}

/**
 * A/B: BENCH_RUN_CPU_AB=<cliA>,<cliB> (two copies of bin/tugcode.cjs with their dist/) runs them interleaved
 * and prints each one's median driver CPU: on a shared machine, noise then hits both alike.
 */
function ab(clis) {
  const cpu = clis.map(() => []);
  clis.forEach((c) => runOnce(undefined, c));
  for (let i = 0; i < RUNS; i++) clis.forEach((c, j) => cpu[j].push(runOnce(undefined, c).cpu));
  clis.forEach((c, j) =>
    console.log(`${median(cpu[j]).toFixed(1).padStart(8)} ms  ${c}  (${cpu[j].map((x) => x.toFixed(0)).join(' ')})`),
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href && process.env.BENCH_RUN_CPU_AB) {
  ab(process.env.BENCH_RUN_CPU_AB.split(','));
} else if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const r = await run();
  for (const row of r.rows) console.log(`${row.metric.padEnd(48)} ${String(row.value).padStart(8)} ${row.unit}`);
  console.log('per run cpu:', r.runs.map((x) => x.cpu.toFixed(0)).join(' '));
  if (process.argv.includes('--argv')) {
    // Each git call of the last run, `-C <dir>` and `-c <k=v>` left out, grouped by its first two words.
    const counts = new Map();
    for (const a of r.runs.at(-1).gitArgv) {
      const w = a.split(' ');
      while (w[0] === '-C' || w[0] === '-c') w.splice(0, 2);
      const k = w.slice(0, 2).join(' ');
      counts.set(k, (counts.get(k) ?? 0) + 1);
    }
    for (const [a, n] of [...counts].sort((x, y) => y[1] - x[1])) console.log(String(n).padStart(4), a);
    const dir = r.runs.at(-1).dir;
    for (const a of r.runs.at(-1).gitArgv) console.log('    ', a.split(dir).join('<tmp>').slice(0, 160));
  }
  for (const n of r.notes) console.log('note:', n);
}
