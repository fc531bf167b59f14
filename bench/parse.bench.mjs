// Parse speed of the seed plan (docs/plan-format.md; target ≤ 100 ms): median of 10 in-process parses after
// one warm-up, module load excluded. Also reports the plan_hash-only check that drift detection does
// first (docs/state.md §3: hash the bytes, parse only when they differ).
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median } from './lib.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const SEED = join(root, 'tests', 'fixtures', 'corpus', '000_cf08918644712317.txt');

function time(fn, runs) {
  const t0 = performance.now();
  fn(); // warm-up
  const out = [];
  out.first = performance.now() - t0;
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    fn();
    out.push(performance.now() - t);
  }
  return out;
}

export async function run() {
  const { parsePlan } = await import(join(root, 'dist', 'plan', 'parse.js'));
  const { validatePlan } = await import(join(root, 'dist', 'plan', 'validate.js'));
  const { sha256Hex } = await import(join(root, 'dist', 'util', 'hash.js'));
  const bytes = readFileSync(SEED);
  let plan;
  const parseTimes = time(() => (plan = parsePlan(bytes)), 10);
  const parse = median(parseTimes);
  const validate = median(time(() => validatePlan(plan, 'strict'), 10));
  const hash = median(time(() => sha256Hex(bytes), 10));
  const round = (x) => Math.round(x * 10) / 10;
  return {
    name: 'plan-parse',
    rows: [
      { metric: 'parse seed plan (median of 10)', value: round(parse), unit: 'ms', target: '<= 100', ok: parse <= 100 },
      { metric: 'first parse after import (cold JIT, warm-up)', value: round(parseTimes.first), unit: 'ms' },
      { metric: 'validate seed plan, strict (median of 10)', value: round(validate), unit: 'ms' },
      { metric: 'sha256 of seed plan bytes (median of 10)', value: round(hash), unit: 'ms' },
    ],
    notes: [
      `seed plan: ${bytes.length} bytes, ${plan.steps.length} steps, ${plan.steps.reduce((n, s) => n + s.items.length, 0)} items`,
    ],
  };
}
