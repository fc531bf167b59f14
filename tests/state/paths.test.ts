/** One state.db for the whole repository, whichever directory or worktree path a command starts from. */
import { mkdirSync, symlinkSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, tempDir } from '../helpers/repo.js';
import { DEMO, DEMO_PATH, planRepo } from './helpers.js';
import { addWorktree, st } from './cli-helpers.js';

describe('locating state.db and canonical owners', () => {
  it('reaches the same state.db from a subdirectory and from inside a linked worktree', () => {
    const root = planRepo();
    const w1 = addWorktree(root, 'one');
    mkdirSync(join(root, 'src', 'deep'), { recursive: true });
    expect(st(root, ['init', 'demo'], { cwd: join(root, 'src', 'deep') }).json.plan_path).toBe(DEMO_PATH);
    const c = st(root, ['claim', 'demo', '--worktree', '.'], { cwd: w1 }).json;
    expect(c).toMatchObject({ claimed: true, step_anchor: 'step-0' });
    const fromMain = st(root, ['show', 'demo']).json.plans[0].steps[0];
    expect(fromMain).toMatchObject({ status: 'claimed', claimed_by: w1 });
    mkdirSync(join(w1, 'lib'), { recursive: true });
    expect(st(root, ['ready', DEMO_PATH], { cwd: join(w1, 'lib') }).json.claimed_steps).toEqual(['step-0']);
  });

  it('names a plan by its absolute path inside another worktree, under .tugtree/ or elsewhere', () => {
    const root = planRepo();
    const elsewhere = addWorktree(root, 'one');
    const nested = join(root, '.tugtree', 'two');
    git(root, 'worktree', 'add', '-q', nested, '-b', 'wt-two');
    st(root, ['init', 'demo']);
    // From the main checkout, each worktree's copy of the plan is the same repo-relative plan (docs/output.md §5).
    for (const tree of [elsewhere, nested])
      expect(st(root, ['show', join(tree, DEMO_PATH)]).json.plans[0].plan_path).toBe(DEMO_PATH);
    const c = st(root, ['claim', join(nested, DEMO_PATH), '--worktree', nested]).json;
    expect(c).toMatchObject({ claimed: true, step_anchor: 'step-0' });
    // And from one worktree, the other's.
    expect(st(root, ['ready', join(nested, DEMO_PATH)], { cwd: elsewhere }).json.claimed_steps).toEqual(['step-0']);
    // A worktree of another repository is still outside this one.
    const other = planRepo();
    expect(st(root, ['show', join(other, DEMO_PATH)]).json.error).toMatchObject({ code: 'InvalidArgument' });
  });

  it('treats a symlink to a worktree and a relative path as the same owner', () => {
    const root = planRepo();
    const w1 = addWorktree(root, 'one');
    const link = join(tempDir(), 'link-to-one');
    symlinkSync(w1, link);
    st(root, ['init', 'demo']);
    st(root, ['claim', 'demo', '--worktree', w1]);
    expect(st(root, ['heartbeat', 'demo', 'step-0', '--worktree', link]).json.renewed).toBe(true);
    expect(st(root, ['claim', 'demo', '--worktree', link]).json).toMatchObject({
      resumed: true,
      step_anchor: 'step-0',
    });
    expect(st(root, ['start', 'demo', 'step-0', '--worktree', relative(root, link)]).json.started).toBe(true);
  });

  it('honours TUGCODE_STATE_DB', () => {
    const root = planRepo();
    const elsewhere = join(tempDir(), 'custom.db');
    const env = { TUGCODE_STATE_DB: elsewhere };
    st(root, ['init', 'demo'], { env });
    expect(st(root, ['list'], { env }).json.plans).toHaveLength(1);
    expect(st(root, ['list']).json.plans).toHaveLength(0);
  });

  it('names the TUGCODE_STATE_DB file, not "state.db", in what it refuses', () => {
    const root = planRepo({ [DEMO_PATH]: DEMO, '.tugtool/tugplan-two.md': DEMO });
    const elsewhere = join(tempDir(), 'custom.db');
    const env = { TUGCODE_STATE_DB: elsewhere };
    st(root, ['init', 'demo'], { env });
    for (const args of [
      ['show', 'two'],
      ['claim', 'two', '--worktree', root],
    ]) {
      const r = st(root, args, { env });
      expect(r.json.error.code).toBe('PlanNotInitialized');
      expect(r.json.error.message).toBe(`.tugtool/tugplan-two.md is not initialized in ${elsewhere}`);
    }
  });
});
