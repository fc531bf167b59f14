/**
 * run-step and the refactor rows in-process (docs/kernel.md §7.2–§7.6), as the driver calls them: the
 * discarded-attempt reset, pending-write recovery, --retry-failed, the automatic retry after exit 4,
 * Gate A, reconcile from trailers, the op_hash helper, compact results and slots.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openKernel } from '../../src/kernel/index.js';
import { opHashOf } from '../../src/kernel/prepare.js';
import { parseOp } from '../../src/kernel/cli/args.js';
import { tokenizeShell } from '../../src/kernel/opspec.js';
import { candidateOpHashes, opHashOfText } from '../../src/state/op-hash.js';
import { compactResult, RESULT_MAX_BYTES } from '../../src/refactor/result.js';
import { acquireSlot } from '../../src/refactor/slots.js';
import { release } from '../../src/state/release.js';
import { reconcile } from '../../src/state/reconcile.js';
import {
  recordRefactorResult,
  refactorScope,
  skipRefactor,
  writePending,
  type RefactorScope,
} from '../../src/state/refactors.js';
import { writeFiles } from '../helpers/repo.js';
import { sql } from '../state/helpers.js';
import { initAndClaim, MISSING, PLAN_PATH, RENAME, RENAME_HELPER, runStepLib, setup, withCtx } from './helpers.js';

type Row = {
  ordinal: number;
  status: string;
  snapshot_before: string | null;
  snapshot_after: string | null;
  exit_code: number | null;
  result_json: string | null;
};
const rows = (root: string) =>
  sql<Row>(
    root,
    'SELECT ordinal, status, snapshot_before, snapshot_after, exit_code, result_json FROM step_refactors ORDER BY step_anchor, ordinal',
  );
const result = (r: Row) => (r.result_json === null ? null : JSON.parse(r.result_json));

async function scopeOf(root: string, wt: string, step = 'step-1'): Promise<RefactorScope> {
  return withCtx(
    root,
    wt,
    {},
    async (ctx) => (await refactorScope(ctx, { plan: PLAN_PATH, step, worktree: wt })).scope,
  );
}

afterEach(() => {
  delete process.env.TUG_FAULT;
});

describe('refactor rows of a discarded attempt', () => {
  it('returns applied, failed and pending rows to open with the old result under previous; skipped rows stay skipped', async () => {
    const { root, wt } = setup([RENAME, MISSING, RENAME_HELPER, 'organize-imports --file src/main.ts']);
    await initAndClaim(root, wt);
    const scope = await scopeOf(root, wt);
    await withCtx(root, wt, { command: 'refactor run-step' }, async (ctx) => {
      const base = { snapshot_before: 'snap_aaaaaaaaaaaa', artifact: { summary: 'x' } };
      await recordRefactorResult(ctx, scope, {
        ...base,
        ordinal: 0,
        status: 'applied',
        snapshot_after: 'snap_bbbbbbbbbbbb',
        exit_code: 0,
        result: { op_hash: 'aaaaaaaaaaaa', attempts: 1 },
      });
      await recordRefactorResult(ctx, scope, {
        ...base,
        ordinal: 1,
        status: 'failed',
        snapshot_after: null,
        exit_code: 3,
        result: { op_hash: 'bbbbbbbbbbbb', error: { code: 'SymbolNotFound' } },
      });
      await writePending(ctx, scope, 2, {
        op_hash: 'cccccccccccc',
        snapshot_before: 'snap_bbbbbbbbbbbb',
        snapshot_after: 'snap_cccccccccccc',
        worktree: wt,
        attempt: scope.attempt,
      });
      await skipRefactor(ctx, { plan: PLAN_PATH, step: 'step-1', worktree: wt, ordinal: 3, reason: 'not needed' });
    });
    await withCtx(root, wt, { command: 'state release' }, (ctx) =>
      release(ctx, { plan: PLAN_PATH, step: 'step-1', worktree: wt }),
    );
    const after = rows(root);
    expect(after.map((r) => [r.status, r.snapshot_before, r.snapshot_after, r.exit_code])).toEqual([
      ['open', null, null, null],
      ['open', null, null, null],
      ['open', null, null, null],
      ['skipped', null, null, null],
    ]);
    expect(result(after[0]!)).toEqual({ previous: { op_hash: 'aaaaaaaaaaaa', attempts: 1 } });
    expect(result(after[1]!)).toEqual({ previous: { op_hash: 'bbbbbbbbbbbb', error: { code: 'SymbolNotFound' } } });
    expect(result(after[2]!).previous.pending).toMatchObject({ op_hash: 'cccccccccccc' });
    expect(result(after[2]!).pending).toBeUndefined();
    expect(result(after[3]!)).toEqual({ skipped_reason: 'not needed' });
  });
});

describe('refactor row writes after the claim moved', () => {
  it('refuses the pending write and the result of an attempt that was taken over or re-claimed, changing nothing', async () => {
    const { root, wt } = setup([RENAME]);
    await initAndClaim(root, wt);
    const scope = await scopeOf(root, wt);
    const pending = {
      op_hash: 'aaaaaaaaaaaa',
      snapshot_before: 'snap_aaaaaaaaaaaa',
      snapshot_after: 'snap_bbbbbbbbbbbb',
      worktree: wt,
      attempt: scope.attempt,
    };
    const outcome = {
      ordinal: 0,
      status: 'applied' as const,
      snapshot_before: 'snap_aaaaaaaaaaaa',
      snapshot_after: 'snap_bbbbbbbbbbbb',
      exit_code: 0,
      result: {},
      artifact: { summary: 'x' },
    };
    // The same worktree released and claimed again: the old attempt is fenced off.
    const { claim } = await import('../../src/state/claim.js');
    await withCtx(root, wt, {}, (ctx) => release(ctx, { plan: PLAN_PATH, step: 'step-1', worktree: wt }));
    await withCtx(root, wt, {}, (ctx) => claim(ctx, { plan: PLAN_PATH, worktree: wt, step: 'step-1' }));
    const before = sql(root, 'SELECT * FROM step_refactors');
    await withCtx(root, wt, {}, async (ctx) => {
      await expect(writePending(ctx, scope, 0, pending)).rejects.toThrow(
        expect.objectContaining({ code: 'AttemptMismatch' }),
      );
      await expect(recordRefactorResult(ctx, scope, outcome)).rejects.toThrow(
        expect.objectContaining({ code: 'AttemptMismatch' }),
      );
    });
    // Another worktree takes the expired claim over.
    const later = '2026-03-01T13:00:00.000Z';
    await withCtx(root, root, { now: later }, (ctx) => claim(ctx, { plan: PLAN_PATH, worktree: root, step: 'step-1' }));
    await withCtx(root, wt, { now: later }, async (ctx) => {
      await expect(writePending(ctx, { ...scope, attempt: scope.attempt + 1 }, 0, pending)).rejects.toThrow(
        expect.objectContaining({ code: 'LeaseExpired' }),
      );
    });
    expect(sql(root, 'SELECT * FROM step_refactors')).toEqual(before);
    expect(sql(root, 'SELECT * FROM step_artifacts')).toEqual([]);
  });
});

describe('run-step in-process', () => {
  it('recovers a pending write that reached the disk as applied, without applying it twice', async () => {
    const { root, wt } = setup([RENAME]);
    await initAndClaim(root, wt);
    const scope = await scopeOf(root, wt);
    const k = await openKernel({ workspace: wt });
    try {
      const { op } = parseOp((tokenizeShell(RENAME) as { tokens: string[] }).tokens);
      const p = await k.prepare(op);
      await withCtx(root, wt, { command: 'refactor run-step' }, (ctx) =>
        writePending(ctx, scope, 0, {
          op_hash: p.op_hash,
          snapshot_before: p.snapshot_id,
          snapshot_after: p.snapshot_after,
          worktree: wt,
          attempt: scope.attempt,
        }),
      );
      await k.apply(p); // the process "dies" here, before recording the row
    } finally {
      await k.close();
    }
    const text = readFileSync(join(wt, 'src/main.ts'), 'utf8');
    const r = await runStepLib(root, wt);
    expect(r.exit_code).toBe(0);
    expect(r.summary).toEqual({ total: 1, executed: 0, applied: 1, failed: 0, skipped: 0, open: 0 });
    const [row] = rows(root);
    expect(row!.status).toBe('applied');
    expect(result(row!)).toMatchObject({ recovered: true });
    expect(result(row!).pending).toBeUndefined();
    expect(readFileSync(join(wt, 'src/main.ts'), 'utf8')).toBe(text);
  });

  it('clears a pending write that never reached the disk and runs the row; a foreign workspace state fails it with SnapshotMismatch', async () => {
    const { root, wt } = setup([RENAME, RENAME_HELPER]);
    await initAndClaim(root, wt);
    const scope = await scopeOf(root, wt);
    const k = await openKernel({ workspace: wt });
    const snap = (await k.snapshot()).snapshot_id;
    await k.close();
    await withCtx(root, wt, { command: 'refactor run-step' }, (ctx) =>
      writePending(ctx, scope, 0, {
        op_hash: 'ce42cca08121',
        snapshot_before: snap,
        snapshot_after: 'snap_000000000000',
        worktree: wt,
        attempt: scope.attempt,
      }),
    );
    const r = await runStepLib(root, wt);
    expect(r.exit_code).toBe(0);
    expect(r.ops.map((o) => [o.status, o.attempts])).toEqual([
      ['applied', 1],
      ['applied', 1],
    ]);
    expect(result(rows(root)[0]!).recovered).toBeUndefined();

    // A second setup: the pending write names snapshots the workspace is in neither of.
    const s2 = setup([RENAME, RENAME_HELPER]);
    await initAndClaim(s2.root, s2.wt);
    const scope2 = await scopeOf(s2.root, s2.wt);
    await withCtx(s2.root, s2.wt, { command: 'refactor run-step' }, (ctx) =>
      writePending(ctx, scope2, 0, {
        op_hash: 'ce42cca08121',
        snapshot_before: 'snap_111111111111',
        snapshot_after: 'snap_222222222222',
        worktree: s2.wt,
        attempt: scope2.attempt,
      }),
    );
    const bad = await runStepLib(s2.root, s2.wt);
    expect(bad.exit_code).toBe(4);
    expect(bad.error).toMatchObject({
      code: 'SnapshotMismatch',
      details: { expected_snapshot_id: 'snap_222222222222', reason: 'pending_write' },
    });
    expect(bad.ops.map((o) => o.status)).toEqual(['failed', 'open']);
    expect(readFileSync(join(s2.wt, 'src/main.ts'), 'utf8')).toContain('parseConfig');
  });

  it("keeps answering with a failed row's error until --retry-failed reopens it", async () => {
    const { root, wt } = setup([MISSING]);
    await initAndClaim(root, wt);
    const first = await runStepLib(root, wt);
    expect([first.exit_code, first.ops[0]!.status, first.ops[0]!.error?.code]).toEqual([3, 'failed', 'SymbolNotFound']);
    writeFiles(wt, {
      'src/util.ts': readFileSync(join(wt, 'src/util.ts'), 'utf8') + '\nexport function nothingHere(): void {}\n',
    });
    // A plain re-run executes nothing and repeats the recorded failure: it never looks like success.
    const again = await runStepLib(root, wt);
    expect([again.status, again.exit_code, again.error?.code, again.summary.executed, again.summary.failed]).toEqual([
      'error',
      3,
      'SymbolNotFound',
      0,
      1,
    ]);
    const retried = await runStepLib(root, wt, { retry_failed: true });
    expect([retried.exit_code, retried.ops[0]!.status, retried.summary.executed]).toEqual([0, 'applied', 1]);
    expect(readFileSync(join(wt, 'src/util.ts'), 'utf8')).toContain('export function other(): void {}');
    const events = sql<{ details_json: string }>(
      root,
      "SELECT details_json FROM events WHERE command = 'refactor run-step' AND details_json LIKE '%retried%'",
    );
    expect(events.map((e) => JSON.parse(e.details_json).retried)).toEqual([[0]]);
  });

  it('retries an exit-4 failure once, then records it failed with attempts 2 and an untouched tree', async () => {
    const { root, wt } = setup([RENAME, RENAME_HELPER]);
    await initAndClaim(root, wt);
    // The kernel's test seam, in the environment its front door passes: every apply fails its first rename.
    const r = await runStepLib(root, wt, {}, undefined, { env: { NODE_ENV: 'test', TUG_FAULT: 'write:1' } });
    expect(r.exit_code).toBe(4);
    expect(r.ops[0]).toMatchObject({ status: 'failed', exit_code: 4, attempts: 2, error: { code: 'WriteError' } });
    expect(r.ops[1]!.status).toBe('open');
    expect(result(rows(root)[0]!)).toMatchObject({ attempts: 2, error: { code: 'WriteError' } });
    expect(readFileSync(join(wt, 'src/main.ts'), 'utf8')).toContain('parseConfig');
  });

  it('applies Gate A to renames unless the op says --allow-large', async () => {
    const { root, wt } = setup([RENAME_HELPER, `${RENAME} --allow-large`], {
      '.tugtool/config.toml': '[kernel]\nmax_files_affected = 1\n',
    });
    await initAndClaim(root, wt);
    const r = await runStepLib(root, wt);
    expect(r.exit_code).toBe(2);
    expect(r.ops[0]!.error).toMatchObject({
      code: 'ImpactThresholdExceeded',
      details: { files_affected: 2, edits_estimated: 3, max_files_affected: 1, max_edits: 500 },
    });
    expect(r.ops[1]!.status).toBe('open');
    await withCtx(root, wt, { command: 'refactor skip' }, (ctx) =>
      skipRefactor(ctx, { plan: PLAN_PATH, step: 'step-1', worktree: wt, ordinal: 0, reason: 'too big' }),
    );
    const r2 = await runStepLib(root, wt);
    expect([r2.exit_code, r2.ops[1]!.status, r2.ops[1]!.summary?.files_changed]).toEqual([0, 'applied', 2]);
  });

  it("gives SessionLocked when the worktree's kernel session is busy, changing no row and freeing its slot", async () => {
    const { root, wt } = setup([RENAME]);
    await initAndClaim(root, wt);
    // A kernel that holds its session lock between operations (the default takes it per operation).
    const holder = await openKernel({ workspace: wt, holdLock: true });
    try {
      await expect(runStepLib(root, wt, {}, undefined, { noWait: true })).rejects.toMatchObject({
        code: 'SessionLocked',
      });
    } finally {
      await holder.close();
    }
    expect(rows(root).map((r) => [r.status, r.result_json])).toEqual([['open', null]]);
    // The single slot was released: the next run gets it and applies the row.
    expect((await runStepLib(root, wt)).ops[0]!.status).toBe('applied');
  });

  it('opens neither a slot nor a kernel when the step has nothing to run', async () => {
    const { root, wt } = setup([]);
    await initAndClaim(root, wt);
    const r = await runStepLib(root, wt);
    expect(r).toMatchObject({
      status: 'ok',
      exit_code: 0,
      snapshot_id: null,
      ops: [],
      summary: { total: 0, executed: 0 },
    });
    expect(existsSync(join(wt, '.tug'))).toBe(false);
  });

  it('refuses a caller whose claim was taken over, before touching anything', async () => {
    const { root, wt } = setup([RENAME]);
    await initAndClaim(root, wt);
    const { claim } = await import('../../src/state/claim.js');
    const later = '2026-03-01T13:00:00.000Z'; // the 7200 s lease has expired
    await withCtx(root, root, { now: later }, (ctx) => claim(ctx, { plan: PLAN_PATH, worktree: root, step: 'step-1' }));
    await expect(runStepLib(root, wt, {}, later)).rejects.toMatchObject({ code: 'LeaseExpired' });
    expect(rows(root).map((r) => r.status)).toEqual(['open']);
    expect(readFileSync(join(wt, 'src/main.ts'), 'utf8')).toContain('parseConfig');
  });
});

describe('reconcile and op hashes', () => {
  it('computes the kernel op_hash from op_text without the kernel', () => {
    const texts = [
      RENAME,
      `${RENAME} --verify tests --allow-large`,
      'rename-symbol --at src/a.ts:3:17 --expect foo --to bar',
      'rename-symbol --symbol src/m.py::C.m --to n --safety aggressive',
      'organize-imports --file src/a.ts --mode sort',
    ];
    for (const t of texts) {
      const { op } = parseOp((tokenizeShell(t) as { tokens: string[] }).tokens);
      for (const safety of ['strict', 'aggressive'] as const) {
        const own = op.op === 'rename-symbol' ? (op.safety ?? safety) : safety;
        expect(opHashOfText(t, safety), t).toBe(opHashOf(op, own));
      }
    }
    expect(candidateOpHashes(RENAME)).toHaveLength(2);
    expect(candidateOpHashes('move-symbol --x')).toEqual([]);
  });

  it('marks only the rows whose op_hash is in a Tug-Refactor trailer of the step commit', async () => {
    const { root, wt } = setup([RENAME, MISSING, RENAME]);
    await initAndClaim(root, wt);
    await withCtx(root, root, { command: 'state release' }, (ctx) =>
      release(ctx, { plan: PLAN_PATH, step: 'step-1', worktree: wt }),
    );
    const h = opHashOfText(RENAME)!;
    const commit = {
      hash: 'a'.repeat(40),
      committer_time: 1,
      steps: ['step-1'],
      plans: [PLAN_PATH],
      refactors: [`${h} snap_111111111111..snap_222222222222`, 'garbage'],
    };
    await withCtx(root, root, { command: 'state reconcile' }, (ctx) =>
      reconcile(ctx, { plan: PLAN_PATH, commits: [commit] }),
    );
    expect(rows(root).map((r) => [r.status, r.snapshot_before, r.snapshot_after, r.exit_code])).toEqual([
      ['applied', 'snap_111111111111', 'snap_222222222222', 0],
      ['open', null, null, null],
      ['open', null, null, null], // one trailer marks one row
    ]);
    const ev = sql<{ details_json: string }>(root, "SELECT details_json FROM events WHERE command = 'state reconcile'");
    expect(JSON.parse(ev[0]!.details_json).refactors_applied).toEqual([
      { step_anchor: 'step-1', ordinal: 0, op_hash: h, previous_status: 'open' },
    ]);
  });
});

describe('result and slots', () => {
  it('keeps result_json within 8 KiB and error details within 4 KiB', () => {
    const r = compactResult({
      op_hash: 'abcdefabcdef',
      files_written: Array.from({ length: 2000 }, (_, i) => `src/some/long/path/file-${i}.ts`),
      summary: { files_changed: 2000, edits_count: 9000, bytes_added: 1, bytes_removed: 1 },
      verification: null,
      warnings: ['B', 'A', 'B'],
      duration_ms: 12.7,
      attempts: 1,
      error: {
        code: 'TestsFailed',
        message: 'tests failed',
        details: { command: ['npm', 'test'], output: 'x'.repeat(100_000), failed_tests: ['a'] },
      },
    });
    expect(Buffer.byteLength(JSON.stringify(r))).toBeLessThanOrEqual(RESULT_MAX_BYTES);
    const details = (r.error as { details: Record<string, unknown> }).details;
    expect(Buffer.byteLength(JSON.stringify(details))).toBeLessThanOrEqual(4096);
    expect(details).toMatchObject({ truncated: true, command: ['npm', 'test'] });
    expect(r.warnings).toEqual(['A', 'B']);
  });

  it('waits for a free slot, calling back while it waits, and can be aborted from the callback', async () => {
    const repoRoot = setup([]).root;
    const a = await acquireSlot({ repoRoot, slots: 1 });
    let waits = 0;
    const b = await acquireSlot({
      repoRoot,
      slots: 1,
      pollMs: 1,
      onWait: async () => {
        if (++waits === 2) await a.release();
      },
    });
    expect([a.index, b.index, waits]).toEqual([0, 0, 2]);
    await expect(
      acquireSlot({
        repoRoot,
        slots: 1,
        pollMs: 1,
        onWait: () => {
          throw new Error('lease lost');
        },
      }),
    ).rejects.toThrow('lease lost');
    await b.release();
    const c = await acquireSlot({ repoRoot, slots: 2 });
    const d = await acquireSlot({ repoRoot, slots: 2 });
    const dir = dirname(c.path);
    await c.release();
    // A held slot keeps the directory; the last release removes it, and a later taker makes it again.
    expect(existsSync(dir)).toBe(true);
    await d.release();
    expect(existsSync(dir)).toBe(false);
    const e = await acquireSlot({ repoRoot, slots: 1 });
    expect(existsSync(e.path + '.lock')).toBe(true);
    await e.release();
    expect(existsSync(dir)).toBe(false);
  });
});
