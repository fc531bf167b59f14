// Kernel benchmark (docs/kernel.md §8): cold `tug run rename-symbol` vs a fresh node process calling the
// LanguageService directly, warm rename through the library API, and peak RSS. Run alone with
// `node bench/run.mjs kernel` (after `npm run build`).
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { generate } from './kernel/gen-ts-project.mjs';
import { measureNode, spread } from './lib.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const RUNS = Number(process.env.TUG_BENCH_RUNS ?? 7);
// TUG_BENCH_BEFORE=<dir of an older checkout, built>: measure its `tug` side by side in the same run.
const BEFORE = process.env.TUG_BENCH_BEFORE ?? null;

async function warm(dir, from = root) {
  const script = `
    const { openKernel } = await import(${JSON.stringify(pathToFileURL(join(from, 'dist/kernel/index.js')).href)});
    const k = await openKernel({ workspace: ${JSON.stringify(dir)} });
    await k.prepare({ op: 'rename-symbol', symbol: 'src/util.ts::parseConfig', to: 'loadConfig' });
    const targets = ['src/util.ts::Registry', 'src/util.ts::Config', 'src/util.ts::Registry.register', 'src/util.ts::Registry.lookup', 'src/m/mod_010.ts::Service010', 'src/m/mod_020.ts::fn_020_a', 'src/m/mod_030.ts::Service030.load'];
    const times = [];
    for (const s of targets) {
      const t0 = performance.now();
      await k.prepare({ op: 'rename-symbol', symbol: s, to: 'renamedSymbol' });
      times.push(performance.now() - t0);
    }
    await k.close();
    process.stdout.write(JSON.stringify({ times, rss: process.resourceUsage().maxRSS }));
  `;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`warm run failed: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

export async function run() {
  const dir = generate({ files: 300, seed: 1 });
  try {
    const tug = join(root, 'bin', 'tug.js');
    const op = ['rename-symbol', '--symbol', 'src/util.ts::parseConfig', '--to', 'loadConfig'];
    const cmds = [
      { argv: [join(here, 'kernel', 'ts-direct.mjs'), dir] },
      { argv: [tug, 'run', '--verify', 'none', ...op] },
      { argv: [tug, 'run', '--verify', 'syntax', ...op] },
    ];
    if (BEFORE) {
      const old = join(BEFORE, 'bin', 'tug.js');
      cmds.push({ argv: [old, 'run', '--verify', 'none', ...op] }, { argv: [old, 'run', '--verify', 'syntax', ...op] });
    }
    const [base, none, syntax, oldNone, oldSyntax] = measureNode(cmds, dir, RUNS).stats;
    const w = await warm(dir);
    const wOld = BEFORE ? await warm(dir, BEFORE) : null;
    const warmMed = spread(w.times).median;
    const rssMb = Math.round(w.rss / 1024);
    const r1 = none.median / base.median;
    const r2 = syntax.median / base.median;
    return {
      name: 'kernel',
      rows: [
        { metric: 'baseline ts-direct median (300 files)', value: Math.round(base.median), unit: 'ms' },
        { metric: 'cold run --verify none median', value: Math.round(none.median), unit: 'ms' },
        {
          metric: 'cold run --verify none / baseline',
          value: Number(r1.toFixed(2)),
          unit: 'x',
          target: '<= 1.3',
          ok: r1 <= 1.3,
        },
        { metric: 'cold run --verify syntax median', value: Math.round(syntax.median), unit: 'ms' },
        {
          metric: 'cold run --verify syntax / baseline',
          value: Number(r2.toFixed(2)),
          unit: 'x',
          target: '<= 1.5',
          ok: r2 <= 1.5,
        },
        {
          metric: 'warm rename (library, 2nd+ symbol) median',
          value: Math.round(warmMed),
          unit: 'ms',
          target: '<= 150',
          ok: warmMed <= 150,
        },
        {
          metric: 'peak RSS, kernel with LanguageService',
          value: rssMb,
          unit: 'MB',
          target: '<= 400',
          ok: rssMb <= 400,
        },
      ],
      notes: [
        ...(BEFORE
          ? [
              `before (${BEFORE}), same run: none ${Math.round(oldNone.median)} ms = ${(oldNone.median / base.median).toFixed(2)}x, syntax ${Math.round(oldSyntax.median)} ms = ${(oldSyntax.median / base.median).toFixed(2)}x, warm median ${Math.round(spread(wOld.times).median)} ms (${wOld.times.map((t) => Math.round(t)).join(', ')})`,
            ]
          : []),
        `p90: baseline ${Math.round(base.p90)} ms, none ${Math.round(none.p90)} ms, syntax ${Math.round(syntax.p90)} ms; ${RUNS} runs + 1 warm-up, interleaved`,
        `warm samples (ms): ${w.times.map((t) => Math.round(t)).join(', ')}`,
        'the kernel renames through the src/index.ts barrel (8346 locations; the baseline stops at the barrel with 4174): one search without prefix/suffix text when that equals the re-export closure (docs/kernel.md §6.2), else one search per barrel',
        'typescript loads through a V8 code cache in os.tmpdir()/tug-v8-cache (TUG_NO_CODE_CACHE=1 disables it); ts-syntax baselines are cached per snapshot in .tug/baselines',
      ],
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
