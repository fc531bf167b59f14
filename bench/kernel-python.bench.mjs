// Python kernel benchmark (docs/kernel.md §8, the Python twin): on a generated 300-file package, cold
// `tug run --verify none rename-symbol --symbol pkg/util.py::parse_config` next to a fresh node process
// driving pyright's language server directly for the same rename (bench/kernel/py-direct.mjs), both
// measured in the same run, interleaved; then warm renames of 7 other symbols in one Kernel through the
// library API (3 rounds in fresh processes, each next to the direct baseline), and the pyright server's peak
// RSS. Run alone with `node bench/run.mjs kernel-python`
// (after `npm run build`).
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { generate } from './kernel/gen-py-project.mjs';
import { measureNode, nodeWall, spread } from './lib.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const RUNS = Number(process.env.TUG_BENCH_RUNS ?? 7);

const WARM_ROUNDS = 3;

const WARM_TARGETS = [
  'pkg/util.py::Registry',
  'pkg/util.py::Config',
  'pkg/util.py::Registry.register',
  'pkg/util.py::Registry.lookup',
  'pkg/m/mod_010.py::Service010',
  'pkg/m/mod_020.py::fn_020_a',
  'pkg/m/mod_030.py::Service030.load',
];

function warm(dir) {
  const script = `
    const { openKernel } = await import(${JSON.stringify(pathToFileURL(join(root, 'dist/kernel/index.js')).href)});
    const k = await openKernel({ workspace: ${JSON.stringify(dir)} });
    await k.prepare({ op: 'rename-symbol', symbol: 'pkg/util.py::parse_config', to: 'load_config' });
    const times = [];
    const edits = [];
    for (const s of ${JSON.stringify(WARM_TARGETS)}) {
      const t0 = performance.now();
      const p = await k.prepare({ op: 'rename-symbol', symbol: s, to: 'renamed_symbol' });
      times.push(performance.now() - t0);
      edits.push(p.summary.edits_count);
    }
    await k.close();
    process.stdout.write(JSON.stringify({ times, edits }));
  `;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`warm run failed: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

export async function run() {
  const dir = generate({ files: 300, seed: 1 });
  try {
    const tug = join(root, 'bin', 'tug.js');
    const op = ['rename-symbol', '--symbol', 'pkg/util.py::parse_config', '--to', 'load_config'];
    const m = measureNode(
      [{ argv: [join(here, 'kernel', 'py-direct.mjs'), dir] }, { argv: [tug, 'run', '--verify', 'none', ...op] }],
      dir,
      RUNS,
      { stdout: 'pipe' },
    );
    const [base, none] = m.stats;
    const direct = JSON.parse(m.last[0]);
    const env = JSON.parse(m.last[1]);
    if (env.summary.edits_count !== direct.edits)
      throw new Error(`edit counts differ: tug ${env.summary.edits_count}, pyright ${direct.edits}`);
    // One sample per target is noisy (pyright's own time for one target varies by ±40%): the warm protocol
    // runs WARM_ROUNDS times, each in a fresh process, interleaved with the direct baseline, and reports the
    // median of every 2nd+ rename sample of all rounds.
    const rounds = [];
    const directRounds = [];
    for (let i = 0; i < WARM_ROUNDS; i++) {
      rounds.push(warm(dir));
      directRounds.push(
        JSON.parse(nodeWall([join(here, 'kernel', 'py-direct.mjs'), dir, '--warm'], dir, { stdout: 'pipe' }).stdout)
          .warm_ms,
      );
    }
    const w = { times: rounds.flatMap((r) => r.times), edits: rounds[0].edits };
    const directWarm = directRounds.flat();
    const directWarmMed = spread(directWarm).median;
    const warmMed = spread(w.times).median;
    const ratio = none.median / base.median;
    const rssMb = direct.rss_kb ? Math.round(direct.rss_kb / 1024) : null;
    return {
      name: 'kernel-py',
      rows: [
        { metric: 'baseline py-direct median (300 files)', value: Math.round(base.median), unit: 'ms' },
        { metric: 'cold run --verify none median', value: Math.round(none.median), unit: 'ms' },
        {
          metric: 'cold run --verify none / baseline',
          value: Number(ratio.toFixed(2)),
          unit: 'x',
          target: '<= 1.3',
          ok: ratio <= 1.3,
        },
        {
          metric: 'warm rename (library, 2nd+ symbol) median',
          value: Math.round(warmMed),
          unit: 'ms',
          target: '<= 150',
          ok: warmMed <= 150,
        },
        { metric: 'warm pyright-direct (same targets) median', value: Math.round(directWarmMed), unit: 'ms' },
        ...(rssMb === null
          ? []
          : [{ metric: 'peak RSS, pyright langserver', value: rssMb, unit: 'MB', target: '<= 400', ok: rssMb <= 400 }]),
      ],
      notes: [
        `${env.summary.edits_count} edits in ${env.summary.files_changed} files; p90: baseline ${Math.round(base.p90)} ms, tug ${Math.round(none.p90)} ms; ${RUNS} runs + 1 warm-up, interleaved`,
        `baseline samples (ms): ${m.samples[0].map((t) => Math.round(t)).join(', ')}`,
        `tug samples (ms): ${m.samples[1].map((t) => Math.round(t)).join(', ')}`,
        `pyright-direct warm samples (ms), ${WARM_ROUNDS} rounds: ${directRounds.map((r) => r.map((t) => Math.round(t)).join(', ')).join(' | ')} (prepareRename + rename, same server)`,
        `warm samples (ms), ${WARM_ROUNDS} rounds: ${rounds.map((r) => r.times.map((t) => Math.round(t)).join(', ')).join(' | ')} for ${WARM_TARGETS.join(', ')} (edits ${w.edits.join(', ')})`,
      ],
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
