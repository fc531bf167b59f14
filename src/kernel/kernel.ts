/**
 * The kernel (docs/kernel.md §2.3, §6.1): open once (session + lock), then snapshot / analyze / prepare /
 * verify / apply with warm backends kept across operations (./backend-pool.ts).
 */
import { existsSync, realpathSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { KernelError } from './errors.js';
import type { KernelWarning } from './envelope.js';
import { sortWarnings } from './envelope.js';
import { undoToken } from './ids.js';
import { realIo, resolvePatch, writeResolved, type ApplyIo } from './patch/index.js';
import { opHashOf } from './prepare.js';
import { opTargetOf, planPrepared } from './prepare-steps.js';
import { Session, SYSTEM_CLOCK } from './session.js';
import { sweepSandboxes } from './sandbox-owner.js';
import { Logger } from './log.js';
import { applySettings, flagsOf, loadKernelConfig, withFlags, type KernelSettings } from './config.js';
import {
  assertWorkspaceBounded,
  changedFiles,
  filesByLanguage,
  sessionRelative,
  takeSnapshot,
  type Exclusions,
  type Snapshot,
} from './snapshot.js';
import { normalizeFileArg, FileCache, WorkspaceFiles } from './workspace.js';
import { BackendPool } from './backend-pool.js';
import { verifyPatch, verifyWorkspace, type VerifyContext } from './verify/run.js';
import type {
  AnalyzeResult,
  ApplyResult,
  KernelClock,
  KernelOptions,
  OpSpec,
  Prepared,
  RunResult,
  SnapshotResult,
  VerifyMode,
  VerifyResult,
} from './types.js';

export interface Kernel {
  readonly workspace: string;
  readonly sessionDir: string;
  /** Resolved configuration (flags/options > env > [kernel] > pyproject [tool.tug] > defaults). */
  readonly settings: KernelSettings;
  snapshot(): Promise<SnapshotResult>;
  analyzeImpact(op: OpSpec): Promise<AnalyzeResult>;
  prepare(op: OpSpec, o?: { snapshotId?: string }): Promise<Prepared>;
  verifyPrepared(p: Prepared, mode: VerifyMode): Promise<import('./types.js').Verification>;
  apply(p: Prepared): Promise<ApplyResult>;
  run(op: OpSpec, o: { apply: boolean; verify: VerifyMode; snapshotId?: string }): Promise<RunResult>;
  verify(mode: Exclude<VerifyMode, 'none'>): Promise<VerifyResult>;
  close(): Promise<void>;
}

export function resolveWorkspace(dir: string): string {
  const abs = resolve(dir);
  if (!existsSync(abs) || !statSync(abs).isDirectory())
    throw new KernelError('WorkspaceNotFound', `workspace not found: ${dir}`, { path: abs });
  return realpathSync(abs);
}

export async function openKernel(opts: KernelOptions): Promise<Kernel> {
  const ws = resolveWorkspace(opts.workspace);
  const clock = opts.clock ?? SYSTEM_CLOCK;
  const log = opts.logger ?? new Logger(opts.logLevel ?? 'error', opts.logSink, () => clock.now());
  let settings = opts.settings;
  if (!settings) {
    const loaded = await loadKernelConfig(ws, { env: opts.env ?? {}, settingsEnvPrefix: opts.settingsEnvPrefix });
    // Only logged: a library host reports its config file itself (tugcode's loader reads [kernel] too); the
    // front doors put them in the output (cli/commands.ts, docs/kernel.md §5.3).
    for (const w of loaded.warnings) log.warn(w.message);
    settings = withFlags(loaded, flagsOf(opts)).settings;
  }
  const o = applySettings(opts, settings);
  const sessionDir = resolve(o.sessionDir ?? join(ws, '.tug'));
  // A workspace over max_workspace_files is refused before its session directory exists (§10.1): nothing
  // is written, and no huge tree is listed to its end.
  await assertWorkspaceBounded(ws, {
    sessionRel: sessionRelative(ws, sessionDir),
    hostDirs: o.hostDirs,
    hostFiles: o.hostFiles,
    include: o.include,
    exclude: o.exclude,
    env: o.env ?? {},
    maxFiles: settings.max_workspace_files,
    purpose: 'snapshot',
  });
  const warnings: KernelWarning[] = [];
  const session = await Session.open(
    {
      workspace: ws,
      sessionDir,
      fresh: o.fresh,
      lockTimeoutS: o.lockTimeoutS,
      noWait: o.noWait,
      command: o.command,
      log,
      clock,
      hold: o.holdLock,
    },
    warnings,
  );
  log.attach(sessionDir);
  log.info('kernel open', { workspace: ws, command: o.command ?? null, settings });
  // Sandboxes left by SIGKILLed calls (docs/kernel.md §11.1): one readdir when there are none.
  const swept = sweepSandboxes(tmpdir());
  if (swept.length > 0) log.info('removed sandboxes of dead calls', { sandboxes: swept });
  return new KernelImpl(ws, sessionDir, session, o, warnings, settings, log, clock);
}

class KernelImpl implements Kernel {
  /** Decoded texts and line indexes reused across operations (content-checked). */
  private readonly fileCache = new FileCache();
  /** The warm backends (TypeScript in process, pyright / rust-analyzer), kept across operations. */
  private readonly backends: BackendPool;

  constructor(
    readonly workspace: string,
    readonly sessionDir: string,
    private readonly session: Session,
    private readonly o: KernelOptions,
    private pendingWarnings: KernelWarning[],
    readonly settings: KernelSettings,
    private readonly log: Logger,
    private readonly clock: KernelClock,
  ) {
    this.backends = new BackendPool(workspace, sessionDir, o, log, this.fileCache);
  }

  /** Whether an operation has succeeded: a kernel that only refused leaves no session it created (close). */
  private succeeded = false;
  private attempted = false;
  private nesting = 0;

  /**
   * One operation under the session lock (re-entrant: `run` nests prepare, verify and apply). Without
   * `holdLock` the lock is taken here and released at the end, so other `tug` calls get in between.
   */
  private async locked<T>(f: () => Promise<T>): Promise<T> {
    this.attempted = true;
    await this.session.acquire(this.pendingWarnings);
    this.nesting++;
    try {
      const r = await f();
      // Only a whole call counts: `run` whose prepare passed but whose verification failed was refused.
      if (this.nesting === 1) this.succeeded = true;
      return r;
    } finally {
      this.nesting--;
      await this.session.done();
    }
  }

  /** Warnings of one call, starting with those of opening the session. */
  private warnings(): KernelWarning[] {
    const w = this.pendingWarnings;
    this.pendingWarnings = [];
    return [...w];
  }

  /** What no listing of this workspace includes: the session inside it, the host's own files. */
  private excluded(): Exclusions {
    return {
      sessionRel: sessionRelative(this.workspace, this.sessionDir),
      hostDirs: this.o.hostDirs,
      hostFiles: this.o.hostFiles,
    };
  }

  /** The last snapshot: unchanged files (stat-equal, not racy) are not read again by the next one. */
  private lastSnap: Snapshot | null = null;

  private async takeSnapshot(): Promise<Snapshot> {
    const t0 = performance.now();
    const s = await takeSnapshot(
      this.workspace,
      {
        ...this.excluded(),
        include: this.o.include,
        exclude: this.o.exclude,
        env: this.o.env ?? {},
        maxFiles: this.settings.max_workspace_files,
        purpose: 'snapshot',
      },
      this.lastSnap,
    );
    this.lastSnap = s;
    this.log.info('snapshot', { id: s.id, files: s.files.size, ms: Math.round(performance.now() - t0) });
    return s;
  }

  snapshot(): Promise<SnapshotResult> {
    return this.locked(() => this.snapshotLocked());
  }

  private async snapshotLocked(): Promise<SnapshotResult> {
    const warnings = this.warnings();
    const snap = await this.takeSnapshot();
    this.session.storeSnapshot(snap);
    return {
      snapshot_id: snap.id,
      file_count: snap.files.size,
      total_bytes: snap.total_bytes,
      files_by_language: filesByLanguage(snap),
      stored: true,
      warnings: sortWarnings(warnings),
    };
  }

  private async prepareWith(op: OpSpec, warnings: KernelWarning[], o: { snapshotId?: string }): Promise<Prepared> {
    this.session.assertLockHeld();
    const safety = (op.op === 'rename-symbol' ? op.safety : undefined) ?? this.o.safety ?? 'strict';
    const opHashValue = opHashOf(op, safety);
    // 1. arguments and the new name's syntax
    const { file, language, symbolSel } = await opTargetOf(this.workspace, op);
    // 3. snapshot and freshness
    const snap = await this.takeSnapshot();
    try {
      // Only an explicit --snapshot-id binds a run to what was analysed (§10.2): an earlier analysis never blocks.
      if (o.snapshotId && o.snapshotId !== snap.id) this.mismatch(o.snapshotId, snap, 'snapshot_id');
      this.fileCache.prune(snap);
      if (!snap.files.has(file))
        throw new KernelError('FileNotFound', `${file} is not in the source set (ignored or excluded)`, { path: file });
      const files = new WorkspaceFiles(this.workspace, snap, this.fileCache);
      const backend = await this.backends.get(language, snap, files, warnings);
      const prepared = await planPrepared(
        { files, backend, snapshotId: snap.id, warnings },
        op,
        { file, language, symbolSel },
        snap,
        opHashValue,
        safety,
      );
      // Stored once the operation is accepted: a refused one writes nothing.
      this.session.storeSnapshot(snap);
      return prepared;
    } catch (e) {
      if (e instanceof KernelError && !e.snapshotId) e.snapshotId = snap.id;
      throw e;
    }
  }

  private mismatch(expected: string, snap: Snapshot, why: 'snapshot_id' | 'apply'): never {
    const inv = this.session.loadInventory(expected);
    const changed = inv ? changedFiles(inv, snap.files) : [];
    const details: Record<string, unknown> = {
      expected_snapshot_id: expected,
      actual_snapshot_id: snap.id,
      changed_files: changed,
    };
    if (!inv) details.reason = 'unknown_snapshot';
    // The recovery of §10.2, in the message a user reads.
    const hint =
      why === 'snapshot_id'
        ? 'analyse again and pass its snapshot_id, or run without --snapshot-id'
        : 'something wrote to the workspace during the run; run the operation again';
    throw new KernelError('SnapshotMismatch', `the workspace changed since ${expected} (${why}): ${hint}`, details, {
      snapshotId: snap.id,
    });
  }

  analyzeImpact(op: OpSpec): Promise<AnalyzeResult> {
    return this.locked(() => this.analyzeLocked(op));
  }

  private async analyzeLocked(op: OpSpec): Promise<AnalyzeResult> {
    const p = await this.prepareWith(op, this.warnings(), {});
    const base = { snapshot_id: p.snapshot_id, operation: p.operation, op_hash: p.op_hash };
    if (op.op === 'organize-imports') {
      return {
        ...base,
        file: p.patchSet.files[0]?.path ?? normalizeFileArg(this.workspace, op.file, '--file').path,
        impact: {
          files_affected: p.summary.files_changed,
          references_count: 0,
          edits_estimated: p.summary.edits_count,
        },
        warnings: p.warnings,
      };
    }
    return {
      ...base,
      symbol: p.symbol!,
      new_name: p.newName!,
      references: p.references,
      impact: {
        files_affected: p.summary.files_changed,
        references_count: p.references.length,
        edits_estimated: p.summary.edits_count,
      },
      warnings: p.warnings,
    };
  }

  prepare(op: OpSpec, o: { snapshotId?: string } = {}): Promise<Prepared> {
    return this.locked(() =>
      this.log.time(
        `prepare ${op.op}`,
        () => this.prepareWith(op, this.warnings(), { snapshotId: o.snapshotId }),
        (p) => ({ op_hash: p.op_hash, ...p.summary, warnings: p.warnings.length }),
      ),
    );
  }

  verifyPrepared(p: Prepared, mode: VerifyMode): Promise<import('./types.js').Verification> {
    return this.locked(() =>
      this.log.time(
        `verify ${mode}`,
        () => verifyPatch(this.verifyContext(p.warnings), p, mode),
        (v) => ({ status: v.status, checks: v.checks.map((c) => `${c.name}:${c.status}`) }),
      ),
    );
  }

  /** What the verifiers need; `warnings` receives theirs (a skipped lower stage, §11.4). */
  private verifyContext(warnings: KernelWarning[]): VerifyContext {
    return {
      workspace: this.workspace,
      sessionDir: this.sessionDir,
      options: this.o,
      env: this.o.env ?? {},
      excluded: this.excluded(),
      bounds: {
        maxFiles: this.settings.max_workspace_files,
        maxBytes: this.settings.max_sandbox_mb * 1024 * 1024,
        purpose: 'sandbox',
      },
      warnings,
    };
  }

  apply(p: Prepared): Promise<ApplyResult> {
    return this.locked(() => this.applyLocked(p));
  }

  private async applyLocked(p: Prepared): Promise<ApplyResult> {
    if (p.patchSet.edits.length === 0)
      return { snapshot_id: p.snapshot_id, applied: false, files_written: [], snapshot_after: p.snapshot_after };
    this.session.assertLockHeld();
    // Phase A re-hashes the whole source set (closes the window of long sandbox runs).
    const now = await this.takeSnapshot();
    if (now.id !== p.snapshot_id) this.mismatch(p.snapshot_id, now, 'apply');
    try {
      const resolved = resolvePatch(this.workspace, p.patchSet);
      const written = writeResolved(this.workspace, resolved, {
        sessionDir: this.sessionDir,
        opHash: p.op_hash,
        io: faultIo(this.o.env ?? {}),
        now: () => this.clock.now(),
      });
      this.log.info('applied', { op_hash: p.op_hash, files_written: written });
      const after = await this.takeSnapshot();
      this.session.storeSnapshot(after);
      await this.backends.syncAfterApply(after);
      return { snapshot_id: p.snapshot_id, applied: true, files_written: written, snapshot_after: after.id };
    } catch (e) {
      if (e instanceof KernelError && !e.snapshotId) e.snapshotId = p.snapshot_id;
      throw e;
    }
  }

  run(op: OpSpec, o: { apply: boolean; verify: VerifyMode; snapshotId?: string }): Promise<RunResult> {
    return this.locked(() => this.runLocked(op, o));
  }

  private async runLocked(
    op: OpSpec,
    o: { apply: boolean; verify: VerifyMode; snapshotId?: string },
  ): Promise<RunResult> {
    const p = await this.prepare(op, { snapshotId: o.snapshotId });
    const base = {
      snapshot_id: p.snapshot_id,
      operation: p.operation,
      op_hash: p.op_hash,
      symbol: p.symbol,
      patch: { edits: p.edits, unified_diff: p.unified_diff },
      summary: p.summary,
    };
    const tail = {
      undo_token: undoToken(p.snapshot_id, p.op_hash),
      applied: false,
      files_written: [] as string[],
      snapshot_after: p.snapshot_after,
    };
    let verification;
    try {
      verification = await this.verifyPrepared(p, o.verify);
    } catch (e) {
      if (e instanceof KernelError && e.exitCode === 5) {
        e.snapshotId ??= p.snapshot_id;
        e.extra = { ...base, verification: e.extra?.verification, warnings: p.warnings, ...tail };
        delete (e.extra as Record<string, unknown>).snapshot_id;
      }
      throw e;
    }
    if (!o.apply || p.patchSet.edits.length === 0) return { ...base, verification, warnings: p.warnings, ...tail };
    const a = await this.apply(p);
    return {
      ...base,
      verification,
      warnings: p.warnings,
      ...tail,
      applied: a.applied,
      files_written: a.files_written,
      snapshot_after: a.snapshot_after,
    };
  }

  verify(mode: Exclude<VerifyMode, 'none'>): Promise<VerifyResult> {
    return this.locked(() => this.verifyLocked(mode));
  }

  private async verifyLocked(mode: Exclude<VerifyMode, 'none'>): Promise<VerifyResult> {
    const warnings = this.warnings();
    const snap = await this.takeSnapshot();
    this.session.storeSnapshot(snap);
    try {
      const verification = await verifyWorkspace(this.verifyContext(warnings), snap, mode);
      return { snapshot_id: snap.id, mode, passed: true, verification, warnings: sortWarnings(warnings) };
    } catch (e) {
      if (e instanceof KernelError) {
        e.snapshotId ??= snap.id;
        if (e.exitCode === 5) e.extra = { mode, passed: false, verification: e.extra?.verification };
      }
      throw e;
    }
  }

  /**
   * Stop the backends and release the lock. A kernel whose every operation was refused (and that made at
   * least one attempt) removes the session directory its open created: a refused command writes nothing.
   */
  async close(): Promise<void> {
    await this.backends.close();
    this.log.info('kernel close');
    await this.session.close({ discard: this.attempted && !this.succeeded });
  }
}

/** Test seam (NODE_ENV=test only): TUG_FAULT=write:<k> fails the k-th rename of an apply. */
function faultIo(env: Record<string, string | undefined>): ApplyIo | undefined {
  const m = env.NODE_ENV === 'test' ? /^write:(\d+)$/.exec(env.TUG_FAULT ?? '') : null;
  if (!m) return undefined;
  let n = 0;
  const k = Number(m[1]);
  return {
    ...realIo,
    rename: (a, b) => {
      if (++n === k) throw new Error('injected write failure (TUG_FAULT)');
      realIo.rename(a, b);
    },
  };
}
