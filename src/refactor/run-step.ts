/**
 * `tugcode refactor run-step` as a library function (docs/kernel.md §7.3), called in-process by the CLI (which
 * the driver, `tugcode run`, starts as a child: src/run/refactor-child.ts): execute the open refactor rows of the claimed step in worktree W with one
 * warm kernel, heartbeating around each, recording each result in its own short transaction (never a
 * kernel call inside a write transaction).
 *
 * Setup failures (plan, step, ownership, slot, kernel lock) throw and change no row. Once rows run, the
 * outcome is a `RunStepResult` whose `exit_code` is that of the failing row, or of the ownership error
 * that stopped the run, or 0.
 *
 * This module holds the run (setup, slot, kernel, heartbeat, the answer); each row runs in run-row.ts.
 */
import type { Kernel, KernelOptions, VerifyMode } from '../kernel/index.js';
import { TUGCODE_HOST } from '../config/kernel-env.js';
import { ownerPath, type StateContext } from '../state/context.js';
import { heartbeat } from '../state/heartbeat.js';
import {
  refactorRows,
  refactorScope,
  startRefactorRun,
  ownPending,
  type RefactorScope,
  type RefactorView,
} from '../state/refactors.js';
import { opHashOfText } from '../state/op-hash.js';
import { reportOfRow, summarizeRows, type ErrorObject, type OpReport, type RunStepResult } from './result.js';
import { acquireSlot } from './slots.js';
import { executeRow } from './run-row.js';

export { errorObjectOf } from './run-row.js';

export interface RunStepInput {
  plan: string;
  step: string;
  /** Canonical worktree root (W). */
  worktree: string;
  attempt?: number | undefined;
  retry_failed?: boolean | undefined;
  verify?: VerifyMode | undefined;
}

export interface RunStepOptions {
  /** `run.heartbeat_seconds`: the lease is renewed this often while an op runs or a slot is awaited. */
  heartbeat_seconds: number;
  /** `kernel.max_concurrent_sessions`. */
  max_concurrent_sessions: number;
  /** Extra kernel options (env for its configuration, log level, session dir, …). */
  kernel?: Partial<KernelOptions> | undefined;
  /** Poll interval while every slot is taken (default 200 ms). */
  slot_poll_ms?: number | undefined;
  /** Called after each executed row is recorded (the driver's progress; awaited before the next row). */
  onRow?: ((report: OpReport) => void | Promise<void>) | undefined;
}

export async function runStep(ctx: StateContext, input: RunStepInput, o: RunStepOptions): Promise<RunStepResult> {
  // Setup 1–2: plan, step, ownership and fencing, transition. Nothing changes on failure.
  const { scope, rows } = await refactorScope(ctx, input);
  // A failed row blocks the rows after it until it is retried or skipped (§7.5: the run stops there); the
  // answer repeats its recorded error and exit code, so a re-run never looks like success.
  const blocked = input.retry_failed ? null : rows.find((r) => r.status === 'failed');
  const blockedBy = blocked ? recordedFailure(blocked) : null;
  // Nothing to execute: no slot, no kernel (the driver calls run-step for every step).
  if (blockedBy || !rows.some((r) => r.status === 'open' || (input.retry_failed && r.status === 'failed'))) {
    return finish(ctx, scope, rows, new Map(), blockedBy, null, 0);
  }
  const beat = async (): Promise<void> => {
    await heartbeat(ctx, {
      plan: scope.plan_path,
      step: scope.top_anchor,
      worktree: scope.worktree,
      attempt: scope.attempt,
    });
  };
  let lost: unknown = null;
  // A background heartbeat that fails (lost lease, fencing, busy DB) is remembered; the row loop stops on it.
  const beatInBackground = () => void beat().catch((e: unknown) => (lost ??= e));
  const interval = Math.max(1, o.heartbeat_seconds) * 1000;
  let lastBeat = Date.now();
  // Setup 3: a concurrency slot (heartbeating while waiting), then the kernel.
  const slot = await acquireSlot({
    repoRoot: ctx.repoRoot,
    slots: o.max_concurrent_sessions,
    pollMs: o.slot_poll_ms,
    onWait: async () => {
      if (Date.now() - lastBeat >= interval) {
        await beat();
        lastBeat = Date.now();
      }
    },
  });
  let kernel: Kernel | null = null;
  let kernelTests: string | null = null;
  const timer = setInterval(beatInBackground, interval);
  timer.unref();
  try {
    const { openKernel } = await import('../kernel/index.js');
    const kernelOpts = (testCommand: string[] | undefined): KernelOptions => ({
      command: 'refactor run-step',
      ...TUGCODE_HOST,
      // docs/kernel.md §12.2: run-step holds the session lock for its whole invocation; its time is tugcode's.
      holdLock: true,
      clock: ctx.clock,
      ...o.kernel,
      workspace: ownerPath(ctx, scope.worktree),
      ...(testCommand ? { testCommand } : {}),
    });
    kernel = await openKernel(kernelOpts(undefined));
    /** The kernel for an op: reopened when the op's `--test-command` differs from the open one's. */
    const kernelFor = async (testCommand: string[] | undefined): Promise<Kernel> => {
      const want = testCommand ? JSON.stringify(testCommand) : null;
      if (want !== kernelTests) {
        await kernel!.close();
        kernel = null;
        kernel = await openKernel(kernelOpts(testCommand));
        kernelTests = want;
      }
      return kernel!;
    };
    const safety = kernel.settings.safety;
    let snapshotId: string | null = null;
    // Setup 4–5: --retry-failed, then recovery of this worktree's and attempt's pending writes.
    const before = await refactorRows(ctx, {
      plan: scope.plan_path,
      step: scope.step_anchor,
      worktree: scope.worktree,
    });
    let current: string | null = null;
    if (before.some((r) => ownPending(r, scope))) current = snapshotId = (await kernel.snapshot()).snapshot_id;
    const start = await startRefactorRun(ctx, scope, {
      retry_failed: Boolean(input.retry_failed),
      current_snapshot: current,
    });

    const reports = new Map<number, OpReport>();
    let failure: { error: ErrorObject; exit: number } | null = null;
    let executed = 0;
    for (const row of start.rows) {
      if (failure) break;
      if (row.status === 'failed') failure = recordedFailure(row); // recovered as failed just now
      if (row.status !== 'open') continue;
      executed++;
      const out = await executeRow({ ctx, scope, row, input, kernelFor, beat, safety, lostLease: () => lost });
      if (out.snapshot_id) snapshotId = out.snapshot_id;
      if (out.report) reports.set(row.ordinal, out.report);
      if (out.failure) failure = out.failure;
      if (out.report && o.onRow) await o.onRow(out.report);
    }
    const final = await refactorRows(ctx, { plan: scope.plan_path, step: scope.step_anchor, worktree: scope.worktree });
    return finish(ctx, scope, final, reports, failure, snapshotId, executed, safety);
  } finally {
    clearInterval(timer);
    try {
      if (kernel) await (kernel as Kernel).close();
    } finally {
      await slot.release();
    }
  }
}

/** The error and exit code a failed row recorded. */
function recordedFailure(row: RefactorView): { error: ErrorObject; exit: number } {
  const error = (row.result?.error as ErrorObject | undefined) ?? {
    code: 'InternalError',
    message: `refactor row ${row.ordinal} is failed without a recorded error`,
    details: { ordinal: row.ordinal },
  };
  return { error, exit: row.exit_code ?? 10 };
}

function finish(
  ctx: StateContext,
  scope: RefactorScope,
  final: RefactorView[],
  reports: Map<number, OpReport>,
  failure: { error: ErrorObject; exit: number } | null,
  snapshotId: string | null,
  executed: number,
  safety: 'strict' | 'aggressive' = 'strict',
): RunStepResult {
  return {
    status: failure ? 'error' : 'ok',
    snapshot_id: snapshotId,
    error: failure?.error ?? null,
    plan_path: scope.plan_path,
    step_anchor: scope.step_anchor,
    worktree: scope.worktree,
    ops: final.map((r) => reports.get(r.ordinal) ?? reportOfRow(r, opHashOfText(r.op_text, safety))),
    summary: summarizeRows(final, executed),
    warnings: ctx.warnings.items.map((w) => ({ code: w.code, message: w.message })),
    exit_code: failure?.exit ?? 0,
  };
}
