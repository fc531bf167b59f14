/**
 * A commit message made ahead (prepareMessage, the driver: while the implementer runs) is used by
 * commitStep only while its trailers still match; otherwise the commit makes its own, so a refactor
 * applied meanwhile still gets its Tug-Refactor trailer.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { commitStep, prepareMessage } from '../../src/gitflow/commit.js';
import { createWorktree } from '../../src/gitflow/worktree.js';
import { git } from '../helpers/repo.js';
import { flowCtx, PLAN_PATH, planRepo, workOn } from './helpers.js';

async function setUp() {
  const root = planRepo();
  const wt = (await createWorktree(flowCtx(root), { plan: 'demo' })).worktree_path;
  const attempt = await workOn(flowCtx(root), wt, 'step-1');
  writeFileSync(join(wt, 'alpha.txt'), 'alpha\n');
  return { root, wt, attempt };
}

const base = (wt: string, attempt: number) => ({
  worktree: wt,
  plan: PLAN_PATH,
  step: 'step-1',
  message: 'feat: alpha',
  attempt,
  commitOnly: true,
});

describe('prepareMessage', () => {
  it('makes exactly the message commitStep would write', async () => {
    const { wt, attempt } = await setUp();
    const p = await prepareMessage(flowCtx(wt), {
      worktree: wt,
      planPath: PLAN_PATH,
      step: 'step-1',
      message: 'feat: alpha',
      attempt,
    });
    await commitStep(flowCtx(wt), base(wt, attempt));
    expect(git(wt, 'log', '-1', '--format=%B')).toBe(p.message + '\n');
    expect(p.message).toBe('feat: alpha\n\nTug-Step: step-1\nTug-Plan: .tugtool/tugplan-demo.md\n');
  });

  it('is used while its trailers match, and made again when they changed', async () => {
    const { wt, attempt } = await setUp();
    const p = await prepareMessage(flowCtx(wt), {
      worktree: wt,
      planPath: PLAN_PATH,
      step: 'step-1',
      message: 'feat: alpha',
      attempt,
    });
    // A marked copy under the same key shows which message the commit took.
    const marked = { key: p.key, message: p.message.replace('feat: alpha', 'feat: alpha (prepared)') };
    await commitStep(flowCtx(wt), { ...base(wt, attempt), prepared: marked });
    expect(git(wt, 'log', '-1', '--format=%s')).toBe('feat: alpha (prepared)\n');
    // The trailers changed since (one more refactor): the prepared message no longer fits.
    writeFileSync(join(wt, 'beta.txt'), 'beta\n');
    await commitStep(flowCtx(wt), { ...base(wt, attempt), refactors: ['rename x y'], prepared: marked });
    expect(git(wt, 'log', '-1', '--format=%B')).toBe(
      'feat: alpha\n\nTug-Step: step-1\nTug-Plan: .tugtool/tugplan-demo.md\nTug-Refactor: rename x y\n\n',
    );
  });
});

describe('listStaged: false (the driver)', () => {
  it('commits the same files and leaves files_staged empty; by default they are listed', async () => {
    const { wt, attempt } = await setUp();
    const quiet = await commitStep(flowCtx(wt), { ...base(wt, attempt), listStaged: false });
    expect(quiet.files_staged).toEqual([]);
    const files = git(wt, 'show', '--name-only', '--format=', 'HEAD').trim().split('\n').sort();
    expect(files).toEqual(['.tugtool/implementation-log/demo/step-1.md', 'alpha.txt'].sort());
    writeFileSync(join(wt, 'beta.txt'), 'beta\n');
    const listed = await commitStep(flowCtx(wt), base(wt, attempt));
    expect(listed.files_staged).toEqual(['.tugtool/implementation-log/demo/step-1.md', 'beta.txt'].sort());
  });
});
