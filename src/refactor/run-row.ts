/**
 * One refactor row of `tugcode refactor run-step` (docs/kernel.md §7.3 steps 1–7): heartbeat, parse, snapshot,
 * analyze and Gate A, prepare and verify, the pending write, apply, and the recorded result, with one
 * automatic retry after an exit-4 failure. Also the error object and exit code of any thrown error.
 */
import { TugError } from '../contract/errors.js';
import type { Kernel } from '../kernel/kernel.js';
import type { KernelError } from '../kernel/errors.js';
import type { OpSpec, Prepared, Summary, Verification, VerifyMode } from '../kernel/types.js';
import type { StateContext } from '../state/context.js';
import { recordRefactorResult, writePending, type RefactorScope, type RefactorView } from '../state/refactors.js';
import { opHashOfText } from '../state/op-hash.js';
import { compactResult, reportLine, type ErrorObject, type OpReport } from './result.js';
import { parseRowOp } from './row-op.js';
import type { RunStepInput } from './run-step.js';

type KernelErr = KernelError & { exitCode: number };

function isKernelError(e: unknown): e is KernelErr {
  return e instanceof Error && e.name === 'KernelError' && typeof (e as KernelErr).code === 'string';
}

export function errorObjectOf(e: unknown): { error: ErrorObject; exit: number } {
  if (e instanceof TugError)
    return { error: { code: e.code, message: e.message, details: e.details }, exit: e.exitCode };
  if (isKernelError(e)) {
    const error: ErrorObject = { code: e.code, message: e.message, details: e.details ?? {} };
    if (e.location) error.location = e.location;
    return { error, exit: e.exitCode };
  }
  const message = e instanceof Error ? e.message : String(e);
  return { error: { code: 'InternalError', message, details: { message } }, exit: 10 };
}

/** A verification that is not `passed` (nor an accepted `skipped`) fails with the §11.4 code. */
function verificationFailure(v: Verification): ErrorObject {
  const failed = v.checks.find((c) => c.status === 'failed');
  const unavailable = v.checks.find((c) => c.status === 'unavailable');
  if (failed) {
    const code =
      failed.name === 'tests'
        ? 'TestsFailed'
        : failed.name === 'ts-syntax' || failed.name === 'py-compile'
          ? 'SyntaxError'
          : 'TypecheckFailed';
    return {
      code,
      message: `verification failed: ${failed.name}`,
      details: { check: failed.name, exit_code: failed.exit_code, errors: failed.diagnostics.slice(0, 20) },
    };
  }
  return {
    code: 'VerificationUnavailable',
    message: `verification ${v.mode} is ${v.status}`,
    details: {
      check: unavailable?.name ?? v.mode,
      tool: unavailable?.command?.[0] ?? null,
      reason: unavailable?.reason ?? `verification status ${v.status}`,
    },
  };
}

export interface RowContext {
  ctx: StateContext;
  scope: RefactorScope;
  row: RefactorView;
  input: RunStepInput;
  kernelFor: (testCommand: string[] | undefined) => Promise<Kernel>;
  beat: () => Promise<void>;
  safety: 'strict' | 'aggressive';
  lostLease: () => unknown;
}

export interface RowOutcome {
  report: OpReport | null;
  failure: { error: ErrorObject; exit: number } | null;
  snapshot_id: string | null;
}

/** One open row (docs/kernel.md §7.3 steps 1–7), with one automatic retry after an exit-4 failure. */
export async function executeRow(rc: RowContext): Promise<RowOutcome> {
  const { ctx, scope, row } = rc;
  const t0 = performance.now();
  let snapshotId: string | null = null;
  for (let attempts = 1; ; attempts++) {
    let op: OpSpec | null = null;
    let mode: VerifyMode = rc.input.verify ?? 'syntax';
    let opHash: string | null = opHashOfText(row.op_text, rc.safety);
    let snapshotBefore: string | null = null;
    let summary: Summary | null = null;
    let verification: Verification | null = null;
    const warnings: string[] = [];
    const report = (
      status: OpReport['status'],
      exit: number,
      after: string | null,
      error: ErrorObject | null,
    ): OpReport => ({
      ordinal: row.ordinal,
      op_text: row.op_text,
      op_hash: opHash,
      status,
      exit_code: exit,
      attempts,
      snapshot_before: snapshotBefore,
      snapshot_after: after,
      summary,
      verification: verification ? { mode: verification.mode, status: verification.status } : null,
      warnings: [...new Set(warnings)].sort(),
      error,
    });
    const record = async (
      status: 'applied' | 'failed',
      exit: number,
      after: string | null,
      files: string[],
      error: ErrorObject | null,
    ) => {
      const result = compactResult({
        op_hash: opHash,
        files_written: files,
        summary,
        verification,
        warnings,
        duration_ms: performance.now() - t0,
        attempts,
        error,
      });
      const line = reportLine({
        operation: op?.op ?? row.op_text.split(/\s+/)[0] ?? 'refactor',
        summary,
        mode,
        verificationStatus: verification?.status ?? null,
        snapshot_before: snapshotBefore,
        snapshot_after: after,
        warnings,
        error,
      });
      const content = JSON.stringify(
        { op_text: row.op_text, ...result, ...(error ? { error } : {}), ...(verification ? { verification } : {}) },
        null,
        2,
      );
      await recordRefactorResult(ctx, scope, {
        ordinal: row.ordinal,
        status,
        snapshot_before: snapshotBefore,
        snapshot_after: after,
        exit_code: exit,
        result,
        artifact: { summary: line, content },
      });
    };
    try {
      // 1. Heartbeat: a lost lease stops the run before any write (the row stays open).
      if (rc.lostLease()) throw rc.lostLease();
      await rc.beat();
      // 2. Parse; the verify mode is the op's, else run-step's, else the config's, else syntax.
      const parsed = parseRowOp(row.op_text);
      op = parsed.op;
      const kernel = await rc.kernelFor(parsed.test_command);
      mode = parsed.verify ?? rc.input.verify ?? kernel.settings.verify ?? 'syntax';
      // 3. snapshot_before.
      snapshotBefore = snapshotId = (await kernel.snapshot()).snapshot_id;
      // 4. Analyze, then Gate A (renames only).
      const an = await kernel.analyzeImpact(op);
      opHash = an.op_hash;
      warnings.push(...an.warnings.map((w) => w.code));
      const { max_files_affected, max_edits } = kernel.settings;
      if (
        op.op === 'rename-symbol' &&
        !parsed.allow_large &&
        (an.impact.files_affected > max_files_affected || an.impact.edits_estimated > max_edits)
      ) {
        const { KernelError } = await import('../kernel/errors.js');
        throw new KernelError(
          'ImpactThresholdExceeded',
          `the rename touches ${an.impact.files_affected} files with ${an.impact.edits_estimated} edits (limits ${max_files_affected} files, ${max_edits} edits); add --allow-large to the op`,
          {
            files_affected: an.impact.files_affected,
            edits_estimated: an.impact.edits_estimated,
            max_files_affected,
            max_edits,
          },
          { snapshotId: snapshotBefore },
        );
      }
      // 5. Prepare and verify (nothing written yet).
      const p: Prepared = await kernel.prepare(op, { snapshotId: snapshotBefore });
      summary = p.summary;
      warnings.push(...p.warnings.map((w) => w.code));
      try {
        verification = await kernel.verifyPrepared(p, mode);
      } catch (e) {
        const v = (e as KernelErr).extra?.verification as Verification | undefined;
        if (v) verification = v;
        throw e;
      }
      const accepted =
        verification.status === 'passed' ||
        (verification.status === 'skipped' && (mode === 'none' || p.patchSet.edits.length === 0));
      if (!accepted) {
        const error = verificationFailure(verification);
        await record('failed', 5, null, [], error);
        return { report: report('failed', 5, null, error), failure: { error, exit: 5 }, snapshot_id: snapshotId };
      }
      // 6. Pending write + heartbeat + ownership (one transaction), then apply the prepared patch.
      await writePending(ctx, scope, row.ordinal, {
        op_hash: p.op_hash,
        snapshot_before: p.snapshot_id,
        snapshot_after: p.snapshot_after,
        worktree: scope.worktree,
        attempt: scope.attempt,
      });
      const a = await kernel.apply(p);
      snapshotId = a.snapshot_after;
      // 7. Record applied (+ artifact + heartbeat).
      await record('applied', 0, a.snapshot_after, a.files_written, null);
      return { report: report('applied', 0, a.snapshot_after, null), failure: null, snapshot_id: snapshotId };
    } catch (e) {
      const { error, exit } = errorObjectOf(e);
      if (isKernelError(e) && e.snapshotId) snapshotId = e.snapshotId;
      // A state failure (lost lease, fencing, busy DB) stops the run and leaves the row as it is.
      if (e instanceof TugError) return { report: null, failure: { error, exit }, snapshot_id: snapshotId };
      if (exit === 4 && attempts === 1) continue;
      try {
        await record('failed', exit, null, [], error);
      } catch (stateError) {
        return { report: null, failure: errorObjectOf(stateError), snapshot_id: snapshotId };
      }
      return { report: report('failed', exit, null, error), failure: { error, exit }, snapshot_id: snapshotId };
    }
  }
}
