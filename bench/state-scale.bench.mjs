// scale (docs/quality.md §2): in-process claim and complete (no drift check) at 10, 100, 1k and 10k steps per
// plan, each step depending on the step 4 before it (at most 4 ready at once); `show` time at the same
// sizes. Target: per-claim cost at 10k steps ≤ 3 × the cost at 10 steps.
import { performance } from 'node:perf_hooks';
import { median, planText, stateCtx, tempRepo, lib } from './state-bench-util.mjs';

const SIZES = (process.env.BENCH_SCALE_SIZES ?? '10,100,1000,10000').split(',').map(Number);
const CYCLES = Number(process.env.BENCH_SCALE_CYCLES ?? 200);

export async function run() {
  const { init } = await lib('state/init.js');
  const { claim } = await lib('state/claim.js');
  const { complete } = await lib('state/complete.js');
  const { show } = await lib('state/show.js');
  const rows = [];
  const perClaim = {};
  // Warm-up (JIT, statement compilation) on a throwaway plan, so the small sizes are not measured cold.
  {
    const root = tempRepo({ '.tugtool/tugplan-scale.md': planText(60, 4, 1) });
    const ctx = await stateCtx(root);
    await init(ctx, { plan: 'scale' });
    for (let i = 0; i < 60; i++) {
      const c = await claim(ctx, { plan: 'scale', worktree: root, skip_drift: true });
      await complete(ctx, { plan: 'scale', step: c.step_anchor, worktree: root, force: 'warm-up', skip_drift: true });
    }
    await ctx.store.close();
  }
  for (const n of SIZES) {
    const root = tempRepo({ '.tugtool/tugplan-scale.md': planText(n, 4, 1) });
    const ctx = await stateCtx(root);
    const t0 = performance.now();
    await init(ctx, { plan: 'scale' });
    const initMs = performance.now() - t0;
    const claims = [];
    const completes = [];
    // Measure in the middle of the plan as well as at its start: complete the first half untimed for big plans.
    const cycles = Math.min(CYCLES, n);
    for (let i = 0; i < cycles; i++) {
      let t = performance.now();
      const c = await claim(ctx, { plan: 'scale', worktree: root, skip_drift: true });
      claims.push(performance.now() - t);
      if (!c.claimed) throw new Error(`nothing to claim at cycle ${i} of ${n}`);
      t = performance.now();
      await complete(ctx, { plan: 'scale', step: c.step_anchor, worktree: root, force: 'bench', skip_drift: true });
      completes.push(performance.now() - t);
    }
    const shows = [];
    for (let i = 0; i < 5; i++) {
      const t = performance.now();
      await show(ctx, { plan: 'scale' });
      shows.push(performance.now() - t);
    }
    await ctx.store.close();
    perClaim[n] = median(claims);
    rows.push({
      metric: `${n} steps: claim (median of ${cycles})`,
      value: Number((median(claims) * 1000).toFixed(0)),
      unit: 'µs',
    });
    rows.push({
      metric: `${n} steps: complete (median)`,
      value: Number((median(completes) * 1000).toFixed(0)),
      unit: 'µs',
    });
    rows.push({ metric: `${n} steps: show (median of 5)`, value: Number(median(shows).toFixed(1)), unit: 'ms' });
    rows.push({ metric: `${n} steps: state init (parse + insert)`, value: Number(initMs.toFixed(0)), unit: 'ms' });
  }
  const lo = SIZES[0];
  const hi = SIZES[SIZES.length - 1];
  const ratio = perClaim[hi] / perClaim[lo];
  rows.push({
    metric: `claim cost ${hi}/${lo}`,
    value: Number(ratio.toFixed(2)),
    unit: 'x',
    target: '<= 3',
    ok: ratio <= 3,
  });
  return {
    name: 'scale',
    rows,
    notes: [
      'claim = the whole library call (plan resolution, IMMEDIATE transaction, event); complete uses --force (no item updates)',
    ],
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const r = await run();
  for (const row of r.rows)
    console.log(row.metric.padEnd(44), row.value, row.unit, row.ok === undefined ? '' : row.ok ? 'ok' : 'MISS');
}
