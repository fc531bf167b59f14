// contention (docs/quality.md §2): 16 concurrent claimer processes drain a 400-step plan (claim → start →
// complete, in-process library calls, drift check included). Reports double claims (target 0), Busy
// errors (target 0) and claims per second.
import { performance } from 'node:perf_hooks';
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT, cli, planText, tempDir, tempRepo, runNode } from './state-bench-util.mjs';

const PROCS = Number(process.env.BENCH_PROCS ?? 16);
const STEPS = Number(process.env.BENCH_STEPS ?? 400);

function worker(root, worktree) {
  const url = (p) => JSON.stringify(pathToFileURL(join(ROOT, 'dist', p)).href);
  return `
import { openStateContext } from ${url('state/sqlite-open.js')};
import { claim } from ${url('state/claim.js')};
import { start } from ${url('state/start.js')};
import { complete } from ${url('state/complete.js')};
import { systemClock } from ${url('clock.js')};
const ctx = openStateContext({ repoRoot: ${JSON.stringify(root)}, workTree: ${JSON.stringify(worktree)}, clock: systemClock(),
  config: { state: { lease_seconds: 7200, max_attempts: 3 } }, warnings: { add() {}, items: [] }, command: 'bench', mode: 'write', env: process.env });
const w = ${JSON.stringify(worktree)};
let busy = 0;
for (;;) {
  let c;
  try { c = await claim(ctx, { plan: 'bench', worktree: w }); } catch (e) { if (e.code === 'Busy') { busy++; continue; } throw e; }
  if (!c.claimed) {
    if (c.reason === 'all_completed') break;
    await new Promise((r) => setTimeout(r, 2));
    continue;
  }
  process.stdout.write(JSON.stringify({ step: c.step_anchor, attempt: c.attempt }) + '\\n');
  try {
    await start(ctx, { plan: 'bench', step: c.step_anchor, worktree: w });
    await complete(ctx, { plan: 'bench', step: c.step_anchor, worktree: w, force: 'bench' });
  } catch (e) { if (e.code === 'Busy') busy++; else throw e; }
}
process.stdout.write(JSON.stringify({ busy }) + '\\n');
await ctx.store.close();
`;
}

export async function run() {
  const root = tempRepo({ '.tugtool/tugplan-bench.md': planText(STEPS, PROCS, 1) });
  cli(['state', 'init', 'bench'], root);
  const scripts = [];
  for (let i = 0; i < PROCS; i++) {
    const wt = join(tempDir('tugcode-bench-wt-'), 'wt');
    mkdirSync(wt, { recursive: true });
    cpSync(join(root, '.tugtool', 'tugplan-bench.md'), join(wt, '.tugtool', 'tugplan-bench.md'));
    const file = join(wt, 'worker.mjs');
    writeFileSync(file, worker(root, wt));
    scripts.push(file);
  }
  const t0 = performance.now();
  const outs = await Promise.all(scripts.map(async (s) => (await runNode([s])).out));
  const wall = (performance.now() - t0) / 1000;
  const claims = new Map();
  let busy = 0;
  for (const out of outs) {
    for (const line of out.split('\n').filter(Boolean)) {
      const r = JSON.parse(line);
      if (r.busy !== undefined) busy += r.busy;
      else claims.set(r.step, (claims.get(r.step) ?? 0) + 1);
    }
  }
  const doubles = [...claims.values()].filter((n) => n > 1).length;
  return {
    name: 'contention',
    rows: [
      {
        metric: `steps claimed (of ${STEPS})`,
        value: claims.size,
        unit: 'steps',
        target: `= ${STEPS}`,
        ok: claims.size === STEPS,
      },
      { metric: 'double claims', value: doubles, unit: 'steps', target: '= 0', ok: doubles === 0 },
      { metric: 'Busy errors', value: busy, unit: 'errors', target: '= 0', ok: busy === 0 },
      { metric: `claims/s (${PROCS} processes)`, value: Number((STEPS / wall).toFixed(0)), unit: '/s' },
      { metric: 'wall time', value: Number(wall.toFixed(2)), unit: 's' },
    ],
    notes: [
      `${PROCS} long-lived processes calling the library (claim → start → complete --force); step i depends on step i-${PROCS}`,
    ],
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const r = await run();
  for (const row of r.rows)
    console.log(row.metric.padEnd(40), row.value, row.unit, row.ok === undefined ? '' : row.ok ? 'ok' : 'MISS');
}
