/**
 * A commit message made ahead (prepareMessage, the driver: while the implementer runs) is used by the
 * driver's commit (commitStepOnly) only while its trailers still match; otherwise the commit makes its own, so a refactor
 * applied meanwhile still gets its Tug-Refactor trailer.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { commitStep, commitStepOnly, prepareMessage } from '../../src/gitflow/commit.js';
import { createWorktree } from '../../src/gitflow/worktree.js';
import { git } from '../helpers/repo.js';
import { flowCtx, PLAN_PATH, planRepo, workOn } from './helpers.js';

async function setUp() {
  const root = planRepo();
  const created = await createWorktree(flowCtx(root), { plan: 'demo' });
  const wt = created.worktree_path;
  const attempt = await workOn(flowCtx(root), wt, 'step-1');
  writeFileSync(join(wt, 'alpha.txt'), 'alpha\n');
  return { root, wt, attempt, branch: created.branch_name };
}

const base = (wt: string, attempt: number, branch: string) => ({
  worktree: wt,
  plan: PLAN_PATH,
  step: 'step-1',
  message: 'feat: alpha',
  attempt,
  branch,
  stepTitle: 'Add alpha',
});

describe('prepareMessage', () => {
  it('makes exactly the message the commit would write', async () => {
    const { wt, attempt, branch } = await setUp();
    const p = await prepareMessage(flowCtx(wt), {
      worktree: wt,
      planPath: PLAN_PATH,
      step: 'step-1',
      message: 'feat: alpha',
      attempt,
    });
    await commitStepOnly(flowCtx(wt), base(wt, attempt, branch));
    expect(git(wt, 'log', '-1', '--format=%B')).toBe(p.message + '\n');
    expect(p.message).toBe('feat: alpha\n\nTug-Step: step-1\nTug-Plan: .tugtool/tugplan-demo.md\n');
  });

  it('is used while its trailers match, and made again when they changed', async () => {
    const { wt, attempt, branch } = await setUp();
    const p = await prepareMessage(flowCtx(wt), {
      worktree: wt,
      planPath: PLAN_PATH,
      step: 'step-1',
      message: 'feat: alpha',
      attempt,
    });
    // A marked copy under the same key shows which message the commit took.
    const marked = { key: p.key, message: p.message.replace('feat: alpha', 'feat: alpha (prepared)') };
    await commitStepOnly(flowCtx(wt), { ...base(wt, attempt, branch), prepared: marked });
    expect(git(wt, 'log', '-1', '--format=%s')).toBe('feat: alpha (prepared)\n');
    // The trailers changed since (one more refactor): the prepared message no longer fits.
    writeFileSync(join(wt, 'beta.txt'), 'beta\n');
    await commitStepOnly(flowCtx(wt), { ...base(wt, attempt, branch), refactors: ['rename x y'], prepared: marked });
    expect(git(wt, 'log', '-1', '--format=%B')).toBe(
      'feat: alpha\n\nTug-Step: step-1\nTug-Plan: .tugtool/tugplan-demo.md\nTug-Refactor: rename x y\n\n',
    );
  });
});

describe("the driver's commit", () => {
  it('commits, changes or not, without listing the staged files; tugcode commit lists them', async () => {
    const { wt, attempt, branch } = await setUp();
    const quiet = await commitStepOnly(flowCtx(wt), base(wt, attempt, branch));
    expect(quiet).toEqual({
      commit_hash: git(wt, 'rev-parse', 'HEAD').trim(),
      branch,
      log_entry_path: '.tugtool/implementation-log/demo/step-1.md',
    });
    const files = git(wt, 'show', '--name-only', '--format=', 'HEAD').trim().split('\n').sort();
    expect(files).toEqual(['.tugtool/implementation-log/demo/step-1.md', 'alpha.txt'].sort());
    // With nothing new it still commits (the step's commit records the step).
    const again = await commitStepOnly(flowCtx(wt), base(wt, attempt, branch));
    expect(again.commit_hash).not.toBe(quiet.commit_hash);
    expect(git(wt, 'rev-parse', 'HEAD~1').trim()).toBe(quiet.commit_hash);
    writeFileSync(join(wt, 'beta.txt'), 'beta\n');
    const cli = { worktree: wt, plan: PLAN_PATH, step: 'step-1', message: 'feat: beta', attempt };
    const listed = await commitStep(flowCtx(wt), cli);
    expect(listed.files_staged).toEqual(['.tugtool/implementation-log/demo/step-1.md', 'beta.txt'].sort());
  });
});
