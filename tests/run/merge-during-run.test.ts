/**
 * `tugcode merge` of a plan whose `tugcode run` is still going (docs/git.md §5): merging would delete the
 * integration branch and the worker worktrees the run works in, so it is refused with RunInProgress, also
 * with --force and --dry-run, changing nothing; the run then finishes as if nothing happened.
 */
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { git } from '../helpers/repo.js';
import { gitSnapshot, nodeImplementer, planText, runRepo, startRun, step, waitUntil } from './helpers.js';

const PLAN = planText([step(1, 'One'), step(2, 'Two', { deps: [1] })]);

describe('tugcode merge while the plan runs', () => {
  it('is refused with RunInProgress (also --force, --dry-run); the run completes', async () => {
    const root = runRepo(PLAN);
    // step-2 waits for a file the test writes once merge was tried, so the run is surely alive then.
    const impl = nodeImplementer(`
writeFileSync(join(wt, step + '.txt'), step + '\\n');
if (step === 'step-2') while (!existsSync(join(dir, 'go'))) await sleep(50);
`);
    const run = startRun(root, ['demo', '--workers', '1', '--implementer', impl.argv]);
    await waitUntil('step-2 claimed', () =>
      run.events().some((e) => e.type === 'claimed' && e.step_anchor === 'step-2'),
    );
    const before = gitSnapshot(root);
    for (const extra of [['--force'], ['--force', '--dry-run']]) {
      const r = runCli(['merge', 'demo', ...extra, '--json'], { cwd: root });
      expect(r.code, r.stdout + r.stderr).toBe(4);
      const error = JSON.parse(r.stdout).error;
      expect(error).toMatchObject({ code: 'RunInProgress', details: { holder_pid: run.child.pid } });
      expect(error.message).toContain('merge would remove the integration branch and the worktrees it works in');
      expect(error.hint).toContain(`kill -INT ${run.child.pid}`);
    }
    expect(gitSnapshot(root)).toEqual(before);
    const { writeFileSync } = await import('node:fs');
    writeFileSync(`${impl.dir}/go`, '');
    const done = await run.done;
    expect(done.code, done.stderr).toBe(0);
    expect(runCli(['merge', 'demo'], { cwd: root }).code).toBe(0);
    expect(git(root, 'log', '-1', '--format=%s', 'main')).toContain('Merge tugplan/demo');
  });
});
