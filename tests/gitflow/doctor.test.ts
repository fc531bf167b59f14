import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { WarningSink } from '../../src/contract/envelope.js';
import { fixedClock, parseInstant } from '../../src/clock.js';
import { runDoctor, type DoctorCheck } from '../../src/gitflow/doctor.js';
import { planStatus } from '../../src/gitflow/status.js';
import { createWorktree } from '../../src/gitflow/worktree.js';
import { closeStateContext, fail, openStateContext } from '../../src/state/index.js';
import { git, tempRepo } from '../helpers/repo.js';
import { claimOnly, flowCtx, PLAN_PATH, planRepo, snapshot, T0 } from './helpers.js';

async function doctor(root: string, now = T0, env: NodeJS.ProcessEnv = {}) {
  return runDoctor({
    cwd: root,
    env: { ...process.env, NODE_ENV: 'test', ...env },
    clock: fixedClock(parseInstant(now)!),
    warnings: new WarningSink(),
    loadConfig: (repo) => loadConfig(repo.mainRoot, {}, new WarningSink()),
    kernel: false,
  });
}

const byName = (checks: DoctorCheck[]) => Object.fromEntries(checks.map((c) => [c.name, c]));

describe('tugcode doctor', () => {
  let root: string;
  let wtA: string;
  let wtB: string;

  beforeAll(async () => {
    root = planRepo();
    wtA = (await createWorktree(flowCtx(root), { plan: 'demo' })).worktree_path;
    wtB = (await createWorktree(flowCtx(root, '2026-03-01T10:01:00.000Z'), { plan: 'demo', new: true })).worktree_path;
  });

  it('passes a healthy repository, with a fix text on every check, and changes nothing', async () => {
    const before = snapshot(root);
    const d = await doctor(root);
    expect(d.summary.fail).toBe(0);
    expect(d.checks.every((c) => c.fix.length > 0)).toBe(true);
    expect(d.checks.map((c) => c.name)).toEqual([
      'git-version',
      'repo-found',
      'config',
      'tugtool-initialized',
      'state-db-opens',
      'state-db-writable',
      'state-db-integrity',
      'state-db-schema',
      'state-db-wal',
      'orphaned-plans',
      'unintegrated-step-commits',
      'expired-leases',
      'failed-steps',
      'dead-runs',
      'integration-targets',
      'state-files-untracked',
      'worktrees-present',
      'tugtree-registered',
      'worktrees-settled',
    ]);
    expect(snapshot(root)).toBe(before);
  });

  it('warns about an expired lease, then a failed step, each with its fix', async () => {
    await claimOnly(flowCtx(root), wtA, 'step-1');
    const later = '2026-03-01T13:00:00.000Z';
    expect(byName((await doctor(root, later)).checks)['expired-leases']).toMatchObject({
      status: 'warn',
      message: expect.stringContaining('step-1'),
      fix: expect.stringContaining('tugcode state reset <plan> <step>'),
    });
    // The owner gives up with max_attempts = 1: the step becomes failed.
    const ctx = flowCtx(root, later);
    const s = openStateContext({
      repoRoot: root,
      workTree: wtA,
      clock: ctx.clock,
      config: { ...ctx.config, state: { ...ctx.config.state, max_attempts: 1 } },
      warnings: ctx.warnings,
      command: 'test',
      mode: 'write',
      env: ctx.env,
    });
    try {
      expect(
        (await fail(s, { plan: PLAN_PATH, step: 'step-1', worktree: wtA, reason: 'tests keep failing' })).step_status,
      ).toBe('failed');
    } finally {
      await closeStateContext(s);
    }
    const c = byName((await doctor(root, later)).checks);
    expect(c['failed-steps']).toMatchObject({
      status: 'warn',
      message: expect.stringContaining('step-1 (tests keep failing)'),
      fix: expect.stringContaining(`tugcode state reset ${PLAN_PATH} step-1`),
    });
    expect(c['expired-leases']?.status).toBe('pass');
  });

  it('warns about a worktree missing on disk and a stray .tugtree directory', async () => {
    rmSync(wtB, { recursive: true, force: true });
    mkdirSync(join(root, '.tugtree', 'leftover'));
    const d = await doctor(root);
    const c = byName(d.checks);
    expect(c['worktrees-present']).toMatchObject({
      status: 'warn',
      message: expect.stringContaining(wtB),
      fix: expect.stringContaining('git worktree prune'),
    });
    expect(c['tugtree-registered']).toMatchObject({
      status: 'warn',
      message: expect.stringContaining('.tugtree/leftover'),
      fix: expect.stringContaining('rm -rf .tugtree/leftover'),
    });
    rmSync(join(root, '.tugtree', 'leftover'), { recursive: true });
  });

  it('fails with DoctorFailed when state.db is tracked by git, listing every check', async () => {
    git(root, 'add', '-f', '.tugtool/state.db');
    try {
      const err = await doctor(root).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toMatchObject({ code: 'DoctorFailed', exitCode: 4 });
      const details = (err as { details: { checks: DoctorCheck[]; summary: { fail: number } } }).details;
      expect(details.summary.fail).toBe(1);
      expect(byName(details.checks)['state-files-untracked']).toMatchObject({
        status: 'fail',
        fix: expect.stringContaining('git rm --cached .tugtool/state.db'),
      });
    } finally {
      git(root, 'rm', '-q', '--cached', '.tugtool/state.db');
    }
  });

  it('fails on a corrupt state.db with the recovery as its fix, and never overwrites it', async () => {
    const repo = planRepo();
    writeFileSync(join(repo, '.tugtool/state.db'), 'garbage, not sqlite');
    const err = (await doctor(repo).catch((e: unknown) => e)) as { code: string; details: { checks: DoctorCheck[] } };
    expect(err.code).toBe('DoctorFailed');
    expect(byName(err.details.checks)['state-db-opens']).toMatchObject({
      status: 'fail',
      fix: expect.stringContaining('tugcode state init <plan> and tugcode state reconcile <plan>'),
    });
    const { readFileSync } = await import('node:fs');
    expect(readFileSync(join(repo, '.tugtool/state.db'), 'utf8')).toBe('garbage, not sqlite');
  });

  it('never creates state.db', async () => {
    const repo = planRepo();
    await doctor(repo);
    expect(existsSync(join(repo, '.tugtool/state.db'))).toBe(false);
  });

  it('fails outside a repository and without .tugtool/', async () => {
    const plain = tempRepo();
    const err = (await doctor(plain).catch((e: unknown) => e)) as { code: string; details: { checks: DoctorCheck[] } };
    expect(byName(err.details.checks)['tugtool-initialized']).toMatchObject({ status: 'fail', fix: 'tugcode init' });
  });
});

describe('tugcode status', () => {
  it('reads progress from state.db, else from the checkboxes, and never creates state.db', async () => {
    const root = planRepo();
    const { writeFiles } = await import('../helpers/repo.js');
    writeFiles(root, {
      '.tugtool/tugplan-ticked.md': (await import('./helpers.js')).PLAN.replace(
        '- [ ] write alpha',
        '- [x] write alpha',
      ),
    });
    const before = await planStatus(flowCtx(root));
    expect(existsSync(join(root, '.tugtool/state.db'))).toBe(false);
    expect(before.plans).toEqual([
      {
        plan_path: PLAN_PATH,
        source: 'checkboxes',
        status: 'active',
        steps_completed: 0,
        steps_total: 2,
        percent: 0,
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
      {
        plan_path: '.tugtool/tugplan-ticked.md',
        source: 'checkboxes',
        status: 'active',
        steps_completed: 1,
        steps_total: 2,
        percent: 50,
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
    const wt = (await createWorktree(flowCtx(root), { plan: 'demo' })).worktree_path;
    await claimOnly(flowCtx(root), wt, 'step-1');
    const after = await planStatus(flowCtx(root), 'demo');
    expect(after.plans).toEqual([
      {
        plan_path: PLAN_PATH,
        source: 'state',
        status: 'active',
        steps_completed: 0,
        steps_total: 2,
        percent: 0,
        claimed_steps: ['step-1'],
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
    await expect(planStatus(flowCtx(root), 'nope')).rejects.toMatchObject({ code: 'PlanNotFound' });
  });
});
