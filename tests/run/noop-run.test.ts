/**
 * A run with nothing to do leaves nothing behind (docs/run.md §1.1 item 6): after `tugcode merge` deleted the
 * plan's integration branch, running the plan again creates no branch and no worktree, and names no merge.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { gitSnapshot, implementerScript, planText, runJsonl, runRepo, step } from './helpers.js';

const PLAN = planText([step(1, 'One'), step(2, 'Two', { deps: [1] })]);

describe('tugcode run of a plan already done and merged', () => {
  it('prints nothing to run and leaves git as it was: no branch, no worktree, no next merge', () => {
    const root = runRepo(PLAN, 'hello');
    const impl = implementerScript();
    expect(runCli(['run', 'hello', '--implementer', impl.argv], { cwd: root }).code).toBe(0);
    const merged = runCli(['merge', 'hello'], { cwd: root });
    expect(merged.code, merged.stderr).toBe(0);
    const before = gitSnapshot(root);
    expect(before.refs).not.toContain('tugplan/');

    const text = runCli(['run', 'hello', '--implementer', impl.argv], { cwd: root });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain('plan done: nothing to run, all 2 steps already completed');
    expect(text.stdout).not.toContain('next:');
    expect(gitSnapshot(root)).toEqual(before);
    expect(existsSync(join(root, '.tugtree', 'tugplan__hello--w1'))).toBe(false);

    const json = runJsonl(root, ['hello', '--implementer', impl.argv, '--keep-worktrees']);
    expect(json.code, json.stderr).toBe(0);
    expect(json.events.at(-1)).toMatchObject({
      type: 'summary',
      status: 'ok',
      plan_done: true,
      nothing_to_merge: true,
    });
    expect(gitSnapshot(root)).toEqual(before);

    // --merge: nothing to merge, and nothing left behind either.
    const merge = runCli(['run', 'hello', '--implementer', impl.argv, '--merge'], { cwd: root });
    expect(merge.code, merge.stderr).toBe(0);
    expect(gitSnapshot(root)).toEqual(before);
  });

  it('a plan done but not merged yet keeps its branch and still names the merge', () => {
    const root = runRepo(PLAN, 'hello');
    const impl = implementerScript();
    expect(runCli(['run', 'hello', '--implementer', impl.argv], { cwd: root }).code).toBe(0);
    const before = gitSnapshot(root);
    const again = runCli(['run', 'hello', '--implementer', impl.argv], { cwd: root });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('next: tugcode merge .tugtool/tugplan-hello.md');
    expect(gitSnapshot(root)).toEqual(before);
  });
});
