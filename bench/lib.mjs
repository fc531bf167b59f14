// Shared helpers for bench scripts: median wall time of processes measured side by side.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const CLI = join(ROOT, 'bin', 'tugcode.cjs');

/** The median (the mean of the two middle values for an even count). */
export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Time one process run in ms (wall). */
export function timeProcess(argv, opts = {}) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(argv[0], argv.slice(1), { encoding: 'utf8', ...opts });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0 && !opts.allowFail) throw new Error(`${argv.join(' ')} exited ${r.status}: ${r.stderr}`);
  return ms;
}

/**
 * Measure several commands interleaved (round-robin), so machine noise hits them alike.
 * `cmds` is { name: () => argv | { argv, opts, before?() } }. Returns { name: medianMs }.
 */
export function interleaved(cmds, runs = 21) {
  const times = Object.fromEntries(Object.keys(cmds).map((k) => [k, []]));
  for (let i = 0; i < runs; i++) {
    for (const [name, make] of Object.entries(cmds)) {
      const spec = make();
      spec.before?.();
      times[name].push(timeProcess(spec.argv, spec.opts));
    }
  }
  return Object.fromEntries(Object.entries(times).map(([k, v]) => [k, median(v.slice(1))]));
}

/** A seeded xorshift PRNG in [0, 1): generated bench projects are the same on every machine. */
export function prng(seed) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 4294967296;
  };
}

/** Run a project generator from the command line (`--files N --seed S [--out DIR]`) when `meta` is the entry. */
export function generatorMain(meta, generate) {
  if (meta.url !== pathToFileURL(process.argv[1] ?? '').href) return;
  const arg = (k, d) => {
    const i = process.argv.indexOf(k);
    return i >= 0 ? process.argv[i + 1] : d;
  };
  console.log(generate({ files: Number(arg('--files', 300)), seed: Number(arg('--seed', 1)), out: arg('--out') }));
}

/**
 * Wall time in ms of `node ...argv` in `cwd`. Stdout goes to /dev/null unless `stdout: 'pipe'` asks for it
 * (a megabyte of JSON through a pipe is part of what gets timed).
 */
export function nodeWall(argv, cwd, { stdout = 'ignore' } = {}) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, argv, {
    cwd,
    stdio: ['ignore', stdout, 'pipe'],
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`${argv.join(' ')} exited ${r.status}: ${r.stderr}`);
  return { ms, stdout: r.stdout ?? null };
}

/** Median (the upper middle for an even count) and p90 of samples. */
export function spread(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return { median: s[Math.floor(s.length / 2)], p90: s[Math.min(s.length - 1, Math.ceil(s.length * 0.9) - 1)] };
}

/**
 * One warm-up run of each command, then `runs` rounds interleaved so machine noise hits all of them alike.
 * Returns per command its spread, its samples and the stdout of its last run (with `stdout: 'pipe'`).
 */
export function measureNode(cmds, cwd, runs, o = {}) {
  const last = cmds.map((c) => nodeWall(c.argv, cwd, o).stdout);
  const samples = cmds.map(() => []);
  for (let i = 0; i < runs; i++) {
    cmds.forEach((c, j) => {
      const r = nodeWall(c.argv, cwd, o);
      samples[j].push(r.ms);
      last[j] = r.stdout;
    });
  }
  return { stats: samples.map(spread), samples, last };
}
