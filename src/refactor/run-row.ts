/**
 * One refactor row of `tugcode refactor run-step` (docs/kernel.md §7.3 steps 1–7): heartbeat, parse, snapshot,
 * analyze and Gate A, prepare and verify, the pending write, apply, and the recorded result, with one
 * automatic retry after an exit-4 failure. Also the error object and exit code of any thrown error.
 */
import { TugError } from '../contract/errors.js';
import type { Kernel } from '../kernel/index.js';
import type { KernelError, OpSpec, Prepared, Summary, Verification, VerifyMode } from '../kernel/light.js';
import type { StateContext } from '../state/context.js';
import { recordRefactorResult, writePending, type RefactorScope, type RefactorView } from '../state/refactors.js';
import { opHashOfText } from '../state/op-hash.js';
import { compactResult, reportLine, type ErrorObject, type OpReport } from './result.js';
import { parseRowOp, type RowOp } from './row-op.js';
import type { RunStepInput } from './run-step.js';

type KernelErr = KernelError & { exitCode: number };

function isKernelError(e: unknown): e is KernelErr {
  return e instanceof Error && e.name === 'KernelError' && typeof (e as KernelErr).code === 'string';
}

export function errorObjectOf(e: unknown): { error: ErrorObject; exit: number } {
  if (e instanceof TugError)
    return {
      error: { code: e.code, message: e.message, details: e.details, ...(e.hint ? { hint: e.hint } : {}) },
      exit: e.exitCode,
    };
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

/** One row's run: its context, its start, and the last snapshot it computed (across attempts). */
interface RowRun {
  rc: RowContext;
  t0: number;
  snapshotId: string | null;
}

/** What one attempt at a row learned so far, for its report and its recorded result. */
interface Attempt {
  n: number;
  op: OpSpec | null;
  mode: VerifyMode;
  opHash: string | null;
  snapshotBefore: string | null;
  summary: Summary | null;
  verification: Verification | null;
  warnings: string[];
}

/** One open row (docs/kernel.md §7.3 steps 1–7), with one automatic retry after an exit-4 failure. */
export async function executeRow(rc: RowContext): Promise<RowOutcome> {
  const r: RowRun = { rc, t0: performance.now(), snapshotId: null };
  for (let n = 1; ; n++) {
    const a: Attempt = {
      n,
      op: null,
      mode: rc.input.verify ?? 'syntax',
      opHash: opHashOfText(rc.row.op_text, rc.safety),
      snapshotBefore: null,
      summary: null,
      verification: null,
      warnings: [],
    };
    try {
      return await attempt(r, a);
    } catch (e) {
      const out = await attemptFailed(r, a, e);
      if (out !== 'retry') return out;
    }
  }
}

/** Steps 1–7 of one attempt; a thrown error is the attempt's failure (attemptFailed). */
async function attempt(r: RowRun, a: Attempt): Promise<RowOutcome> {
  const { rc } = r;
  // 1. Heartbeat: a lost lease stops the run before any write (the row stays open).
  if (rc.lostLease()) throw rc.lostLease();
  await rc.beat();
  // 2. Parse; the verify mode is the op's, else run-step's, else the config's, else syntax.
  const parsed = parseRowOp(rc.row.op_text);
  a.op = parsed.op;
  const kernel = await rc.kernelFor(parsed.test_command);
  a.mode = parsed.verify ?? rc.input.verify ?? kernel.settings.verify ?? 'syntax';
  // 3. snapshot_before.
  const before = (await kernel.snapshot()).snapshot_id;
  a.snapshotBefore = r.snapshotId = before;
  // 4. Analyze, then Gate A (renames only).
  await analyze(kernel, parsed, a, before);
  // 5. Prepare and verify (nothing written yet).
  const { p, v } = await prepareAndVerify(kernel, parsed.op, a, before);
  const accepted =
    v.status === 'passed' || (v.status === 'skipped' && (a.mode === 'none' || p.patchSet.edits.length === 0));
  if (!accepted)
    return settle(r, a, { status: 'failed', exit: 5, after: null, files: [], error: verificationFailure(v) });
  // 6. Pending write + heartbeat + ownership (one transaction), then apply the prepared patch.
  const { ctx, scope, row } = rc;
  await writePending(ctx, scope, row.ordinal, {
    op_hash: p.op_hash,
    snapshot_before: p.snapshot_id,
    snapshot_after: p.snapshot_after,
    worktree: scope.worktree,
    attempt: scope.attempt,
  });
  const applied = await kernel.apply(p);
  r.snapshotId = applied.snapshot_after;
  // 7. Record applied (+ artifact + heartbeat).
  const after = applied.snapshot_after;
  return settle(r, a, { status: 'applied', exit: 0, after, files: applied.files_written, error: null });
}

/** Step 4: the impact analysis, and Gate A: a rename past the size limits needs `--allow-large`. */
async function analyze(kernel: Kernel, parsed: RowOp, a: Attempt, snapshotId: string): Promise<void> {
  const op = parsed.op;
  const an = await kernel.analyzeImpact(op);
  a.opHash = an.op_hash;
  a.warnings.push(...an.warnings.map((w) => w.code));
  const { max_files_affected, max_edits } = kernel.settings;
  const { files_affected, edits_estimated } = an.impact;
  if (op.op !== 'rename-symbol' || parsed.allow_large) return;
  if (files_affected <= max_files_affected && edits_estimated <= max_edits) return;
  const { KernelError } = await import('../kernel/light.js');
  throw new KernelError(
    'ImpactThresholdExceeded',
    `the rename touches ${files_affected} files with ${edits_estimated} edits (limits ${max_files_affected} files, ${max_edits} edits); add --allow-large to the op`,
    { files_affected, edits_estimated, max_files_affected, max_edits },
    { snapshotId },
  );
}

/** Step 5: the prepared patch and its verification (kept on the attempt even when verifying throws). */
async function prepareAndVerify(
  kernel: Kernel,
  op: OpSpec,
  a: Attempt,
  snapshotId: string,
): Promise<{ p: Prepared; v: Verification }> {
  const p = await kernel.prepare(op, { snapshotId });
  a.summary = p.summary;
  a.warnings.push(...p.warnings.map((w) => w.code));
  try {
    const v = await kernel.verifyPrepared(p, a.mode);
    a.verification = v;
    return { p, v };
  } catch (e) {
    const v = (e as KernelErr).extra?.verification as Verification | undefined;
    if (v) a.verification = v;
    throw e;
  }
}

/**
 * A failed attempt: a state failure (lost lease, fencing, busy DB) stops the run and leaves the row as it
 * is; an exit-4 failure of the first attempt is retried; any other is recorded.
 */
async function attemptFailed(r: RowRun, a: Attempt, e: unknown): Promise<RowOutcome | 'retry'> {
  const { error, exit } = errorObjectOf(e);
  if (isKernelError(e) && e.snapshotId) r.snapshotId = e.snapshotId;
  if (e instanceof TugError) return { report: null, failure: { error, exit }, snapshot_id: r.snapshotId };
  if (exit === 4 && a.n === 1) return 'retry';
  try {
    return await settle(r, a, { status: 'failed', exit, after: null, files: [], error });
  } catch (stateError) {
    return { report: null, failure: errorObjectOf(stateError), snapshot_id: r.snapshotId };
  }
}

/** How an attempt ended. */
interface Settled {
  status: 'applied' | 'failed';
  exit: number;
  after: string | null;
  files: string[];
  error: ErrorObject | null;
}

/** Record how the attempt ended, and answer with its report. */
async function settle(r: RowRun, a: Attempt, o: Settled): Promise<RowOutcome> {
  await record(r, a, o);
  const failure = o.error ? { error: o.error, exit: o.exit } : null;
  return { report: report(r, a, o), failure, snapshot_id: r.snapshotId };
}

/** The row's `ops[]` entry. */
function report(r: RowRun, a: Attempt, o: Settled): OpReport {
  return {
    ordinal: r.rc.row.ordinal,
    op_text: r.rc.row.op_text,
    op_hash: a.opHash,
    status: o.status,
    exit_code: o.exit,
    attempts: a.n,
    snapshot_before: a.snapshotBefore,
    snapshot_after: o.after,
    summary: a.summary,
    verification: a.verification ? { mode: a.verification.mode, status: a.verification.status } : null,
    warnings: [...new Set(a.warnings)].sort(),
    error: o.error,
  };
}

/** The row's recorded result: its status, `result_json` and the `refactor_report` artifact. */
async function record(r: RowRun, a: Attempt, o: Settled): Promise<void> {
  const { ctx, scope, row } = r.rc;
  const { summary, verification, warnings } = a;
  const result = compactResult({
    op_hash: a.opHash,
    files_written: o.files,
    summary,
    verification,
    warnings,
    duration_ms: performance.now() - r.t0,
    attempts: a.n,
    error: o.error,
  });
  const line = reportLine({
    operation: a.op?.op ?? row.op_text.split(/\s+/)[0] ?? 'refactor',
    summary,
    mode: a.mode,
    verificationStatus: verification?.status ?? null,
    snapshot_before: a.snapshotBefore,
    snapshot_after: o.after,
    warnings,
    error: o.error,
  });
  const content = JSON.stringify(
    {
      op_text: row.op_text,
      ...result,
      ...(o.error ? { error: o.error } : {}),
      ...(verification ? { verification } : {}),
    },
    null,
    2,
  );
  await recordRefactorResult(ctx, scope, {
    ordinal: row.ordinal,
    status: o.status,
    snapshot_before: a.snapshotBefore,
    snapshot_after: o.after,
    exit_code: o.exit,
    result,
    artifact: { summary: line, content },
  });
}
