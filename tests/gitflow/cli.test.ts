/**
 * The contract of the git commands as real processes of the built CLI (`npx tsc -p tsconfig.build.json`
 * first): every JSON output is validated by its zod schema, every error code by code, exit code and an
 * unchanged repository. Setup runs in-process; only the command under test is a process.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { doctorFailedDetails } from '../../src/contract/schemas/git.js';
import { createWorktree } from '../../src/gitflow/worktree.js';
import { checkSchema, expectError, runCli, runJson } from '../helpers/cli.js';
import { git, tempDir, writeFiles } from '../helpers/repo.js';
import { finishPlan, flowCtx, PLAN, PLAN_PATH, planRepo, snapshot, T0, workOn } from './helpers.js';

const env = { TUGCODE_NOW: T0 };

describe('worktree create / list (CLI)', () => {
  let root: string;
  beforeAll(() => {
    root = planRepo();
    writeFiles(root, { '.tugtool/tugplan-broken.md': '## Phase: nothing\n\nno steps here\n' });
    git(root, 'add', '-A');
    git(root, 'commit', '-q', '-m', 'broken plan');
  });

  it('creates a worktree and prints the CreateData fields', () => {
    const r = runJson('worktree create', ['worktree', 'create', 'demo'], { cwd: root, env });
    expect(r.json).toMatchObject({
      worktree_path: join(root, '.tugtree', 'tugplan__demo--20260301-100000'),
      branch_name: 'tugplan/demo--20260301-100000',
      base_branch: 'main',
      plan_path: PLAN_PATH,
      all_steps: ['step-1', 'step-2'],
      ready_steps: ['step-1'],
      state_initialized: true,
      reused: false,
    });
  });

  it('lists it (read-only)', () => {
    const before = snapshot(root);
    const r = runJson('worktree list', ['worktree', 'list'], { cwd: root, env });
    expect(r.json.worktrees).toHaveLength(1);
    expect(r.json.worktrees[0]).toMatchObject({
      branch: 'tugplan/demo--20260301-100000',
      plan_path: PLAN_PATH,
      dirty: false,
      missing: false,
      claimed_steps: [],
    });
    expect(snapshot(root)).toBe(before);
  });

  it.each([
    ['WorktreeExists', 4, ['worktree', 'create', 'demo']],
    ['InvalidArgument', 2, ['worktree', 'create', 'demo', '--new', '--base', 'no-such-branch']],
    ['InvalidArgument', 2, ['worktree', 'create', '../../outside/tugplan-x.md']],
    ['PlanInvalid', 4, ['worktree', 'create', 'broken']],
    ['PlanNotFound', 3, ['worktree', 'create', 'nope']],
  ] as const)('refuses with %s (exit %i) and changes nothing: %j', (code, exit, args) => {
    const before = snapshot(root);
    expectError(
      runJson('worktree create', [...args], { cwd: root, env: { TUGCODE_NOW: '2026-03-01T11:00:00.000Z' } }),
      code,
      exit,
    );
    expect(snapshot(root)).toBe(before);
  });

  it('refuses PlanNotCommitted for a plan only in the work tree', () => {
    writeFiles(root, { '.tugtool/tugplan-fresh.md': PLAN });
    const before = snapshot(root);
    const r = runJson('worktree create', ['worktree', 'create', 'fresh'], { cwd: root, env });
    expectError(r, 'PlanNotCommitted', 4);
    expect(r.json.error.hint).toBe('git add .tugtool/tugplan-fresh.md && git commit');
    expect(snapshot(root)).toBe(before);
  });

  it('refuses a git older than 2.38 with GitError, creating nothing', () => {
    const bin = tempDir();
    const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
    writeFileSync(
      join(bin, 'git'),
      `#!/bin/sh\nif [ "$1" = "--version" ]; then echo "git version 2.30.1"; exit 0; fi\nexec ${realGit} "$@"\n`,
    );
    chmodSync(join(bin, 'git'), 0o755);
    const before = snapshot(root);
    const r = runJson('worktree create', ['worktree', 'create', 'demo', '--new'], {
      cwd: root,
      env: { ...env, PATH: `${bin}:${process.env.PATH}` },
    });
    expectError(r, 'GitError', 10);
    expect(r.json.error.details).toMatchObject({ found: '2.30.1', required: '2.38.0' });
    expect(snapshot(root)).toBe(before);
  });
});

describe('commit (CLI)', () => {
  let root: string;
  let wt: string;
  beforeAll(async () => {
    root = planRepo();
    wt = (await createWorktree(flowCtx(root), { plan: 'demo' })).worktree_path;
  });

  it('commits a step read from --message-file - and completes it', async () => {
    const attempt = await workOn(flowCtx(root), wt, 'step-1');
    writeFiles(wt, { 'a.txt': 'a\n' });
    const message = 'feat: alpha ✓\n\nmulti-line\nbody\n';
    const r = runJson(
      'commit',
      ['commit', '--plan', 'demo', '--step', 'step-1', '--message-file', '-', '--attempt', String(attempt)],
      { cwd: wt, env, input: message },
    );
    expect(r.json).toMatchObject({
      committed: true,
      state_updated: true,
      state_update_failed: false,
      state_error: null,
      files_staged: ['.tugtool/implementation-log/demo/step-1.md', 'a.txt'],
    });
    expect(git(wt, 'log', '-1', '--format=%B').trim()).toBe(
      'feat: alpha ✓\n\nmulti-line\nbody\n\nTug-Step: step-1\nTug-Plan: .tugtool/tugplan-demo.md',
    );
  });

  it('exits 0 with state_update_failed when completion refuses', () => {
    writeFiles(wt, { 'b.txt': 'b\n' });
    const r = runJson(
      'commit',
      ['commit', '--worktree', wt, '--plan', 'demo', '--step', 'step-2', '--message', 'feat: beta'],
      { cwd: root, env },
    );
    expect(r.json).toMatchObject({ committed: true, state_update_failed: true, state_failure_reason: 'ownership' });
    expect(r.json.state_error.error.code).toBe('NotOwner');
  });

  it.each([
    [
      'NothingToCommit',
      4,
      (w: string) => ['commit', '--worktree', w, '--plan', 'demo', '--step', 'step-2', '--message', 'x'],
    ],
    ['MainCheckoutRefused', 4, () => ['commit', '--plan', 'demo', '--step', 'step-2', '--message', 'x']],
    [
      'StepNotFound',
      3,
      (w: string) => ['commit', '--worktree', w, '--plan', 'demo', '--step', 'step-9', '--message', 'x'],
    ],
    [
      'WorktreeNotFound',
      3,
      () => ['commit', '--worktree', '/', '--plan', 'demo', '--step', 'step-2', '--message', 'x'],
    ],
    [
      'InvalidArgument',
      2,
      (w: string) => [
        'commit',
        '--worktree',
        w,
        '--plan',
        'demo',
        '--step',
        'step-2',
        '--message',
        'x',
        '--attempt',
        '-1',
      ],
    ],
  ] as const)('refuses with %s (exit %i) and changes nothing', (code, exit, args) => {
    if (code !== 'NothingToCommit') writeFiles(wt, { 'c.txt': 'c\n' });
    const before = snapshot(root);
    expectError(runJson('commit', args(wt), { cwd: root, env }), code, exit);
    expect(snapshot(root)).toBe(before);
  });
});

describe('worktree remove, merge, status, doctor (CLI)', () => {
  let root: string;
  let done: Awaited<ReturnType<typeof finishPlan>>;
  let spare: string;
  beforeAll(async () => {
    root = planRepo();
    done = await finishPlan(root, [{ 'README.md': 'plan edit\n' }, {}]);
    spare = (await createWorktree(flowCtx(root, '2026-03-01T10:30:00.000Z'), { plan: 'demo', new: true }))
      .worktree_path;
  });

  it('status and doctor succeed and are read-only', () => {
    const before = snapshot(root);
    const s = runJson('status', ['status'], { cwd: root, env });
    expect(s.json.plans).toEqual([
      {
        plan_path: PLAN_PATH,
        source: 'state',
        status: 'done',
        steps_completed: 2,
        steps_total: 2,
        percent: 100,
        claimed_steps: [],
        failed_steps: [],
        needs_human_steps: [],
        approved_steps: [],
        revised_steps: [],
        usage: null,
        run_driver: null,
        last_run: null,
        plan_error: null,
        structure_changed: false,
      },
    ]);
    expectError(runJson('status', ['status', 'nope'], { cwd: root, env }), 'PlanNotFound', 3);
    const d = runJson('doctor', ['doctor'], { cwd: root, env });
    expect(d.json.summary.fail).toBe(0);
    expect(snapshot(root)).toBe(before);
  });

  it('doctor fails with DoctorFailed (exit 4) and every check in details', () => {
    git(root, 'add', '-f', '.tugtool/state.db');
    try {
      const r = runJson('doctor', ['doctor'], { cwd: root, env });
      expectError(r, 'DoctorFailed', 4);
      checkSchema(doctorFailedDetails, r.json.error.details);
    } finally {
      git(root, 'rm', '-q', '--cached', '.tugtool/state.db');
    }
  });

  it.each([
    ['WorktreeNotFound', 3, () => ['worktree', 'remove', 'no-such-tree']],
    ['WorktreeUnmerged', 4, () => ['worktree', 'remove', done.wt]],
  ] as const)('worktree remove refuses with %s (exit %i) and changes nothing', (code, exit, args) => {
    const before = snapshot(root);
    expectError(runJson('worktree remove', [...args()], { cwd: root, env }), code, exit);
    expect(snapshot(root)).toBe(before);
  });

  it('merge refuses a conflict with MergeConflict and leaves the repository byte-identical', () => {
    writeFiles(root, { 'README.md': 'main edit\n' });
    git(root, 'commit', '-q', '-am', 'main edit');
    const before = snapshot(root);
    const r = runJson('merge', ['merge', 'demo', '--branch', done.branch], { cwd: root, env });
    expectError(r, 'MergeConflict', 4);
    expect(r.json.error.details.files).toEqual(['README.md']);
    expect(snapshot(root)).toBe(before);
    git(root, 'reset', '-q', '--hard', 'HEAD~1');
  });

  it('merge refuses CommitNotIntegrated for a branch without the step commits', () => {
    const branch = git(spare, 'branch', '--show-current').trim();
    const before = snapshot(root);
    expectError(runJson('merge', ['merge', 'demo', '--branch', branch], { cwd: root, env }), 'CommitNotIntegrated', 4);
    expect(snapshot(root)).toBe(before);
  });

  it('worktree remove --force removes the spare worktree; merge --dry-run then merge finish the plan', () => {
    const rm = runJson('worktree remove', ['worktree', 'remove', spare, '--force'], { cwd: root, env });
    expect(rm.json).toMatchObject({ removed: true, branch_deleted: true, forced: true });
    const dry = runJson('merge', ['merge', 'demo', '--dry-run'], { cwd: root, env });
    expect(dry.json).toMatchObject({ merged: false, dry_run: true, steps_included: ['step-1', 'step-2'] });
    const m = runJson('merge', ['merge', 'demo'], { cwd: root, env });
    expect(m.json).toMatchObject({ merged: true, branches_deleted: [done.branch], worktrees_removed: [done.wt] });
  });

  it('merge refuses PlanIncomplete and PlanNotInitialized', async () => {
    const other = planRepo();
    expectError(runJson('merge', ['merge', 'demo'], { cwd: other, env }), 'PlanNotInitialized', 3);
    await createWorktree(flowCtx(other), { plan: 'demo' });
    const before = snapshot(other);
    expectError(runJson('merge', ['merge', 'demo'], { cwd: other, env }), 'PlanIncomplete', 4);
    expect(snapshot(other)).toBe(before);
  });
});

describe('worktree remove refusals (CLI)', () => {
  it('refuses WorktreeDirty and WorktreeHasClaims, changing nothing', async () => {
    const root = planRepo();
    const wt = (await createWorktree(flowCtx(root), { plan: 'demo' })).worktree_path;
    await workOn(flowCtx(root), wt, 'step-1');
    let before = snapshot(root);
    expectError(runJson('worktree remove', ['worktree', 'remove', wt], { cwd: root, env }), 'WorktreeHasClaims', 4);
    expect(snapshot(root)).toBe(before);
    writeFiles(wt, { 'dirty.txt': 'x' });
    before = snapshot(root);
    expectError(runJson('worktree remove', ['worktree', 'remove', wt], { cwd: root, env }), 'WorktreeDirty', 4);
    expect(snapshot(root)).toBe(before);
  });

  it('WorktreeHasClaims names the commands that clear the way, literally; for a tree gone from disk only --force', async () => {
    const root = planRepo();
    const wt = (await createWorktree(flowCtx(root), { plan: 'demo' })).worktree_path;
    await workOn(flowCtx(root), wt, 'step-1');
    const r = runJson('worktree remove', ['worktree', 'remove', wt], { cwd: root, env });
    expectError(r, 'WorktreeHasClaims', 4);
    expect(r.json.error.hint).toBe(
      `tugcode state release ${PLAN_PATH} step-1 --worktree ${wt}, then tugcode worktree remove ${wt} again; ` +
        `or tugcode worktree remove ${wt} --force (releases them)`,
    );
    const moved = join(tempDir(), 'away');
    renameSync(wt, moved);
    const gone = runJson('worktree remove', ['worktree', 'remove', wt], { cwd: root, env });
    expectError(gone, 'WorktreeHasClaims', 4);
    expect(gone.json.error.hint).toBe(
      `tugcode worktree remove ${wt} --force (the tree is gone from disk; releases them)`,
    );
    renameSync(moved, wt);
    expect(runCli(['state', 'release', PLAN_PATH, 'step-1', '--worktree', wt], { cwd: root, env }).code).toBe(0);
    expect(runCli(['worktree', 'remove', wt], { cwd: root, env }).code).toBe(0);
  });
});
