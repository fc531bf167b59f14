import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { git } from '../helpers/repo.js';
import { CLI } from '../helpers/cli.js';
import { DEMO_PATH, at, dbPathOf, dump, sql } from './helpers.js';
import { cliRepo, refusedCli, st, stText } from './cli-helpers.js';

describe('tugcode state (CLI contract)', () => {
  it('runs a step from claim to completion with every output matching its schema', () => {
    const { root, w1, w2 } = cliRepo();
    expect(readFileSync(join(root, '.gitignore'), 'utf8')).toContain('.tugtool/state.db-shm');
    const c = st(root, ['claim', 'demo', '--worktree', w1, '--lease-duration', '600']).json;
    expect(c).toMatchObject({
      claimed: true,
      step_anchor: 'step-0',
      attempt: 1,
      lease_expires_at: at(600),
      integration_branch: null,
    });
    expect(st(root, ['claim', DEMO_PATH, '--worktree', w2]).json).toMatchObject({
      claimed: false,
      reason: 'no_ready_steps',
      claimed_steps: ['step-0'],
    });
    expect(st(root, ['start', 'demo', 'step-0', '--worktree', w1, '--attempt', '1']).json).toMatchObject({
      started: true,
      already_started: false,
    });
    expect(st(root, ['heartbeat', 'demo', '#step-0', '--worktree', w1], { now: at(60) }).json).toMatchObject({
      renewed: true,
      lease_expires_at: at(60 + 7200),
    });
    const u = st(root, [
      'update',
      'demo',
      'step-0',
      '--worktree',
      w1,
      '--task',
      '0',
      'completed',
      '--task',
      '1:in_progress',
      '--test',
      '0',
      'deferred',
      '--reason',
      'no fixture yet',
    ]).json;
    expect(u).toMatchObject({
      updated: 3,
      tasks: { open: 0, in_progress: 1, completed: 1, deferred: 0 },
      tests: { deferred: 1 },
    });
    const b = st(root, ['update', 'demo', 'step-0', '--worktree', w1, '--batch'], {
      input: '[{"kind":"checkpoint","ordinal":1,"status":"deferred","reason":"manual"}]',
    }).json;
    expect(b.checkpoints).toEqual({ open: 1, in_progress: 0, completed: 0, deferred: 1 });
    // --items: the --batch document inline, with per-item flags; malformed JSON changes nothing.
    const inline = ['update', 'demo', 'step-0', '--worktree', w1, '--items'];
    const i = st(root, [
      ...inline,
      '[{"kind":"task","ordinal":1,"status":"completed"}]',
      '--checkpoint',
      '0:in_progress',
    ]);
    expect(i.json).toMatchObject({ updated: 2, tasks: { completed: 2 }, checkpoints: { in_progress: 1, deferred: 1 } });
    const before = dump(dbPathOf(root));
    for (const bad of ['not json', '', '[{"kind":"task","ordinal":0}]']) {
      const r = st(root, [...inline, bad]);
      expect(r.json.error.code, bad).toBe('InvalidBatch');
    }
    expect(st(root, [...inline, '[]', '--batch'], { input: '[]' }).json.error.code).toBe('InvalidArgument');
    expect(dump(dbPathOf(root))).toEqual(before);
    expect(st(root, ['update', 'demo', 'step-0', '--worktree', w1, '--complete-remaining']).json.updated).toBe(1);
    const a = st(
      root,
      ['artifact', 'demo', 'step-0', '--worktree', w1, '--kind', 'coder_report', '--summary-file', '-'],
      { input: '## Done\n\n- all good\n' },
    ).json;
    expect(a).toMatchObject({ recorded: true, kind: 'coder_report', artifact_id: 1, truncated: false });
    git(w1, 'commit', '-q', '--allow-empty', '-m', 'feat: client');
    const head = git(w1, 'rev-parse', 'HEAD').trim();
    const done = st(root, ['complete', 'demo', 'step-0', '--worktree', w1, '--commit', 'HEAD']).json;
    expect(done).toMatchObject({
      completed: true,
      commit_hash: head,
      completed_via: 'complete',
      remaining_steps: 2,
      already_completed: false,
    });
    const again = st(root, ['complete', 'demo', 'step-0', '--worktree', w2]).json;
    expect(again).toMatchObject({ already_completed: true, commit_hash: head });
  });

  it('releases, fails and resets through the CLI', () => {
    const { root, w1 } = cliRepo();
    st(root, ['claim', 'demo', '--worktree', w1]);
    expect(st(root, ['release', 'demo', 'step-0', '--worktree', w1]).json).toMatchObject({
      released: true,
      step_anchor: 'step-0',
    });
    st(root, ['claim', 'demo', '--worktree', w1]);
    expect(st(root, ['fail', 'demo', 'step-0', '--worktree', w1, '--reason', 'tests red']).json).toMatchObject({
      failed_attempt: true,
      attempt: 2,
      failures: 1,
      step_status: 'pending',
    });
    expect(st(root, ['reset', 'demo', 'step-0']).json).toEqual(
      expect.objectContaining({ reset: true, previous_status: 'pending' }),
    );
    // The attempt is a fencing token: reset zeroes the failures but never lowers it.
    expect(sql(root, "SELECT attempt, failures FROM steps WHERE anchor = 'step-0'")).toEqual([
      { attempt: 2, failures: 0 },
    ]);
  });

  it('resets a live claim only with --force, names its owner, and fences the stale attempt off', () => {
    const { root, w1 } = cliRepo();
    expect(st(root, ['claim', 'demo', '--worktree', w1]).json).toMatchObject({ attempt: 1 });
    const refused = refusedCli(root, ['reset', 'demo', 'step-0'], 'InvalidTransition', 4);
    expect(refused.json.error.details).toMatchObject({ claimed_by: w1, lease_expires_at: expect.any(String) });
    expect(refused.json.error.message).toContain(w1);
    expect(st(root, ['reset', 'demo', 'step-0', '--force']).json).toEqual(
      expect.objectContaining({ reset: true, previous_status: 'claimed', previous_owner: w1 }),
    );
    expect(stText(root, ['reset', 'demo', 'step-0']).stdout).toContain('Reset step-0 (was pending)');
    // The same worktree claims again: a new attempt, and the holder of attempt 1 no longer matches.
    expect(st(root, ['claim', 'demo', '--worktree', w1]).json).toMatchObject({ step_anchor: 'step-0', attempt: 2 });
    refusedCli(root, ['heartbeat', 'demo', 'step-0', '--worktree', w1, '--attempt', '1'], 'AttemptMismatch', 4);
    refusedCli(root, ['start', 'demo', 'step-0', '--worktree', w1, '--attempt', '1'], 'AttemptMismatch', 4);
  });

  it('answers the read-only commands: show, ready, log, list, graph', () => {
    const { root, w1 } = cliRepo();
    st(root, ['claim', 'demo', '--worktree', w1]);
    const show = st(root, ['show', 'demo', '--items', 'all']).json;
    expect(show.plans[0].steps).toHaveLength(5);
    expect(show.plans[0].steps[0]).toMatchObject({ claimed_by: w1, status: 'claimed' });
    expect(st(root, ['show']).json.plans).toHaveLength(1);
    expect(
      st(root, ['show', 'demo', '--step', 'step-1', '--items', 'none']).json.plans[0].steps.map(
        (s: { anchor: string }) => s.anchor,
      ),
    ).toEqual(['step-1', 'step-1-1', 'step-1-2']);
    const text = stText(root, ['show', 'demo'], { now: at(15 * 60) });
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('Lease: expires in 1h 45m');
    expect(text.stdout).not.toContain('\u001b[');
    expect(st(root, ['ready', 'demo']).json).toMatchObject({
      all_steps: ['step-0', 'step-1', 'step-2'],
      claimed_steps: ['step-0'],
      blocked_steps: ['step-1', 'step-2'],
      ready_steps: [],
    });
    const log = st(root, ['log', 'demo', '--limit', '1']).json;
    expect(log.events).toHaveLength(1);
    expect(log.events[0]).toMatchObject({
      command: 'state claim',
      actor: w1,
      step_anchor: 'step-0',
      details: { claimed: true },
    });
    expect(st(root, ['log', '--after-id', '0']).json.next_after_id).toBe(2);
    expect(st(root, ['list']).json.plans).toEqual([
      {
        plan_path: DEMO_PATH,
        status: 'active',
        steps_completed: 0,
        steps_total: 3,
        items_completed: 0,
        items_total: 20,
        items_deferred: 0,
        claimed_steps: ['step-0'],
      },
    ]);
    const g = st(root, ['graph', 'demo', '--format', 'dot']).json;
    expect(g.edges).toContainEqual(['step-0', 'step-1']);
    expect(g.text).toMatch(/^digraph/);
    expect(st(root, ['graph', 'demo']).json.text).toMatch(/^flowchart TD/);
  });

  it('reconciles from commits with trailers and prunes plans whose file is gone', () => {
    const { root } = cliRepo();
    git(root, 'commit', '-q', '--allow-empty', '-m', `feat: client\n\nTug-Step: step-0\nTug-Plan: ${DEMO_PATH}`);
    const r = st(root, ['reconcile', 'demo']).json;
    expect(r.reconciled.map((x: { step_anchor: string }) => x.step_anchor)).toEqual(['step-0']);
    expect(st(root, ['reconcile', 'demo', '--ref', 'HEAD', '--all-branches']).json.reconciled).toEqual([]);
    expect(st(root, ['prune', '--dry-run']).json).toEqual(expect.objectContaining({ pruned: [], dry_run: true }));
  });

  it('reports read-only results without creating state.db', () => {
    const { root } = cliRepo();
    rmSync(join(root, '.tugtool', 'state.db'));
    expect(st(root, ['show']).json.plans).toEqual([]);
    expect(st(root, ['list']).json.plans).toEqual([]);
    expect(st(root, ['log']).json.events).toEqual([]);
    expect(existsSync(join(root, '.tugtool', 'state.db'))).toBe(false);
  });

  it('redraws with --watch until interrupted, then exits 130', async () => {
    const { root } = cliRepo();
    const p = spawn(process.execPath, [CLI, 'state', 'show', '--watch', '0.2'], {
      cwd: root,
      env: { ...process.env, NODE_ENV: 'test', NO_COLOR: '1' },
    });
    let out = '';
    const code = await new Promise<number | null>((resolve) => {
      p.stdout.on('data', (d) => {
        out += d;
        // Interrupt once two frames were drawn (no timing assumption beyond "it keeps redrawing").
        if ((out.match(/Overall:/g) ?? []).length >= 2) p.kill('SIGINT');
      });
      p.on('close', (c) => resolve(c));
    });
    expect(code).toBe(130);
    expect(out).toContain('Plan: .tugtool/tugplan-demo.md [active]');
  });

  it('names the integration branch and its tip, from loose and packed refs', () => {
    const { root, w1, w2 } = cliRepo();
    git(root, 'branch', 'tugplan/demo');
    const tip = git(root, 'rev-parse', 'tugplan/demo').trim();
    expect(st(root, ['claim', 'demo', '--worktree', w1]).json).toMatchObject({
      integration_branch: 'tugplan/demo',
      integration_tip: tip,
    });
    git(root, 'pack-refs', '--all');
    expect(st(root, ['claim', 'demo', '--worktree', w1]).json).toMatchObject({ resumed: true, integration_tip: tip });
    expect(st(root, ['claim', 'demo', '--worktree', w2]).json.claimed).toBe(false);
  });

  it('lets another worktree take over an expired lease (time set with TUGCODE_NOW)', () => {
    const { root, w1, w2 } = cliRepo();
    st(root, ['claim', 'demo', '--worktree', w1, '--lease-duration', '60']);
    expect(st(root, ['claim', 'demo', '--worktree', w2], { now: at(60) }).json.claimed).toBe(false);
    const t = st(root, ['claim', 'demo', '--worktree', w2], { now: at(61) }).json;
    expect(t).toMatchObject({
      claimed: true,
      step_anchor: 'step-0',
      reclaimed_from_expired: true,
      previous_owner: w1,
      attempt: 2,
      failures: 1,
    });
    const e = st(root, ['heartbeat', 'demo', 'step-0', '--worktree', w1], { now: at(62) });
    expect([e.json.error.code, e.code]).toEqual(['LeaseExpired', 4]);
  });
});
