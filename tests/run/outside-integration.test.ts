/**
 * What a step's attempt may do to the integration branch (docs/agents.md §1.6): its commits name only its
 * own steps in their trailers (a forged `Tug-Step` would complete another step by reconcile, its implementer
 * never run), and the branch stays where the run left it (the snapshot leaves it out, since other workers
 * integrate meanwhile: the run checks it against the tips it wrote itself).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI } from '../helpers/cli.js';
import { git } from '../helpers/repo.js';
import { nodeImplementer, planText, runJsonl, runRepo, step, stepCommits } from './helpers.js';

const ONE = { '.tugtool/config.toml': '[state]\nmax_attempts = 1\n' };

/** Writes its step's file and leaves a mark that it ran; `code` runs after, for the step it names. */
function implementer(code: string) {
  return nodeImplementer(`
import { execFileSync } from 'node:child_process';
const g = (...a) => execFileSync('git', a, { cwd: wt, encoding: 'utf8' }).trim();
writeFileSync(join(dir, 'ran-' + step), '');
writeFileSync(join(wt, step + '.txt'), step + '\\n');
${code}
`);
}

describe('a step attempt and the integration branch', () => {
  it("a commit naming another step's Tug-Step fails the attempt before anything is integrated", () => {
    const root = runRepo(planText([step(1, 'One'), step(2, 'Two', { deps: [1] })]), 'demo', ONE);
    const impl = implementer(`
if (step === 'step-1') {
  g('add', '-A');
  g('commit', '-q', '-m', 'feat: t2', '-m', 'Tug-Step: step-2\\nTug-Plan: .tugtool/tugplan-demo.md');
  writeFileSync(join(dir, 'forged'), g('rev-parse', 'HEAD'));
}
`);
    const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv]);
    const failed = r.events.filter((e) => e.type === 'attempt_failed');
    expect(failed, r.stdout + r.stderr).toEqual([
      expect.objectContaining({ step_anchor: 'step-1', reason_code: 'OutsideWrite' }),
    ]);
    expect(failed[0].reason).toMatch(
      /^step-1: the step's commits name another step or plan in their trailers, .*: commit [0-9a-f]{12} \(Tug-Step: step-2\)/,
    );
    // Nothing of step-1's attempt is integrated, and step-2 is not completed from the forged commit: it
    // waits on step-1 (the plan's order), its implementer never ran.
    expect(git(root, 'rev-parse', 'tugplan/demo').trim()).toBe(git(root, 'rev-parse', 'main').trim());
    expect(existsSync(join(impl.dir, 'ran-step-2'))).toBe(false);
    expect(r.events.filter((e) => e.type === 'step_completed')).toEqual([]);
    const summary = r.events.at(-1);
    expect(summary).toMatchObject({ type: 'summary', status: 'error', error: { code: 'OutsideWrite' } });
    expect(summary.steps_completed).toEqual([]);
    expect(summary.already_completed).toBeUndefined();
    expect(summary.blocked_steps).toEqual(['step-2']);
    expect(summary.error.details.changed).toEqual([
      expect.stringMatching(/^commit [0-9a-f]{12} \(Tug-Step: step-2\)$/),
    ]);
    expect(r.code).toBe(4);
  });

  it('a commit appended to the integration branch by the implementer fails its attempt; nothing is built on it', () => {
    const root = runRepo(planText([step(1, 'One'), step(2, 'Two', { deps: [1] })]), 'demo', ONE);
    const impl = implementer(`
if (step === 'step-1') {
  const tip = g('rev-parse', 'refs/heads/tugplan/demo');
  const c = g('commit-tree', tip + '^{tree}', '-p', tip, '-m', 'foreign');
  g('update-ref', 'refs/heads/tugplan/demo', c);
  writeFileSync(join(dir, 'foreign'), c);
}
`);
    const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv]);
    const failed = r.events.filter((e) => e.type === 'attempt_failed');
    expect(failed, r.stdout + r.stderr).toEqual([
      expect.objectContaining({ step_anchor: 'step-1', reason_code: 'OutsideWrite' }),
    ]);
    expect(failed[0].reason).toContain(
      'step-1: the implementer changed 1 thing(s) outside its worktree: ref refs/heads/tugplan/demo (at ',
    );
    // Nothing undone, nothing integrated on top of it, and the run claimed no further step.
    const foreign = git(root, 'rev-parse', 'tugplan/demo').trim();
    expect(git(root, 'log', '-1', '--format=%s', foreign).trim()).toBe('foreign');
    expect(stepCommits(root, 'tugplan/demo')).toEqual([]);
    expect(existsSync(join(impl.dir, 'ran-step-2'))).toBe(false);
    expect(r.events.filter((e) => e.type === 'step_completed')).toEqual([]);
    expect(r.events.at(-1)).toMatchObject({ type: 'summary', status: 'error', error: { code: 'OutsideWrite' } });
    expect(r.code).toBe(4);
  });

  it("a step's own tugcode commit (StepCompletedElsewhere) is not blamed on the worker that saw the branch move", () => {
    const free = (n: number, title: string) =>
      step(n, title).replace('**Commit:**', '**Depends on:** none\n\n**Commit:**');
    const root = runRepo(planText([free(1, 'One'), free(2, 'Two')]), 'demo', ONE);
    // step-1 integrates itself with tugcode commit, then waits until step-2 went through its checks after its
    // implementer (the run's commit of step-2 exists), so step-2's check sees the branch moved first.
    const impl = implementer(`
const plan = '.tugtool/tugplan-demo.md';
const cli = (...a) => execFileSync(process.execPath, [${JSON.stringify(CLI)}, ...a], { cwd: wt, encoding: 'utf8' });
if (step === 'step-1') {
  cli('state', 'update', plan, step, '--worktree', wt, '--attempt', String(attempt), '--complete-remaining');
  cli('commit', '--worktree', wt, '--plan', plan, '--step', step, '--attempt', String(attempt), '--message', 'feat: one');
  writeFileSync(join(dir, 'committed'), '');
  for (let i = 0; i < 600 && !/Tug-Step: step-2/.test(g('log', '--all', '--format=%B')); i++) await sleep(50);
} else {
  for (let i = 0; i < 600 && !existsSync(join(dir, 'committed')); i++) await sleep(50);
}
`);
    const r = runJsonl(root, ['demo', '--workers', '2', '--implementer', impl.argv]);
    const failed = r.events.filter((e) => e.type === 'attempt_failed');
    expect(
      failed.filter((e) => e.step_anchor === 'step-2'),
      r.stdout + r.stderr,
    ).toEqual([]);
    expect(r.events.filter((e) => e.type === 'step_completed')).toMatchObject([{ step_anchor: 'step-2' }]);
    // The run ends in the step completed behind its back (docs/agents.md §1.7), not in an OutsideWrite.
    expect(r.events.at(-1)).toMatchObject({ type: 'summary', error: { code: 'StepCompletedElsewhere' } });
    expect(stepCommits(root, 'tugplan/demo')).toHaveLength(2);
  });

  it('the integration branch reset by the implementer (an integrated step dropped) fails its attempt', () => {
    const root = runRepo(planText([step(1, 'One'), step(2, 'Two', { deps: [1] })]), 'demo', ONE);
    const impl = implementer(`
if (step === 'step-2') g('update-ref', 'refs/heads/tugplan/demo', 'refs/heads/main');
`);
    const r = runJsonl(root, ['demo', '--workers', '2', '--implementer', impl.argv]);
    const failed = r.events.filter((e) => e.type === 'attempt_failed');
    expect(failed, r.stdout + r.stderr).toEqual([
      expect.objectContaining({ step_anchor: 'step-2', reason_code: 'OutsideWrite' }),
    ]);
    const main = git(root, 'rev-parse', 'main').trim();
    expect(failed[0].reason).toContain(
      `step-2: the implementer changed 1 thing(s) outside its worktree: ref refs/heads/tugplan/demo (at ${main}; the run left it at `,
    );
    expect(r.events.filter((e) => e.type === 'step_completed')).toMatchObject([{ step_anchor: 'step-1' }]);
    // Nothing undone: the branch stays where the implementer put it, step-2 is not integrated.
    expect(git(root, 'rev-parse', 'tugplan/demo').trim()).toBe(main);
    expect(r.events.at(-1)).toMatchObject({ type: 'summary', status: 'error', error: { code: 'OutsideWrite' } });
    expect(r.events.at(-1).steps_completed).toEqual(['step-1']);
    expect(r.code).toBe(4);
  });
});
