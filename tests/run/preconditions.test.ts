/**
 * What `tugcode run` refuses before any worker starts (docs/run.md §1 items 1 and 3): a second run of the same
 * plan (`RunInProgress`, exit 4, nothing changed) and a plan that is not committed on the base branch or
 * differs from the main checkout's copy (`PlanNotCommitted`, exit 4). The summary is always the last line.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkSchema, runCli, runJson } from '../helpers/cli.js';
import { schemaFor } from '../../src/contract/schemas/index.js';
import { git, tempRepo, writeFiles } from '../helpers/repo.js';
import { runEventSchema } from '../../src/contract/schemas/run.js';
import { initProject } from '../../src/project/init.js';
import { resolveRepo } from '../../src/git/repo.js';
import { fixedClock } from '../../src/clock.js';
import { dbPathOf, dump } from '../state/helpers.js';
import {
  T0,
  gitSnapshot,
  implementerScript,
  nodeImplementer,
  planText,
  runJsonl,
  runRepo,
  startRun,
  step,
  stepCommits,
  waitFor,
} from './helpers.js';

const PLAN = planText([step(1, 'Base'), step(2, 'Next', { deps: [1] })]);

/** What a refused run must leave alone: refs, worktrees, every state row, the files under .tugtool/. */
function snapshot(root: string) {
  const tug = join(root, '.tugtool');
  const files = readdirSync(tug, { recursive: true, encoding: 'utf8' })
    .filter((f) => !/state\.db(-wal|-shm)?$/.test(f))
    .sort();
  const holder = join(tug, 'run-demo.lock', 'holder.json');
  return {
    ...gitSnapshot(root),
    state: dump(dbPathOf(root)),
    files,
    holder: existsSync(holder) ? readFileSync(holder, 'utf8') : null,
    status: git(root, 'status', '--porcelain', '--untracked-files=all'),
  };
}

function expectRefusal(r: ReturnType<typeof runJsonl>, code: string) {
  expect(r.code, r.stdout + r.stderr).toBe(4);
  expect(r.events.length).toBeGreaterThan(0);
  for (const e of r.events) checkSchema(runEventSchema, e);
  const summary = r.events.at(-1);
  expect(summary).toMatchObject({
    type: 'summary',
    status: 'error',
    error: { code },
    steps_completed: [],
    commits: [],
  });
  return summary;
}

const running: ReturnType<typeof startRun>[] = [];
afterEach(() => {
  for (const r of running.splice(0)) if (r.child.exitCode === null) r.child.kill('SIGKILL');
});

describe('tugcode run: a second run of the same plan', () => {
  it('fails with RunInProgress (exit 4) and changes nothing; the first run then finishes', async () => {
    const root = runRepo(PLAN);
    // The implementer announces itself, then waits for `go` (outside the repo).
    const impl = nodeImplementer(`
writeFileSync(join(dir, 'started-' + step), '');
const end = Date.now() + 30000;
while (!existsSync(join(dir, 'go')) && Date.now() < end) await sleep(20);
writeFileSync(join(wt, step + '.txt'), step + '\\n');
`);
    const first = startRun(root, ['demo', '--workers', '1', '--heartbeat', '3600', '--implementer', impl.argv]);
    running.push(first);
    await waitFor(() => first.events().some((e) => e.type === 'claimed'), 20_000, 'the first claim');
    await waitFor(() => existsSync(join(impl.dir, 'started-step-1')), 20_000, 'the implementer');
    const before = snapshot(root);
    expect(before.holder).toContain(`"pid":${first.child.pid}`);

    const second = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv]);
    const summary = expectRefusal(second, 'RunInProgress');
    expect(second.events).toHaveLength(1); // no run_started: the lock is taken before anything else
    expect(summary.error.details).toMatchObject({
      plan_path: '.tugtool/tugplan-demo.md',
      holder_pid: first.child.pid,
    });
    // The text says whose run it is and what to do.
    expect(summary.error.message).toContain(`(pid ${first.child.pid} on `);
    expect(summary.error.hint).toContain(`kill -INT ${first.child.pid}`);
    expect(snapshot(root)).toEqual(before);

    writeFileSync(join(impl.dir, 'go'), '');
    const done = await first.done;
    expect(done.code, done.stderr).toBe(0);
    expect(done.events.at(-1)).toMatchObject({ type: 'summary', status: 'ok' });
    expect(stepCommits(root, 'tugplan/demo')).toEqual(['step-1', 'step-2']);
    expect(existsSync(join(root, '.tugtool', 'run-demo.lock'))).toBe(false);
  });
});

describe('tugcode run: a plan that is not committed', () => {
  it("fails with PlanNotCommitted when the main checkout's copy differs from the base branch", () => {
    const root = runRepo(PLAN);
    writeFileSync(join(root, '.tugtool', 'tugplan-demo.md'), PLAN + '\n#### Step 3: Extra {#step-3}\n');
    const before = snapshot(root);
    const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', 'true']);
    const summary = expectRefusal(r, 'PlanNotCommitted');
    expect(r.events).toHaveLength(1);
    expect(summary.error.details).toMatchObject({ plan_path: '.tugtool/tugplan-demo.md', base_branch: 'main' });
    expect(summary.error.hint).toBe('git add .tugtool/tugplan-demo.md && git commit');
    expect(snapshot(root)).toEqual(before);
    expect(before.state).toBeNull(); // no state.db was created
  });

  it('fails with PlanNotCommitted when the plan was never committed', () => {
    const root = tempRepo();
    initProject(resolveRepo(root), fixedClock(Date.parse(T0)));
    git(root, 'add', '-A');
    git(root, 'commit', '-q', '-m', 'init');
    writeFiles(root, { '.tugtool/tugplan-demo.md': PLAN });
    const before = snapshot(root);
    const r = runJsonl(root, ['.tugtool/tugplan-demo.md', '--implementer', 'true']);
    const summary = expectRefusal(r, 'PlanNotCommitted');
    expect(summary.error.message).toContain('main');
    expect(snapshot(root)).toEqual(before);
  });

  it('fails in text mode too: the summary on stdout, the error and its hint on stderr', () => {
    const root = runRepo(PLAN);
    writeFileSync(join(root, '.tugtool', 'tugplan-demo.md'), PLAN + '\n');
    const r = runCli(['run', 'demo', '--implementer', 'true'], { cwd: root });
    expect(r.code, r.stdout + r.stderr).toBe(4);
    expect(r.stderr).toContain('tugcode: PlanNotCommitted: ');
    expect(r.stderr).toContain('hint: git add .tugtool/tugplan-demo.md && git commit');
    expect(git(root, 'branch', '--list', 'tugplan/*')).toBe('');
  });
});

describe('tugcode run: a state store it cannot reach', () => {
  it('fails with DatabaseUnavailable and leaves no worker trees or integration branch behind', () => {
    const root = runRepo(PLAN);
    const before = snapshot(root);
    // A PostgreSQL URL where nothing listens: the state cannot be initialised.
    const r = runJsonl(root, ['demo', '--workers', '2', '--implementer', 'true'], {
      TUGCODE_STATE_URL: 'postgres://tug:secret@127.0.0.1:1/tug',
    });
    expect(r.code, r.stderr).toBe(10);
    expect(r.events.at(-1)).toMatchObject({ type: 'summary', status: 'error', error: { code: 'DatabaseUnavailable' } });
    expect(r.stdout + r.stderr).not.toContain('secret');
    expect(snapshot(root)).toEqual(before);
    expect(git(root, 'branch', '--list', 'tugplan/*')).toBe('');
  });
});

describe('tugcode run / demo --json: errors before the run are the one summary line', () => {
  it('usage errors (flags, values, a non-empty demo DIR): one summary line, exit 2, the stderr line', () => {
    const root = runRepo(PLAN);
    const before = snapshot(root);
    for (const args of [
      ['run', 'demo', '--workers', '0', '--implementer', 'true'],
      ['run', 'demo', '--bogus'],
      ['run'],
      ['demo', root],
    ]) {
      const r = runCli([...args, '--json'], { cwd: root });
      expect(r.code, args.join(' ') + '\n' + r.stdout + r.stderr).toBe(2);
      const lines = r.stdout.split('\n').filter(Boolean);
      expect(lines, args.join(' ')).toHaveLength(1);
      const summary = JSON.parse(lines[0]!);
      checkSchema(runEventSchema, summary);
      expect(summary).toMatchObject({ type: 'summary', status: 'error', error: { code: 'InvalidArgument' } });
      expect(r.stderr).toMatch(/^tugcode: InvalidArgument: /m);
    }
    expect(snapshot(root)).toEqual(before);
    // `run --dry-run` prints one document: its errors keep the envelope.
    const dry = runCli(['run', 'demo', '--dry-run', '--workers', '0', '--json'], { cwd: root });
    expect(dry.code).toBe(2);
    expect(dry.json).toMatchObject({ status: 'error', command: 'run', error: { code: 'InvalidArgument' } });
  });

  it('a failed run writes the stderr line in --json mode too', () => {
    const root = runRepo(PLAN);
    writeFileSync(join(root, '.tugtool', 'tugplan-demo.md'), PLAN + '\n');
    const r = runJsonl(root, ['demo', '--implementer', 'true']);
    expectRefusal(r, 'PlanNotCommitted');
    expect(r.stderr).toContain('tugcode: PlanNotCommitted: ');
  });
});

const DIAMOND = planText([
  step(1, 'Base', { checkpoint: 'test -f step-1.txt' }),
  step(2, 'Left', { deps: [1] }),
  step(3, 'Right', { deps: [1], checkpoint: 'test -f step-3.txt' }),
  step(4, 'Join', { deps: [2, 3] }),
]);

describe('tugcode run --dry-run', () => {
  it('prints the waves, the critical path and what each step runs, and changes nothing', () => {
    const root = runRepo(DIAMOND);
    const before = snapshot(root);
    const r = runCli(['run', 'demo', '--dry-run', '--implementer', 'node impl.mjs'], { cwd: root });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain('4 steps in 3 waves\n');
    expect(r.stdout).toContain('wave 1: step-1\nwave 2: step-2, step-3\nwave 3: step-4\n');
    expect(r.stdout).toMatch(/critical path: step-1 → step-[23] → step-4 \(3 steps\)/);
    expect(r.stdout).toContain('step-3  Right  (wave 2)\n  depends on:   step-1\n  implementer:  node impl.mjs\n');
    expect(r.stdout).toContain('  checkpoint:   test -f step-3.txt\n');
    expect(snapshot(root)).toEqual(before);
    expect(before.state).toBeNull();
    expect(git(root, 'branch', '--list', 'tugplan/*')).toBe('');
  });

  it('--json: one envelope matching the run schema; nothing changed', () => {
    const root = runRepo(DIAMOND);
    const before = snapshot(root);
    const r = runJson('run', ['run', 'demo', '--dry-run'], { cwd: root });
    checkSchema(schemaFor('run'), r.json);
    expect(r.json).toMatchObject({
      status: 'ok',
      command: 'run',
      dry_run: true,
      plan_path: '.tugtool/tugplan-demo.md',
      plan_committed: true,
      waves: [['step-1'], ['step-2', 'step-3'], ['step-4']],
      done: [],
    });
    expect(r.json.critical_path).toHaveLength(3);
    expect(r.json.steps.find((s: any) => s.step_anchor === 'step-1')).toMatchObject({
      wave: 1,
      depends_on: [],
      implementer: null,
      checkpoint_commands: ['test -f step-1.txt'],
    });
    expect(snapshot(root)).toEqual(before);
  });

  it('previews a plan with uncommitted changes as the main checkout has it, and says the real run needs it committed', () => {
    const root = runRepo(DIAMOND);
    // The user adds a step and asks for the schedule before committing.
    const edited = planText([
      step(1, 'Base', { checkpoint: 'test -f step-1.txt' }),
      step(2, 'Left', { deps: [1] }),
      step(3, 'Right', { deps: [1], checkpoint: 'test -f step-3.txt' }),
      step(4, 'Join', { deps: [2, 3] }),
      step(5, 'Docs', { deps: [4] }),
    ]);
    writeFileSync(join(root, '.tugtool', 'tugplan-demo.md'), edited);
    // A plan never committed at all is previewed too.
    writeFileSync(join(root, '.tugtool', 'tugplan-fresh.md'), planText([step(1, 'Only')]));
    const before = snapshot(root);
    const text = runCli(['run', 'demo', '--dry-run', '--implementer', 'true'], { cwd: root });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain('5 steps in 4 waves\n');
    expect(text.stdout).toContain('wave 4: step-5\n');
    expect(text.stderr).toBe(
      'tugcode: warning: PlanNotCommitted: .tugtool/tugplan-demo.md is not committed on main ' +
        "(the main checkout's copy differs from main): this schedule is the main checkout's copy; the real run " +
        'needs the plan committed first (git add .tugtool/tugplan-demo.md && git commit)\n',
    );
    const r = runJson('run', ['run', 'demo', '--dry-run', '--implementer', 'true'], { cwd: root });
    expect(r.json).toMatchObject({
      plan_committed: false,
      waves: [['step-1'], ['step-2', 'step-3'], ['step-4'], ['step-5']],
      warnings: [{ code: 'PlanNotCommitted', details: { reason: "the main checkout's copy differs from main" } }],
    });
    const fresh = runJson('run', ['run', 'fresh', '--dry-run', '--implementer', 'true'], { cwd: root });
    expect(fresh.json).toMatchObject({
      plan_committed: false,
      waves: [['step-1']],
      warnings: [{ code: 'PlanNotCommitted', details: { reason: '.tugtool/tugplan-fresh.md does not exist on main' } }],
    });
    expect(snapshot(root)).toEqual(before);
    // The real run still refuses it, changing nothing.
    expectRefusal(runJsonl(root, ['demo', '--implementer', 'true']), 'PlanNotCommitted');
    expect(snapshot(root)).toEqual(before);
    // Committed, the same preview comes without the warning.
    git(root, 'commit', '-qam', 'add step 5');
    const committed = runJson('run', ['run', 'demo', '--dry-run', '--implementer', 'true'], { cwd: root });
    expect(committed.json).toMatchObject({ plan_committed: true, warnings: [] });
    expect(committed.json.waves).toEqual(r.json.waves);
  });

  it('leaves out the steps the state records as completed, reading the state without changing it', () => {
    const root = runRepo(DIAMOND, 'demo', { '.tugtool/config.toml': '[state]\nmax_attempts = 1\n' });
    const impl = implementerScript();
    writeFileSync(join(impl.failDir, 'step-2'), '1');
    const run = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv]);
    expect(run.code, run.stderr).toBe(4);
    const before = snapshot(root);
    expect(before.state).not.toBeNull();
    const r = runJson('run', ['run', 'demo', '--dry-run'], { cwd: root });
    // step-2 failed at its cap and step-4 waits on it: the real run claims neither (dry-run-failed.test.ts).
    expect(r.json).toMatchObject({ waves: [], done: ['step-1', 'step-3'], blocked_steps: ['step-4'] });
    expect(r.json.failed_steps.map((f: any) => f.step_anchor)).toEqual(['step-2']);
    const text = runCli(['run', 'demo', '--dry-run'], { cwd: root });
    expect(text.stdout).toContain('nothing to run until the failed step is reset\nalready completed: step-1, step-3\n');
    expect(snapshot(root)).toEqual(before);
  });
});
