/**
 * The plan-integration contract through real CLI processes (issue 6, item 3; docs/kernel.md §7): a step
 * declaring `**Refactors:**` is stored by `state init`, executed by `refactor run-step` in a worktree,
 * blocks strict completion while open, lands in the commit as `Tug-Refactor` trailers, and comes back
 * from a fresh state.db through `state reconcile`.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectError, runJson } from '../helpers/cli.js';
import { git } from '../helpers/repo.js';
import { dump, sql } from '../state/helpers.js';
import { MISSING, PLAN_PATH, RENAME, RENAME_HELPER, runRefactorCli, setup } from './helpers.js';

const dbOf = (root: string) => join(root, '.tugtool', 'state.db');

describe('refactor run-step (CLI)', () => {
  it('stores, runs, gates completion, commits with a Tug-Refactor trailer, and reconciles into a fresh database', () => {
    const { root, wt, branch } = setup([RENAME]);
    const init = runJson('state init', ['state', 'init', 'demo'], { cwd: root });
    expect(init.json.refactors_created).toBe(1);
    const shown = runJson('state show', ['state', 'show', 'demo'], { cwd: root });
    expect(shown.json.plans[0].steps[0].refactors).toEqual([
      { ordinal: 0, op_text: RENAME, status: 'open', exit_code: null, snapshot_before: null, snapshot_after: null },
    ]);
    runJson('state claim', ['state', 'claim', 'demo', '--worktree', wt], { cwd: root });
    runJson('state update', ['state', 'update', 'demo', 'step-1', '--worktree', wt, '--complete-remaining'], {
      cwd: root,
    });

    // Completion is refused while the row is open.
    const refused = runJson('state complete', ['state', 'complete', 'demo', 'step-1', '--worktree', wt], { cwd: root });
    expectError(refused, 'RefactorsIncomplete', 4);
    expect(refused.json.error.details.open_refactors).toEqual([{ ordinal: 0, op_text: RENAME, status: 'open' }]);

    const r = runRefactorCli(['run-step', 'demo', 'step-1', '--worktree', wt], root);
    expect(r.code).toBe(0);
    expect(r.json.summary).toEqual({ total: 1, executed: 1, applied: 1, failed: 0, skipped: 0, open: 0 });
    const op = r.json.ops[0];
    expect(op).toMatchObject({
      ordinal: 0,
      status: 'applied',
      exit_code: 0,
      attempts: 1,
      verification: { mode: 'syntax', status: 'passed' },
      error: null,
    });
    expect(op.summary).toMatchObject({ files_changed: 2, edits_count: 3 });
    expect(r.json.snapshot_id).toBe(op.snapshot_after);
    expect(readFileSync(join(wt, 'src/main.ts'), 'utf8')).toBe(
      "import { loadConfig, helper } from './util';\n\nexport const n = loadConfig('x') + helper();\n",
    );
    expect(readFileSync(join(root, 'src/main.ts'), 'utf8')).toContain('parseConfig'); // only W changed

    const [row] = sql<{ status: string; result_json: string; snapshot_before: string }>(
      root,
      'SELECT * FROM step_refactors',
    );
    expect(row!.status).toBe('applied');
    const result = JSON.parse(row!.result_json);
    expect(Object.keys(result)).toEqual([
      'op_hash',
      'files_written',
      'files_changed',
      'edits_count',
      'verification',
      'warnings',
      'duration_ms',
      'attempts',
    ]);
    expect(result).toMatchObject({
      op_hash: op.op_hash,
      files_written: ['src/main.ts', 'src/util.ts'],
      verification: { mode: 'syntax', status: 'passed', checks: [{ name: 'ts-syntax', status: 'passed' }] },
      attempts: 1,
    });
    const [artifact] = sql<{ kind: string; summary: string }>(root, 'SELECT kind, summary FROM step_artifacts');
    expect(artifact).toEqual({
      kind: 'refactor_report',
      summary: `rename-symbol files=2 edits=3 verify=syntax:passed ${op.snapshot_before}..${op.snapshot_after}`,
    });
    expect(sql(root, "SELECT command FROM events WHERE command LIKE 'refactor%'")).toEqual([
      { command: 'refactor run-step' },
      { command: 'refactor run-step' },
    ]);

    // The commit carries the trailer after Tug-Step and Tug-Plan; strict completion now passes.
    const c = runJson(
      'commit',
      ['commit', '--worktree', wt, '--plan', 'demo', '--step', 'step-1', '--message', 'refactor: rename parseConfig'],
      { cwd: root },
    );
    expect(c.json).toMatchObject({ committed: true, state_updated: true, state_update_failed: false });
    const trailers = git(wt, 'log', '-1', '--format=%(trailers)').trim().split('\n');
    expect(trailers).toEqual([
      'Tug-Step: step-1',
      `Tug-Plan: ${PLAN_PATH}`,
      `Tug-Refactor: ${op.op_hash} ${op.snapshot_before}..${op.snapshot_after}`,
    ]);

    // A fresh database: init + reconcile reconstructs the row as applied, with the trailer's snapshots.
    for (const f of ['state.db', 'state.db-wal', 'state.db-shm']) rmSync(join(root, '.tugtool', f), { force: true });
    runJson('state init', ['state', 'init', 'demo'], { cwd: root });
    const rec = runJson('state reconcile', ['state', 'reconcile', 'demo', '--ref', branch], { cwd: root });
    expect(rec.json.reconciled).toMatchObject([{ step_anchor: 'step-1', previous_status: 'pending' }]);
    const again = runJson('state show', ['state', 'show', 'demo'], { cwd: root });
    expect(again.json.plans[0].steps[0].refactors).toEqual([
      {
        ordinal: 0,
        op_text: RENAME,
        status: 'applied',
        exit_code: 0,
        snapshot_before: op.snapshot_before,
        snapshot_after: op.snapshot_after,
      },
    ]);
    // Idempotent: a second reconcile changes nothing.
    const before = dump(dbOf(root));
    runJson('state reconcile', ['state', 'reconcile', 'demo', '--ref', branch], { cwd: root });
    expect(dump(dbOf(root))).toEqual(before);
  });

  it('stops at a failing row (exit 3, later rows open), refuses skipping an applied row, skips the failed one and resumes', () => {
    const { root, wt } = setup([RENAME, MISSING, RENAME_HELPER]);
    runJson('state init', ['state', 'init', 'demo'], { cwd: root });
    runJson('state claim', ['state', 'claim', 'demo', '--worktree', wt], { cwd: root });

    const r = runRefactorCli(['run-step', 'demo', 'step-1', '--worktree', wt], root);
    expect(r.code).toBe(3);
    expect(r.json.error).toMatchObject({
      code: 'SymbolNotFound',
      details: { selector: 'src/util.ts::nothingHere', reason: 'no_match' },
    });
    expect(r.json.ops.map((o: { status: string }) => o.status)).toEqual(['applied', 'failed', 'open']);
    expect(r.json.ops[1]).toMatchObject({
      exit_code: 3,
      attempts: 1,
      snapshot_before: r.json.ops[0].snapshot_after,
      snapshot_after: null,
      error: { code: 'SymbolNotFound' },
    });
    expect(r.json.summary).toEqual({ total: 3, executed: 2, applied: 1, failed: 1, skipped: 0, open: 1 });
    expect(readFileSync(join(wt, 'src/util.ts'), 'utf8')).toContain('function helper'); // row 2 never ran
    const failed = sql<{ exit_code: number; result_json: string }>(
      root,
      'SELECT exit_code, result_json FROM step_refactors WHERE ordinal = 1',
    )[0]!;
    expect(failed.exit_code).toBe(3);
    expect(JSON.parse(failed.result_json).error).toMatchObject({
      code: 'SymbolNotFound',
      details: { reason: 'no_match' },
    });
    expect(sql(root, 'SELECT summary FROM step_artifacts ORDER BY id')[1]).toEqual({
      summary: expect.stringMatching(
        /^rename-symbol files=0 edits=0 verify=syntax:not_run snap_[0-9a-f]{12}\.\.- error=SymbolNotFound$/,
      ),
    });

    // An applied row cannot be skipped; nothing changes.
    const before = dump(dbOf(root));
    const no = runRefactorCli(['skip', 'demo', 'step-1', '--worktree', wt, '--ordinal', '0', '--reason', 'x'], root);
    expectError(no, 'InvalidTransition', 4);
    expect(dump(dbOf(root))).toEqual(before);

    const sk = runRefactorCli(
      ['skip', 'demo', 'step-1', '--worktree', wt, '--ordinal', '1', '--reason', 'the symbol is gone'],
      root,
    );
    expect(sk.json).toMatchObject({
      ordinal: 1,
      op_text: MISSING,
      previous_status: 'failed',
      skipped_reason: 'the symbol is gone',
      already_skipped: false,
    });
    const row1 = sql<{ status: string; result_json: string }>(
      root,
      'SELECT status, result_json FROM step_refactors WHERE ordinal = 1',
    )[0]!;
    expect(row1.status).toBe('skipped');
    expect(JSON.parse(row1.result_json).skipped_reason).toBe('the symbol is gone');
    expect(sql(root, "SELECT command FROM events WHERE command = 'refactor skip'")).toHaveLength(1);

    const r2 = runRefactorCli(['run-step', 'demo', 'step-1', '--worktree', wt], root);
    expect(r2.code).toBe(0);
    expect(r2.json.ops.map((o: { status: string }) => o.status)).toEqual(['applied', 'skipped', 'applied']);
    expect(r2.json.summary).toMatchObject({ executed: 1, applied: 2, skipped: 1, open: 0 });
    expect(readFileSync(join(wt, 'src/main.ts'), 'utf8')).toBe(
      "import { loadConfig, assist } from './util';\n\nexport const n = loadConfig('x') + assist();\n",
    );
    // Nothing left to do: a third run executes nothing.
    const r3 = runRefactorCli(['run-step', 'demo', 'step-1', '--worktree', wt], root);
    expect(r3.json.summary.executed).toBe(0);
  });

  it('refuses callers that do not own the step, stale attempts and bad arguments, changing nothing', () => {
    const { root, wt } = setup([RENAME]);
    runJson('state init', ['state', 'init', 'demo'], { cwd: root });
    runJson('state claim', ['state', 'claim', 'demo', '--worktree', wt], { cwd: root });
    const before = dump(dbOf(root));
    const files = readFileSync(join(wt, 'src/main.ts'), 'utf8');
    const cases: [string[], string, number][] = [
      [['run-step', 'demo', 'step-1', '--worktree', root], 'NotOwner', 4],
      [['run-step', 'demo', 'step-1', '--worktree', wt, '--attempt', '7'], 'AttemptMismatch', 4],
      [['run-step', 'demo', 'step-9', '--worktree', wt], 'StepNotFound', 3],
      [['run-step', 'nope', 'step-1', '--worktree', wt], 'PlanNotFound', 3],
      [['run-step', 'demo', 'step-1', '--worktree', join(root, 'no-such-dir')], 'WorktreeNotFound', 3],
      [['run-step', 'demo', 'step-1', '--worktree', wt, '--verify', 'bogus'], 'InvalidArgument', 2],
      [['run-step', 'demo', 'step-1', '--worktree', wt, '--apply'], 'InvalidArgument', 2],
      [['run-step', 'demo', '--worktree', wt], 'InvalidArgument', 2],
      [['skip', 'demo', 'step-1', '--worktree', root, '--ordinal', '0', '--reason', 'x'], 'NotOwner', 4],
      [['skip', 'demo', 'step-1', '--worktree', wt, '--ordinal', '5', '--reason', 'x'], 'InvalidArgument', 2],
      [['skip', 'demo', 'step-1', '--worktree', wt, '--ordinal', '0'], 'InvalidArgument', 2],
    ];
    for (const [args, code, exit] of cases) expectError(runRefactorCli(args, root), code, exit);
    expect(dump(dbOf(root))).toEqual(before);
    expect(readFileSync(join(wt, 'src/main.ts'), 'utf8')).toBe(files);
    expect(existsSync(join(wt, '.tug'))).toBe(false); // no kernel session was even opened
  });
});
