// board (issue 27, Speed; docs/board.md §5): the wall time of a 12-step `tugcode run` (the run bench's plan:
// independent steps whose implementer sleeps 0.5 s and writes a file; 2 workers) without a board, and with
// `--board` and a headless Chromium (Debian's `chromium`, through playwright-core) on its page from the
// board line on, which is before the driver's first claim. The board then reads the state in the run's own
// process while a page listens. Runs interleaved, medians of the summaries' wall_ms. Target: at most 5%
// longer with the browser connected. Without chromium the row is left out with a note (the test suite
// installs it: docs/board.md §8).
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { benchPlan } from './run.bench.mjs';
import { CLI, median, RUN_ENV as ENV, tempDir } from './state-bench-util.mjs';

const RUNS = Number(process.env.BENCH_BOARD_RUNS ?? 5);
const WORKERS = 2;
const PLAN = '.tugtool/tugplan-bench.md';
const CHROMIUM = ['/usr/lib/chromium/chromium', '/usr/bin/chromium', '/usr/bin/chromium-browser'];

function freshRepo() {
  const dir = tempDir('tugcode-bench-board-');
  const root = join(dir, 'repo');
  mkdirSync(join(root, '.tugtool'), { recursive: true });
  execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: root });
  execFileSync(process.execPath, [CLI, 'init', '--json'], { cwd: root, env: ENV, stdio: 'ignore' });
  writeFileSync(join(root, PLAN), benchPlan());
  execFileSync('git', ['add', '-A'], { cwd: root });
  execFileSync('git', ['commit', '-q', '-m', 'bench plan'], { cwd: root, env: ENV });
  const script = join(dir, 'impl.sh');
  writeFileSync(script, 'sleep 0.5\nprintf \'%s\\n\' "$TUG_STEP" > "$TUG_WORKTREE/$TUG_STEP.txt"\n');
  return { root, implementer: `sh ${JSON.stringify(script)}` };
}

/** One run; with `page`, `--board` and the page opened on the board's URL as soon as it is printed. */
function runOnce(page) {
  const { root, implementer } = freshRepo();
  const args = [CLI, 'run', PLAN, '--workers', String(WORKERS), '--implementer', implementer, '--json'];
  if (page) args.push('--board');
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: root, env: ENV });
    let out = '';
    let opened = null;
    child.stdout.on('data', (d) => {
      out += d;
      if (page && !opened) {
        const line = out.split('\n').find((l) => l.startsWith('{"type":"board"'));
        if (line) opened = page.goto(JSON.parse(line).url).catch(() => {});
      }
    });
    child.on('exit', async (code) => {
      await opened;
      const summary = out
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
        .at(-1);
      if (code !== 0 || summary?.status !== 'ok') reject(new Error(`run failed (${code}): ${out.slice(-1000)}`));
      else resolve(summary.wall_ms);
    });
  });
}

export async function run() {
  const path = CHROMIUM.find((p) => existsSync(p));
  if (!path) return { name: 'board', rows: [], notes: ['chromium is not installed: the board row needs it'] };
  const { chromium } = await import('playwright-core');
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  const browser = await chromium.launch({
    executablePath: path,
    headless: true,
    args: [...(root ? ['--no-sandbox'] : []), '--disable-dev-shm-usage', '--disable-gpu'],
  });
  const plain = [];
  const watched = [];
  try {
    await runOnce(null); // warm the code cache and the page cache alike for both
    for (let i = 0; i < RUNS; i++) {
      plain.push(await runOnce(null));
      const page = await browser.newPage();
      watched.push(await runOnce(page));
      await page.close();
    }
  } finally {
    await browser.close();
  }
  const a = median(plain);
  const b = median(watched);
  const growth = Math.round((b / a - 1) * 1000) / 10;
  return {
    name: 'board',
    rows: [
      { metric: `run 12 steps, ${WORKERS} workers: wall`, value: Math.round(a), unit: 'ms' },
      { metric: 'same, --board with a browser connected', value: Math.round(b), unit: 'ms' },
      { metric: 'wall growth with the board watched', value: growth, unit: '%', target: '<= 5', ok: growth <= 5 },
    ],
    notes: [
      `medians of ${RUNS} interleaved runs each; walls without: ${plain.join(', ')}; with: ${watched.join(', ')}`,
    ],
  };
}
