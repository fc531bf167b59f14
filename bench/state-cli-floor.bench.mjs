// cli-floor (docs/quality.md §2): median wall time of the hot `tugcode state` commands as processes, against
// the floor: a node process that loads better-sqlite3, opens the same DB and runs one IMMEDIATE transaction.
// Floor and command runs are interleaved, so machine load affects both alike. Target: ratio ≤ 1.5.
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, ROOT, cli, median, planText, stateCtx, tempRepo, lib } from './state-bench-util.mjs';
import { timeProcess } from './lib.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 31);
const PLAN = '.tugtool/tugplan-bench.md';

const FLOOR = `
import Database from ${JSON.stringify(join(ROOT, 'node_modules', 'better-sqlite3', 'lib', 'index.js'))};
const db = new Database(process.argv[2], { timeout: 5000 });
db.pragma('journal_mode = WAL'); db.pragma('synchronous = FULL'); db.pragma('foreign_keys = ON');
db.transaction(() => {
  const row = db.prepare('SELECT * FROM steps WHERE plan_path = ? AND anchor = ?').get(process.argv[3], 'step-1');
  db.prepare('UPDATE steps SET heartbeat_at = ? WHERE plan_path = ? AND anchor = ?').run(new Date().toISOString(), row.plan_path, row.anchor);
  db.prepare("INSERT INTO events (at, plan_path, step_anchor, command, actor, details_json) VALUES (?, ?, ?, 'floor', 'bench', '{}')").run(new Date().toISOString(), row.plan_path, row.anchor);
}).immediate();
db.close();
`;

/** One node run of `argv` in `cwd`, wall ms (lib.mjs's timer). */
const timed = (argv, cwd) => timeProcess([process.execPath, ...argv], { cwd });

export async function run() {
  const root = tempRepo({ [PLAN]: planText(RUNS + 10, 0, 3) });
  const floorFile = join(root, '..', 'floor.mjs');
  writeFileSync(floorFile, FLOOR);
  const db = join(root, '.tugtool', 'state.db');
  cli(['state', 'init', 'bench'], root);
  cli(['state', 'claim', 'bench', '--worktree', root], root);
  const { claim } = await lib('state/claim.js');
  const { update } = await lib('state/update.js');

  const commands = {
    claim: () => ['state', 'claim', 'bench', '--worktree', root, '--json'],
    heartbeat: () => ['state', 'heartbeat', 'bench', 'step-1', '--worktree', root, '--json'],
    update: () => ['state', 'update', 'bench', 'step-1', '--worktree', root, '--task', '0', 'in_progress', '--json'],
    show: () => ['state', 'show', 'bench', '--json'],
    ready: () => ['state', 'ready', 'bench', '--json'],
    complete: null,
  };
  const rows = [];
  const notes = [];
  const floorAll = [];
  for (const [name, argsOf] of Object.entries(commands)) {
    const f = [];
    const c = [];
    for (let i = 0; i < RUNS; i++) {
      let args;
      if (name === 'complete') {
        // Untimed preparation: a freshly claimed step whose items are all done.
        const ctx = await stateCtx(root);
        const r = await claim(ctx, { plan: 'bench', worktree: root });
        await update(ctx, { plan: 'bench', step: r.step_anchor, worktree: root, complete_remaining: true });
        await ctx.store.close();
        args = ['state', 'complete', 'bench', r.step_anchor, '--worktree', root, '--json'];
      } else args = argsOf();
      f.push(timed([floorFile, db, PLAN], root));
      c.push(timed([CLI, ...args], root));
    }
    floorAll.push(...f);
    // Each command run is paired with the floor run just before it; the median of the pair ratios cancels
    // most of the drift in machine load over the run.
    const ratio = median(c.map((x, i) => x / f[i]));
    rows.push({
      metric: `${name} median (floor ${median(f).toFixed(0)} ms)`,
      value: Number(median(c).toFixed(1)),
      unit: 'ms',
    });
    rows.push({
      metric: `${name} / floor`,
      value: Number(ratio.toFixed(2)),
      unit: 'x',
      target: '<= 1.5',
      ok: ratio <= 1.5,
    });
  }
  // Information only: with a .tugtool/config.toml (tugcode init writes one), the config loader also loads
  // smol-toml and zod on every command.
  {
    writeFileSync(join(root, '.tugtool', 'config.toml'), '[state]\nlease_seconds = 7200\n');
    const held = JSON.parse(cli(['state', 'claim', 'bench', '--worktree', root, '--json'], root)).step_anchor;
    const f = [];
    const c = [];
    for (let i = 0; i < RUNS; i++) {
      f.push(timed([floorFile, db, PLAN], root));
      c.push(timed([CLI, 'state', 'heartbeat', 'bench', held, '--worktree', root, '--json'], root));
    }
    rows.push({
      metric: 'heartbeat / floor with a config.toml (info)',
      value: Number(median(c.map((x, i) => x / f[i])).toFixed(2)),
      unit: 'x',
    });
  }
  const empty = [];
  for (let i = 0; i < 11; i++) empty.push(timed(['-e', '0'], root));
  const mtime = (p) => {
    try {
      return statSync(join(ROOT, p)).mtimeMs;
    } catch {
      return -1;
    }
  };
  notes.push(
    `CLI build used by bin/tugcode.cjs: ${mtime('dist/bundle/tugcode.cjs') >= mtime('dist/cli/main.js') ? 'esbuild bundle (dist/bundle)' : 'plain tsc output (dist/cli; the bundle is stale)'}`,
  );
  notes.push(
    `runs per command: ${RUNS}; empty node ${median(empty).toFixed(0)} ms; floor overall ${median(floorAll).toFixed(0)} ms`,
  );
  notes.push('plan bytes unchanged since state init (the parser is not loaded); no .tugtool/config.toml');
  void CLI;
  return { name: 'cli-floor', rows, notes };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const r = await run();
  for (const row of r.rows)
    console.log(row.metric.padEnd(40), row.value, row.unit, row.ok === undefined ? '' : row.ok ? 'ok' : 'MISS');
  for (const n of r.notes) console.log('note:', n);
}
