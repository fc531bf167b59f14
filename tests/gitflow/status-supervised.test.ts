/**
 * `tugcode status` of a supervised run (docs/git.md §6): a step a reviewer escalated and the human's
 * decisions on it. The built CLI, real git and state, a scripted implementer and reviewer.
 */
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { schemaFor } from '../../src/contract/schemas/index.js';
import { checkSchema, runCli, runJson } from '../helpers/cli.js';
import { git, tempDir } from '../helpers/repo.js';
import { holdingImplementer, planText, runJsonl, runRepo, startRun, step, tugJson, waitUntil } from '../run/helpers.js';
import { implementer, reviewerScript } from '../run/review-helpers.js';

function status(root: string) {
  const s = runJson('status', ['status'], { cwd: root });
  expect(s.code, s.stderr).toBe(0);
  checkSchema(schemaFor('status'), s.json);
  const text = runCli(['status'], { cwd: root });
  expect(text.code, text.stderr).toBe(0);
  return { line: s.json.plans[0], text: text.stdout };
}

/** A plan whose step-1 the reviewer escalated: the run ended with it `needs_human`. */
function escalated() {
  const root = runRepo(planText([step(1, 'One'), step(2, 'Two', { deps: [1] })]), 'demo');
  const impl = implementer();
  const rev = reviewerScript();
  rev.answer('step-1', ['ESCALATE']);
  const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv, '--reviewer', rev.argv]);
  expect(r.code, r.stdout + r.stderr).toBe(4);
  return root;
}

describe('status of a supervised run', () => {
  it('after decide --approve: says the next run integrates the kept commit', () => {
    const root = escalated();
    const kept = git(root, 'rev-parse', 'refs/tugplan/review/demo/step-1').trim();
    expect(status(root).line.approved_steps).toEqual([]);
    expect(tugJson(root, ['state', 'decide', 'demo', 'step-1', '--approve']).code).toBe(0);
    const s = status(root);
    expect(s.line).toMatchObject({ status: 'active', needs_human_steps: [] });
    expect(s.line.approved_steps).toEqual([{ step_anchor: 'step-1', review_commit: kept }]);
    expect(s.text).toContain(`approved: step-1 (the next tugcode run integrates its kept commit ${kept.slice(0, 12)})`);
  });

  it('after decide --revise: the notes cut to one line; a failed step: its reset command (status and state show)', () => {
    const plan = planText([step(1, 'One'), step(2, 'Two', { deps: [1] }), step(3, 'Three', { checkpoint: 'false' })]);
    const root = runRepo(plan, 'demo', { '.tugtool/config.toml': '[state]\nmax_attempts = 1\n' });
    const impl = implementer();
    const rev = reviewerScript();
    rev.answer('step-1', ['ESCALATE']);
    const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv, '--reviewer', rev.argv]);
    expect(r.code, r.stdout + r.stderr).toBe(4);
    const notes = 'Use the helper in util.\nThen rerun the tests.';
    expect(tugJson(root, ['state', 'decide', 'demo', 'step-1', '--revise', notes]).code).toBe(0);
    const s = status(root);
    expect(s.line).toMatchObject({ failed_steps: ['step-3'], needs_human_steps: [] });
    expect(s.line.revised_steps).toEqual([{ step_anchor: 'step-1', notes }]);
    expect(s.text).toContain('revised: step-1 ("Use the helper in util. …")');
    expect(s.text).toContain(
      '\n.tugtool/tugplan-demo.md: step-3 failed; to run it again:\n  tugcode state reset demo step-3',
    );
    const show = runCli(['state', 'show', 'demo'], { cwd: root });
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toContain(`  Your notes for the next attempt: ${JSON.stringify(notes)}\n`);
    expect(show.stdout).toContain('  To run it again: tugcode state reset .tugtool/tugplan-demo.md step-3\n');
  });

  it('while it waits: names the literal decide commands, plan and step filled in', () => {
    const root = escalated();
    const s = status(root);
    expect(s.line.needs_human_steps).toEqual(['step-1']);
    expect(s.text).toContain('needs you: step-1');
    expect(s.text).not.toContain('(tugcode state decide)');
    for (const c of [
      'tugcode state decide demo step-1 --approve',
      'tugcode state decide demo step-1 --revise "<notes>"',
      'tugcode state decide demo step-1 --reject "<reason>"',
    ])
      expect(s.text).toContain(`\n  ${c}`);
    // state claim, finding nothing to claim, gives the same literal command.
    const wt = join(tempDir(), 'wt');
    git(root, 'worktree', 'add', '-q', wt);
    const c = runCli(['state', 'claim', 'demo', '--worktree', wt], { cwd: root });
    expect(c.stdout, c.stderr).toContain(
      'Needs a human: step-1: tugcode state decide demo step-1 --approve | --revise "<notes>" | --reject "<reason>"',
    );
  });

  // A diamond: step-2 and step-3 can run together, so a run starts two workers however many it asks for.
  const DIAMOND = planText([
    step(1, 'One'),
    step(2, 'Two', { deps: [1] }),
    step(3, 'Three', { deps: [1] }),
    step(4, 'Four', { deps: [2, 3] }),
  ]);

  /** `status` while `args`' run holds step-1 (its lock's holder then records the workers it started). */
  async function whileRunning(
    root: string,
    args: string[],
    check: (s: ReturnType<typeof status>, pid: number) => void,
  ) {
    const impl = holdingImplementer();
    writeFileSync(join(impl.hold, 'step-1-a1'), '');
    const run = startRun(root, ['demo', ...args, '--implementer', impl.argv]);
    try {
      await waitUntil('step-1 started', () => existsSync(join(impl.started, 'step-1-a1')));
      check(status(root), run.child.pid!);
    } finally {
      rmSync(join(impl.hold, 'step-1-a1'), { force: true });
    }
    const r = await run.done;
    expect(r.code, r.stderr).toBe(0);
  }

  it('during a live run: names the run holding the plan (pid, host, since, the workers it started)', async () => {
    const root = runRepo(DIAMOND, 'demo');
    await whileRunning(root, ['--workers', '4'], (s, pid) => {
      expect(s.line.claimed_steps).toEqual(['step-1']);
      expect(s.line.run_driver).toMatchObject({
        pid,
        host: hostname(),
        alive: true,
        workers: 2,
        workers_requested: 4,
      });
      const since = s.line.run_driver.started_at;
      expect(s.text).toContain(
        `run: pid ${pid} on ${hostname()} since ${since}, 2 workers (4 requested; its dependencies let at most 2 ` +
          'steps run at once)',
      );
    });
    // Once the run is over, nothing names it.
    const after = status(root);
    expect(after.line.run_driver).toBeNull();
    expect(after.text).not.toContain('run: pid');
  });

  it("during a live run without --workers: the workers it started, not the configuration's", async () => {
    const root = runRepo(DIAMOND, 'demo', { '.tugtool/config.toml': '[run]\nworkers = 4\n' });
    await whileRunning(root, [], (s, pid) => {
      expect(s.line.run_driver).toMatchObject({ pid, alive: true, workers: 2 });
      expect(s.line.run_driver).not.toHaveProperty('workers_requested');
      expect(s.text).toContain(`since ${s.line.run_driver.started_at}, 2 workers  claimed: step-1`);
    });
  });

  it('during a live run that starts all it asked for: no workers_requested', async () => {
    const root = runRepo(DIAMOND, 'demo');
    await whileRunning(root, ['--workers', '2'], (s) => {
      expect(s.line.run_driver).toMatchObject({ workers: 2 });
      expect(s.line.run_driver).not.toHaveProperty('workers_requested');
      expect(s.text).toMatch(/, 2 workers {2}claimed: step-1/);
    });
  });

  it('the run that integrates an approved step says so in its summary row', () => {
    const root = escalated();
    expect(tugJson(root, ['state', 'decide', 'demo', 'step-1', '--approve']).code).toBe(0);
    const impl = implementer();
    const rev = reviewerScript();
    const r = runCli(['run', 'demo', '--workers', '1', '--implementer', impl.argv, '--reviewer', rev.argv], {
      cwd: root,
    });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const row = r.stdout.split('\n').find((l) => /^\s*│?\s*step-1\b/.test(l) || l.startsWith('step-1'));
    expect(row, r.stdout).toMatch(/completed\s.*approved by a human/);
    expect(r.stdout).toMatch(/step-2\s.*completed\s.*reviewed, 1 round/);
  });
});
