/**
 * `tugcode run` under faults (issue 22, "A fault-injection test of your own"; docs/run.md §1–§3): a 12-step
 * plan (a diamond, a chain, a step with two substeps), an instant implementer that fails the first try of
 * some units, and per iteration one fault chosen by a seed: SIGKILL/SIGTERM/SIGINT of the driver at a
 * random point of its event stream, a killed implementer, `rm -rf` of a worker worktree, a stale
 * `index.lock`, `git gc` + `worktree prune`, an outside `state reset --force` or `state claim`, a second
 * `run` at the same instant, restarts racing for the lock after a crash, a reset between the fast-forward and
 * `complete`, a driver SIGKILLed during a review round or during a conflict's resolution. Then `run` again
 * (each an hour later by TUGCODE_NOW, so the leases a killed run left have expired) until done, at most 3
 * times, and the invariants of fault-helpers.ts `violations`. Every run is bounded in time and in claims: a
 * spinning driver fails the test, it never hangs it.
 *
 * Seeds 1..N run by default (N fault kinds), one fault kind each, the seed first in the test's name
 * (fault-helpers.ts `scenarioOf`). More: TUGCODE_FAULT_ITERATIONS=100 (seeds 1..100). Replay one seed (build first: the tests
 * run bin/tugcode.cjs), with TUGCODE_FAULT_VERBOSE=1 to print what each run did even when it passes:
 *   TUGCODE_FAULT_SEED=7 npx vitest run tests/run/fault-injection.test.ts -t 'seed 7:'
 * Iterations run TUGCODE_FAULT_PARALLEL (2) at a time. The last block reproduces issue 22 items 1–3 alone.
 */
import { existsSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, tempDir } from '../helpers/repo.js';
import { runRepo } from './helpers.js';
import {
  AT_MERGE_CHECK,
  boundedRun,
  cliJson,
  describeRun,
  FAULT_KINDS,
  faultImplementer,
  faultRepo,
  gcAndPrune,
  gitBarrier,
  heldSteps,
  pickOf,
  planOf,
  PLAN,
  plantIndexLock,
  resetAfterIntegrateHook,
  resolverConfig,
  reviewerConfig,
  rmTree,
  scenarioOf,
  SLUG,
  succeeded,
  summaryOf,
  TOP_STEPS,
  unit,
  UNITS,
  until,
  violations,
  workerTrees,
  type BoundedResult,
  type BoundedRun,
  type FaultImplementer,
  type FaultKind,
  type Scenario,
} from './fault-helpers.js';

const MAX_RERUNS = 3;
const RIDDEN_OUT = new Set<FaultKind>(['kill-implementer', 'rm-worktree', 'outside-reset', 'outside-claim']);
const RACERS = 8;

/**
 * Iterations run TUGCODE_FAULT_PARALLEL at a time (default 2): each is mostly waiting on git and child processes, so
 * two share the 2 cores well; more only slow every run down.
 */
const slots = (() => {
  let free = Number(process.env.TUGCODE_FAULT_PARALLEL || 2);
  const queue: (() => void)[] = [];
  return {
    take: () => (free > 0 ? (free--, Promise.resolve()) : new Promise<void>((r) => queue.push(r))),
    give: () => {
      const next = queue.shift();
      if (next) next();
      else free++;
    },
  };
})();

function seeds(): number[] {
  const one = process.env.TUGCODE_FAULT_SEED;
  if (one) return [Number(one)];
  const n = Number(process.env.TUGCODE_FAULT_ITERATIONS || FAULT_KINDS.length);
  return Array.from({ length: n }, (_, i) => i + 1);
}

/** Small lease and heartbeat: a lost claim shows within a second, an abandoned one lapses in seconds. */
const runArgs = (impl: FaultImplementer, workers = 3) => [
  SLUG,
  '--workers',
  String(workers),
  '--lease-duration',
  '5',
  '--heartbeat',
  '1',
  '--implementer',
  impl.argv,
];

const started = (r: { events: any[] } | BoundedRun) =>
  ('exited' in r ? r.events() : r.events).some((e: any) => e.type === 'run_started');

/**
 * Runs that start at the same instant: exactly one takes the run lock, the others get RunInProgress. They
 * run with `--merge`, whose clean-checkout check is their last git call before the lock: the start line
 * (gitBarrier) holds them there, so they reach the lock within milliseconds of each other.
 */
async function race(
  n: number,
  root: string,
  args: string[],
  env: Record<string, string>,
  o: { what: string; story: Story },
) {
  const { what, story } = o;
  const barrier = gitBarrier(AT_MERGE_CHECK);
  const runs = Array.from({ length: n }, () => boundedRun(root, [...args, '--merge'], { ...env, ...barrier.env }));
  await barrier.release(n, () => runs.filter((r) => r.exited() || started(r)).length);
  const results = await Promise.all(runs.map((r) => r.done));
  results.forEach((r, i) => story.note(`${what} #${i + 1}`, r));
  const winners = results.filter((r) => started(r));
  const losers = results.filter((r) => !started(r));
  if (winners.length !== 1) story.fail(`${winners.length} of ${n} runs started at the same instant took the run lock`);
  for (const l of losers)
    if (l.code !== 4 || !l.stdout.includes('RunInProgress'))
      story.fail(`a run that lost the lock race: exit ${l.code}, not 4 RunInProgress: ${l.stdout.slice(0, 300)}`);
  if (winners.some(succeeded)) story.merged = true;
  return winners.find(succeeded) ?? winners.at(-1) ?? results.at(-1)!;
}

class Story {
  readonly lines: string[] = [];
  readonly failures: string[] = [];
  readonly runs: BoundedResult[] = [];
  /** A `run --merge` finished the plan: the integration branch is merged into main and deleted. */
  merged = false;
  note(what: string, r: BoundedResult): BoundedResult {
    this.runs.push(r);
    this.lines.push(`${what}: ${describeRun(r)}`);
    if (r.cut)
      this.fail(`${what} was cut short by the test (${r.cut}): ${r.cut === 'spin' ? 'the driver spins' : 'it hung'}`);
    return r;
  }
  say(line: string): void {
    this.lines.push(line);
  }
  fail(why: string): void {
    this.failures.push(why);
  }
}

async function atPoint(run: BoundedRun, at: number): Promise<boolean> {
  await until(`event ${at} of the run`, () => run.exited() || run.events().length >= at);
  return !run.exited();
}

/** The faulted run of scenario `sc`; returns the last run's result (re-runs follow). */
async function faultedRun(
  sc: Scenario,
  root: string,
  impl: FaultImplementer,
  story: Story,
  later: () => Record<string, string>,
) {
  const args = runArgs(impl);
  const signalled = async (sig: NodeJS.Signals) => {
    const run = boundedRun(root, args);
    const landed = await atPoint(run, sc.at);
    if (landed) run.child.kill(sig);
    const r = story.note(`run, ${sig} at event ${sc.at}${landed ? '' : ' (it had ended)'}`, await run.done);
    return { r, landed };
  };
  switch (sc.kind) {
    case 'sigkill':
      return (await signalled('SIGKILL')).r;
    case 'sigterm':
    case 'sigint': {
      const { r, landed } = await signalled(sc.kind === 'sigterm' ? 'SIGTERM' : 'SIGINT');
      const code = sc.kind === 'sigterm' ? 143 : 130;
      const s = summaryOf(r);
      // docs/run.md §1 item 5: claims released, exit 130/143 with a summary (or done, if it was ending anyway).
      if (landed && !succeeded(r) && !(r.code === code && s?.error?.code === 'Interrupted'))
        story.fail(`after ${sc.kind}: exit ${r.code ?? r.signal}, summary ${JSON.stringify(s?.error ?? s)}`);
      return r;
    }
    case 'kill-implementer': {
      const victim = sc.target!;
      impl.hold(victim);
      const run = boundedRun(root, args);
      await until(`the implementer of ${victim}`, () => run.exited() || impl.heldPid(victim) !== null);
      const pid = impl.heldPid(victim);
      if (pid) process.kill(-pid, 'SIGKILL');
      return story.note(`run, the implementer of ${victim} (pid ${pid}) SIGKILLed`, await run.done);
    }
    case 'rm-worktree': {
      const run = boundedRun(root, args);
      await atPoint(run, sc.at);
      const trees = workerTrees(root);
      const victim = trees.length ? pickOf(trees, sc.pick) : null;
      if (victim) rmTree(victim);
      return story.note(`run, rm -rf ${victim ?? '(no worker worktree)'} at event ${sc.at}`, await run.done);
    }
    case 'stale-index-lock': {
      const run = boundedRun(root, args);
      const landed = await atPoint(run, sc.at);
      if (landed) run.child.kill('SIGKILL');
      const r = story.note(`run, SIGKILL at event ${sc.at}${landed ? '' : ' (it had ended)'}`, await run.done);
      const trees = workerTrees(root).map((t) => t.slice(t.lastIndexOf('/') + 1));
      if (trees.length) story.say(`planted ${plantIndexLock(root, pickOf(trees, sc.pick))}`);
      return r;
    }
    case 'gc-prune': {
      const run = boundedRun(root, args);
      await atPoint(run, sc.at);
      story.say(`at event ${sc.at}: ${await gcAndPrune(root)}`);
      return story.note('run, git gc + worktree prune beside it', await run.done);
    }
    case 'outside-reset': {
      const run = boundedRun(root, args);
      await atPoint(run, sc.at);
      await until('a claimed step', () => run.exited() || heldSteps(run.events()).length > 0);
      const held = heldSteps(run.events());
      if (held.length) {
        const step = pickOf(held, sc.pick);
        const r = cliJson(root, ['state', 'reset', PLAN, step, '--force']);
        story.say(`state reset --force ${step}: exit ${r.code} ${r.code ? r.stdout.slice(0, 200) : ''}`);
      }
      return story.note(`run, an outside reset at event ${sc.at}`, await run.done);
    }
    case 'outside-claim': {
      const outsider = join(tempDir('tugcode-outsider-'), 'wt');
      git(root, 'worktree', 'add', '-q', '--detach', outsider);
      const run = boundedRun(root, args);
      await atPoint(run, sc.at);
      const c = cliJson(root, ['state', 'claim', PLAN, '--worktree', outsider, '--lease-duration', '2']);
      story.say(`outside claim at event ${sc.at}: exit ${c.code}, ${c.json?.claimed ? c.json.step_anchor : 'nothing'}`);
      return story.note('run, a claim from another worktree beside it', await run.done);
    }
    case 'double-run':
      return race(2, root, args, {}, { what: 'run started at the same instant', story });
    case 'restart-race': {
      const run = boundedRun(root, args);
      const landed = await atPoint(run, sc.at);
      if (landed) run.child.kill('SIGKILL');
      const r = story.note(`run, SIGKILL at event ${sc.at}${landed ? '' : ' (it had ended)'}`, await run.done);
      if (!landed) return r;
      return race(RACERS, root, args, later(), { what: 'restart', story });
    }
    case 'sigkill-review': {
      const run = boundedRun(root, args);
      const held = `review-${sc.target!}`;
      await until(`the review of ${sc.target!}`, () => run.exited() || impl.heldPid(held) !== null);
      const landed = !run.exited();
      if (landed) run.child.kill('SIGKILL');
      return story.note(
        `run, SIGKILL during the review of ${sc.target!}${landed ? '' : ' (it had ended)'}`,
        await run.done,
      );
    }
    case 'sigkill-resolve': {
      // The driver is killed while the resolver runs (even `at`), or by its own fault point once the
      // resolution is checked and staged, the rebase not continued yet (odd `at`; src/run/fault.ts).
      const step = sc.target!;
      if (sc.at % 2 === 1) {
        const r = story.note(
          `run, SIGKILL at after-resolve:${step}`,
          await boundedRun(root, args, { TUGCODE_RUN_FAULT: `after-resolve:${step}` }).done,
        );
        const resolved = r.events.some((e) => e.type === 'conflict_resolved' && e.step_anchor === step);
        if (r.signal !== 'SIGKILL' || !resolved)
          story.fail(`the fault point after-resolve:${step} never fired (exit ${r.code ?? r.signal})`);
        return r;
      }
      const run = boundedRun(root, args);
      const held = `resolve-${step}`;
      await until(`the resolver of ${step}`, () => run.exited() || impl.heldPid(held) !== null);
      const landed = !run.exited();
      if (landed) run.child.kill('SIGKILL');
      else story.fail(`the run ended before the resolver of ${step} ran`);
      return story.note(`run, SIGKILL during the resolution of ${step}`, await run.done);
    }
    case 'reset-after-integrate': {
      const step = sc.target!;
      const marker = resetAfterIntegrateHook(root, step);
      const r = story.note(`run, ${step} reset after its fast-forward`, await boundedRun(root, args).done);
      story.say(`the hook ${existsSync(marker) ? 'fired' : 'never fired'}`);
      return r;
    }
  }
}

async function runScenario(sc: Scenario): Promise<Story> {
  const story = new Story();
  const impl = faultImplementer();
  const root = faultRepo(
    UNITS,
    sc.kind === 'sigkill-review'
      ? reviewerConfig(impl, sc.target!)
      : sc.kind === 'sigkill-resolve'
        ? resolverConfig(impl, { hold: sc.at % 2 === 0 })
        : {},
  );
  story.say(`repo ${root}, implementer ${impl.dir}`);
  const base = git(root, 'rev-parse', 'main').trim(); // `run --merge` (the races) moves main at the end
  for (const f of sc.failOnce) impl.failOnce(f);
  // Each re-run's clock is an hour past the last run's: every lease a killed run left has expired.
  let clock = Date.now();
  const later = () => ({ TUGCODE_NOW: new Date((clock += 3_600_000)).toISOString() });
  try {
    let last = await faultedRun(sc, root, impl, story, later);
    // Faults a run rides out by itself (issue 22 "Faults the run should ride out instead of stopping";
    // docs/run.md §1 items 4.9–4.10): a failed attempt, a lost claim, a claim that lapses, a lost worktree.
    if (RIDDEN_OUT.has(sc.kind) && !succeeded(last) && !last.cut)
      story.fail(
        `the run stopped on ${sc.kind} instead of riding it out: ${JSON.stringify(summaryOf(last)?.error ?? null)}`,
      );
    for (let k = 1; !succeeded(last) && !last.cut && k <= MAX_RERUNS; k++)
      last = story.note(`re-run ${k}`, await boundedRun(root, runArgs(impl), later()).done);
    if (!succeeded(last)) {
      if (!last.cut)
        story.fail(`not done after ${MAX_RERUNS} re-runs: ${JSON.stringify(summaryOf(last)?.error ?? null)}`);
      return story;
    }
    // Across all runs, a step is reported completed at most once.
    const completed = story.runs.flatMap((r) => r.events.filter((e) => e.type === 'step_completed'));
    for (const s of TOP_STEPS) {
      const n = completed.filter((e) => e.step_anchor === s).length;
      if (n > 1) story.fail(`${s}: step_completed ${n} times across the runs`);
    }
    const tv = Date.now();
    story.failures.push(
      ...(await violations(root, impl, UNITS, { base, merged: story.merged }).catch((e: Error) => [
        `checking the invariants threw: ${e.message}`,
      ])),
    );
    story.say(`invariants checked in ${Date.now() - tv} ms`);
    return story;
  } finally {
    impl.release();
  }
}

describe('tugcode run, one random fault per iteration, then run again until done', () => {
  for (const seed of seeds()) {
    const sc = scenarioOf(seed);
    const what = sc.target ? `${sc.kind} ${sc.target}` : `${sc.kind} at event ${sc.at}`;
    const name = `seed ${seed}: ${what}, failing once: ${sc.failOnce.join(' ') || 'none'}`;
    it.concurrent(
      name,
      async ({ expect }) => {
        await slots.take();
        const t0 = Date.now();
        const story = await runScenario(sc).finally(() => slots.give());
        const replay = `replay: TUGCODE_FAULT_SEED=${seed} npx vitest run tests/run/fault-injection.test.ts -t 'seed ${seed}:'`;
        console.log(`[fault] ${name} (${Date.now() - t0} ms)${story.failures.length ? ' FAILED' : ''}`);
        if (process.env.TUGCODE_FAULT_VERBOSE) console.log(`  ${story.lines.join('\n  ')}`);
        expect(story.failures, `${name}\n  ${story.lines.join('\n  ')}\n  ${replay}`).toEqual([]);
      },
      900_000, // mostly the wait for a slot; each run is bounded by DEFAULT_BOUNDS
    );
  }

  it('the default seeds use every fault kind, and one fails substep 9.2 once', () => {
    const defaults = Array.from({ length: FAULT_KINDS.length }, (_, i) => scenarioOf(i + 1));
    expect(new Set(defaults.map((s) => s.kind))).toEqual(new Set(FAULT_KINDS));
    // Item 1: the second substep fails after the first was done inside the same attempt.
    expect(defaults.filter((s) => s.failOnce.includes('step-9-2')).length).toBeGreaterThan(0);
    // Items 2 and 3 each in an iteration that item 1 cannot cut short (nothing fails under step 9).
    const nine = ['step-9', 'step-9-1', 'step-9-2'];
    for (const kind of ['restart-race', 'reset-after-integrate'] as const) {
      const sc = defaults.find((s) => s.kind === kind)!;
      expect(
        [...sc.failOnce, sc.target].filter((x) => nine.includes(x!)),
        kind,
      ).toEqual([]);
    }
    // The same seed means the same scenario (replays are exact).
    expect(scenarioOf(7)).toEqual(scenarioOf(7));
  });
});

// ---------------------------------------------------------------------------------------------------------
// The substep retry loop, the run-lock race and a reset after the fast-forward, each reproduced deterministically
// ---------------------------------------------------------------------------------------------------------

describe('three faults reproduced deterministically', () => {
  it('a step whose second substep fails once is retried and completes; the driver never spins', async () => {
    const units = [
      unit('1', 'Top'),
      unit('1.1', 'Sub one', [], [], true),
      unit('1.2', 'Sub two', [], ['step-1-1'], true),
      unit('2', 'Other'),
    ];
    const root = runRepo(planOf(units), SLUG);
    const impl = faultImplementer();
    impl.failOnce('step-1-2');
    try {
      const r = await boundedRun(root, runArgs(impl, 1), {}, { timeoutMs: 60_000, maxClaims: 12 }).done;
      expect(r.cut, describeRun(r)).toBeNull();
      expect(summaryOf(r), describeRun(r)).toMatchObject({ status: 'ok' });
      expect(r.code).toBe(0);
      // One failed attempt, one that completed: step-1 claimed twice, step-2 once.
      const claims = r.events.filter((e) => e.type === 'claimed').map((e) => `${e.step_anchor}#${e.attempt}`);
      expect(claims.sort()).toEqual(['step-1#1', 'step-1#2', 'step-2#1']);
      expect(await violations(root, impl, units)).toEqual([]);
    } finally {
      impl.release();
    }
  }, 120_000);

  it('after a crash, 8 restarts at the same instant: each time exactly one takes the run lock', async () => {
    const units = [unit('1', 'One'), unit('2', 'Two'), unit('3', 'Three')];
    const root = runRepo(planOf(units), SLUG);
    const impl = faultImplementer();
    // The implementers wait until released: every run that takes the lock stays in its steps until killed.
    for (const s of ['step-1', 'step-2', 'step-3']) impl.hold(s, true);
    const args = runArgs(impl, 2);
    // SIGKILL as soon as a run holds the lock. A git it was running in a worker worktree may leave an
    // index.lock that stops the next run (issue 22 item 7, not this test's subject): removed, as git's
    // own message tells a user to do.
    const crash = async (rs: BoundedRun[]) => {
      for (const r of rs) r.child.kill('SIGKILL');
      const out = await Promise.all(rs.map((r) => r.done));
      for (const t of workerTrees(root)) rmTree(join(root, '.git', 'worktrees', basename(t), 'index.lock'));
      return out;
    };
    const rounds: number[] = [];
    const odd: string[] = [];
    try {
      const run = boundedRun(root, args);
      await until('the first run to take the lock', () => run.exited() || started(run));
      const [first] = await crash([run]);
      expect(started(first!), describeRun(first!)).toBe(true);
      for (let round = 0; round < 5; round++) {
        const barrier = gitBarrier(AT_MERGE_CHECK);
        const runs = Array.from({ length: 8 }, () => boundedRun(root, [...args, '--merge'], barrier.env));
        await barrier.release(8, () => runs.filter((r) => r.exited() || started(r)).length);
        await until('every restart to start or give up', () => runs.every((r) => r.exited() || started(r)));
        const winners = runs.filter((r) => started(r));
        rounds.push(winners.length);
        await crash(winners); // the crash the next round restarts from
        for (const l of await Promise.all(runs.filter((r) => !started(r)).map((r) => r.done)))
          if (l.code !== 4 || !l.stdout.includes('RunInProgress')) odd.push(`round ${round + 1}: ${describeRun(l)}`);
      }
      expect(rounds, 'runs holding the run lock at once, per round').toEqual(rounds.map(() => 1));
      expect(odd, 'restarts that lost the race without RunInProgress').toEqual([]);
      impl.release();
      const r = await boundedRun(root, args).done;
      expect(succeeded(r), describeRun(r)).toBe(true);
      expect(await violations(root, impl, units)).toEqual([]);
    } finally {
      impl.release();
    }
  }, 240_000);

  it('a reset between the fast-forward and complete does not implement the step again', async () => {
    const units = [unit('1', 'Base'), unit('2', 'Next', ['1']), unit('3', 'Side')];
    const root = runRepo(planOf(units), SLUG);
    const impl = faultImplementer();
    const marker = resetAfterIntegrateHook(root, 'step-1');
    try {
      const first = await boundedRun(root, runArgs(impl, 1)).done;
      // The reset ran between the fast-forward and `complete` (landed, or refused: either way no second try).
      expect(readFileSync(`${marker}.out`, 'utf8')).toContain('"command": "state reset"');
      let r = first;
      for (let k = 0; !succeeded(r) && !r.cut && k < 2; k++)
        r = await boundedRun(root, runArgs(impl, 1), {
          TUGCODE_NOW: new Date(Date.now() + (k + 1) * 3_600_000).toISOString(),
        }).done;
      expect(succeeded(r), describeRun(r)).toBe(true);
      expect(impl.seen()['step-1'], 'step-1 implemented once').toHaveLength(1);
      expect(await violations(root, impl, units)).toEqual([]);
    } finally {
      impl.release();
    }
  }, 120_000);
});
