#!/usr/bin/env node
// Runs every bench/*.bench.mjs (or those named on the command line), prints one table and writes
// bench/results.json (`--json`: the table goes to stderr and a JSON report to stdout). Exits 1 when a
// target is missed. Each bench module exports `run()` resolving to
// { name, rows: [{ metric, value, unit, target?, ok? }], notes?: string[] }.
// Benchmarks print ratios measured side by side in one run; absolute times on shared machines are noise.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const json = process.argv.includes('--json');
const only = process.argv.slice(2).filter((a) => a !== '--json');
const files = readdirSync(here)
  .filter((f) => f.endsWith('.bench.mjs'))
  .filter((f) => only.length === 0 || only.some((o) => f.startsWith(o)))
  .sort();
const results = [];
for (const f of files) {
  const mod = await import(pathToFileURL(join(here, f)).href);
  process.stderr.write(`bench: ${f} …\n`);
  const r = await mod.run();
  results.push(r);
  for (const row of r.rows) {
    const target = row.target ?? '';
    const verdict = row.ok === undefined ? '' : row.ok ? 'ok' : 'MISS';
    (json ? console.error : console.log)(
      `${r.name.padEnd(12)} ${row.metric.padEnd(44)} ${String(row.value).padStart(12)} ${String(row.unit ?? '').padEnd(8)} ${String(target).padEnd(12)} ${verdict}`,
    );
  }
  for (const n of r.notes ?? []) (json ? console.error : console.log)(`${''.padEnd(12)} note: ${n}`);
}
// A partial run (`node bench/run.mjs parse`) replaces only the benchmarks it ran.
const file = join(here, 'results.json');
let previous = [];
try {
  previous = JSON.parse(readFileSync(file, 'utf8')).results ?? [];
} catch {
  /* first run */
}
const at = new Date().toISOString();
const merged = [
  ...previous.filter((p) => !results.some((r) => r.name === p.name)),
  ...results.map((r) => ({ ...r, at })),
];
merged.sort((a, b) => a.name.localeCompare(b.name));
writeFileSync(file, JSON.stringify({ at, node: process.version, results: merged }, null, 2) + '\n');
if (json) console.log(JSON.stringify({ at, node: process.version, results }, null, 2));
// A missed target is a failed benchmark run (docs/kernel.md §8), never a failed test.
const missed = results.flatMap((r) =>
  r.rows.filter((row) => row.ok === false).map((row) => `${r.name}: ${row.metric}`),
);
if (missed.length) {
  console.error(`bench: ${missed.length} target(s) missed: ${missed.join('; ')}`);
  process.exitCode = 1;
}
