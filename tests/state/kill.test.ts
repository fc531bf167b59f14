/**
 * SIGKILL in the middle of state transactions (docs/quality.md §1): a process that loops over claim /
 * update / complete / release in-process, and CLI `state init --force` runs on a large plan, are killed
 * at random delays from a logged seed. After every kill the database passes integrity_check, no step is
 * half-updated, and it keeps working. No timing assertions: the delays only decide where the kill lands.
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CLI, ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/repo.js';
import { DEMO_PATH, chainPlan, dbPathOf, fakeWorktrees, planRepo, sql, withCtx } from './helpers.js';
import { checkInvariants } from './invariants.js';
import { st } from './cli-helpers.js';
import { claim } from '../../src/state/claim.js';

/** Kills per run: each is one more trial (~0.4 s); TUGCODE_KILLS=50 or more for a longer stress run. */
const KILLS = Number(process.env.TUGCODE_KILLS || 24);

/** mulberry32: a small seeded PRNG, so a failing run can be replayed from the logged seed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function workerScript(root: string, worktree: string): string {
  const lib = (p: string) => JSON.stringify(pathToFileURL(join(ROOT, 'dist', 'state', p)).href);
  return `
import { openStateContext } from ${lib('sqlite-open.js')};
import { claim } from ${lib('claim.js')};
import { update } from ${lib('update.js')};
import { complete } from ${lib('complete.js')};
import { release } from ${lib('release.js')};
import { reset } from ${lib('reset.js')};
import { init } from ${lib('init.js')};
const cfg = { state: { lease_seconds: 7200, max_attempts: 1000 }, validate: { level: 'normal' } };
const ctx = openStateContext({ repoRoot: ${JSON.stringify(root)}, workTree: ${JSON.stringify(root)}, clock: { now: () => new Date().toISOString(), nowMs: () => Date.now() },
  config: cfg, warnings: { add() {}, items: [] }, command: 'kill-test', mode: 'write', env: { NODE_ENV: 'test' }, cwd: ${JSON.stringify(root)} });
const w = ${JSON.stringify(worktree)};
process.stdout.write('ready\\n');
for (let i = 0; ; i++) {
  const c = await claim(ctx, { plan: 'demo', worktree: w, skip_drift: true });
  if (!c.claimed) { await init(ctx, { plan: 'demo', force: true, release_claims: true }); continue; }
  await update(ctx, { plan: 'demo', step: c.step_anchor, worktree: w, complete_remaining: true, skip_drift: true });
  if (i % 3 === 0) await release({ ...ctx }, { plan: 'demo', step: c.step_anchor, worktree: w });
  else await complete(ctx, { plan: 'demo', step: c.step_anchor, worktree: w, skip_drift: true });
  if (i % 7 === 0) try { await reset(ctx, { plan: 'demo', step: c.step_anchor }); } catch {}
}
`;
}

function killAfter(cmd: string[], cwd: string, delayMs: number, waitFor?: string): Promise<void> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, cmd, {
      cwd,
      env: { ...process.env, NODE_ENV: 'test' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let timer: NodeJS.Timeout | undefined;
    const arm = () => (timer = setTimeout(() => p.kill('SIGKILL'), delayMs));
    if (waitFor) {
      let buf = '';
      p.stdout.on('data', (d) => {
        buf += d;
        if (!timer && buf.includes(waitFor)) arm();
      });
    } else arm();
    p.on('close', () => {
      if (timer) clearTimeout(timer);
      resolve();
    });
  });
}

describe('SIGKILL during state transactions', () => {
  it(`leaves a consistent, working database after ${KILLS} kills at random moments`, async () => {
    const seed = Number(process.env.TUGCODE_KILL_SEED ?? Date.now() % 2 ** 31);
    console.log(`kill test seed: ${seed} (replay with TUGCODE_KILL_SEED=${seed})`);
    const rand = prng(seed);
    const big = readFileSync(join(ROOT, 'tests', 'fixtures', 'corpus', '000_cf08918644712317.txt'));
    const root = planRepo({ [DEMO_PATH]: chainPlan(60, 3, 4), '.tugtool/tugplan-big.md': big.toString('utf8') });
    st(root, ['init', 'demo'], { now: new Date().toISOString() });
    st(root, ['init', 'big'], { now: new Date().toISOString() });
    const [w] = fakeWorktrees(root, 1) as [string];
    const script = join(tempDir('tugcode-kill-'), `kill-worker-${seed}.mjs`);
    writeFileSync(script, workerScript(root, w));
    const bigPath = join(root, '.tugtool', 'tugplan-big.md');
    const variants = [
      big.toString('utf8'),
      big.toString('utf8').replace(/^(#### Step 1:.*)$/m, '$1\n\n**Tasks:**\n- [ ] an extra task'),
    ];
    const events = () => sql<{ n: number }>(root, 'SELECT COUNT(*) AS n FROM events')[0]!.n;
    const before = events();
    for (let k = 0; k < KILLS; k++) {
      if (k % 2 === 0) {
        await killAfter([script], root, Math.floor(rand() * 400), 'ready');
      } else {
        writeFileSync(bigPath, variants[k % 4 === 1 ? 1 : 0]!);
        await killAfter([CLI, 'state', 'init', 'big', '--force', '--json'], root, 80 + Math.floor(rand() * 500));
      }
      checkInvariants(dbPathOf(root));
    }
    // The killed processes did real work (so the kills landed among transactions, not before any).
    expect(events()).toBeGreaterThan(before + KILLS);
    const r = await withCtx(root, { now: new Date().toISOString() }, (ctx) =>
      claim(ctx, { plan: 'big', worktree: w, skip_drift: true }),
    );
    expect(r.claimed === true || r.reason === 'no_ready_steps').toBe(true);
    expect(st(root, ['show', 'big']).json.plans[0].steps.length).toBeGreaterThan(50);
    checkInvariants(dbPathOf(root));
  });
});
