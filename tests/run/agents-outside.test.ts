/**
 * The driver's own checks around any implementer (docs/agents.md §1.6–1.7), with script implementers:
 * a change outside the worktree fails the attempt with OutsideWrite (nothing undone, the run's summary an
 * error), and a step completed behind the driver's back is StepCompletedElsewhere with its work kept.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI } from '../helpers/cli.js';
import { git } from '../helpers/repo.js';
import { nodeImplementer, planText, runJsonl, runRepo, step, stepCommits } from './helpers.js';

const ONE = { '.tugtool/config.toml': '[state]\nmax_attempts = 1\n' };

describe('OutsideWrite', () => {
  it('a write to the main checkout, to .tugtool/ and a new branch fail the attempt; nothing is undone', () => {
    const root = runRepo(planText([step(1, 'Base')]), 'demo', ONE);
    const impl = nodeImplementer(`
import { execFileSync } from 'node:child_process';
writeFileSync(join(wt, step + '.txt'), step + '\\n');
if (step === 'step-1') {
  const root = process.env.TUG_REPO_ROOT;
  writeFileSync(join(root, 'stray.txt'), 'outside\\n');
  writeFileSync(join(root, '.tugtool', 'notes.md'), 'outside\\n');
  execFileSync('git', ['branch', 'evil'], { cwd: wt });
}
`);
    const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv]);
    const failed = r.events.filter((e) => e.type === 'attempt_failed');
    expect(failed, r.stdout + r.stderr).toEqual([
      expect.objectContaining({ step_anchor: 'step-1', reason_code: 'OutsideWrite' }),
    ]);
    expect(failed[0].reason).toBe(
      'step-1: the implementer changed 3 thing(s) outside its worktree: .tugtool/notes.md, ref refs/heads/evil, stray.txt',
    );
    // The run ends in an error naming the change.
    expect(stepCommits(root, 'tugplan/demo')).toEqual([]);
    expect(r.code).toBe(4);
    expect(r.events.at(-1)).toMatchObject({ type: 'summary', status: 'error', error: { code: 'OutsideWrite' } });
    // Nothing the implementer changed was undone.
    expect(readFileSync(join(root, 'stray.txt'), 'utf8')).toBe('outside\n');
    expect(existsSync(join(root, '.tugtool', 'notes.md'))).toBe(true);
    expect(git(root, 'branch', '--list', 'evil').trim()).toBe('evil');
  });

  it('two workers whose implementers stay in their worktrees see no OutsideWrite from each other', () => {
    const root = runRepo(planText([step(1, 'A'), step(2, 'B'), step(3, 'C'), step(4, 'D', { deps: [1, 2, 3] })]));
    const impl = nodeImplementer(`writeFileSync(join(wt, step + '.txt'), step + '\\n'); await sleep(300);`);
    const r = runJsonl(root, ['demo', '--workers', '2', '--implementer', impl.argv]);
    expect(r.events.at(-1), r.stdout).toMatchObject({ type: 'summary', status: 'ok' });
    expect(r.events.filter((e) => e.type === 'attempt_failed')).toEqual([]);
  });
});

describe('StepCompletedElsewhere', () => {
  it('an implementer that completes its own step: reported, not a silent claim_lost; the work is kept', () => {
    const root = runRepo(planText([step(1, 'Base')]), 'demo', ONE);
    const impl = nodeImplementer(`
import { execFileSync } from 'node:child_process';
writeFileSync(join(wt, 'work.txt'), 'the work\\n');
execFileSync(process.execPath, [${JSON.stringify(CLI)}, 'state', 'complete', process.env.TUG_PLAN, step,
  '--worktree', wt, '--attempt', String(attempt), '--force', 'done by the implementer'], { cwd: wt });
`);
    const r = runJsonl(root, ['demo', '--workers', '1', '--implementer', impl.argv]);
    const lost = r.events.filter((e) => e.type === 'claim_lost');
    expect(lost, r.stdout + r.stderr).toEqual([
      expect.objectContaining({
        step_anchor: 'step-1',
        error_code: 'StepCompletedElsewhere',
        kept_commit: expect.any(String),
      }),
    ]);
    const kept = lost[0].kept_commit as string;
    expect(git(root, 'show', `${kept}:work.txt`)).toBe('the work\n');
    expect(git(root, 'rev-parse', 'refs/tugplan/kept/demo/step-1/attempt1').trim()).toBe(kept);
    expect(r.code).toBe(4);
    expect(r.events.at(-1)).toMatchObject({
      type: 'summary',
      status: 'error',
      error: { code: 'StepCompletedElsewhere', details: { step_anchor: 'step-1', kept_commit: kept } },
    });
  });
});
