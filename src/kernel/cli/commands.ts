/**
 * The one command table shared by `tug` and every host front door that serves it (docs/kernel.md §2.1,
 * §3.1): each command returns its key-ordered envelope; rendering (JSON / --text) and exit codes live in
 * `tug.ts`.
 */
import { basename, dirname, resolve } from 'node:path';
import { KernelError } from '../errors.js';
import { okEnvelope, sortWarnings, type KernelWarning } from '../envelope.js';
import { openKernel, resolveWorkspace, type Kernel } from '../kernel.js';
import { applySettings, loadKernelConfig, withFlags, type KernelSettings } from '../config.js';
import { Logger } from '../log.js';
import type { HostOptions, KernelClock, KernelOptions } from '../types.js';
import type { ParsedArgs } from './args.js';

/** A front door's call: its environment, directory and what its host says of itself (types.ts). */
export interface CommandEnv extends HostOptions {
  env: Record<string, string | undefined>;
  cwd: string;
  /** Receives log lines (stderr), at the --log-level / TUG_LOG_LEVEL level. */
  logSink?: (line: string) => void;
}

function omitSnapshot(r: Record<string, unknown>): { id: string | undefined; fields: Record<string, unknown> } {
  const { snapshot_id, ...fields } = r;
  return { id: snapshot_id as string | undefined, fields };
}

/**
 * Flags over the environment and config files (docs/kernel.md §3.1); `warnings` receives the unknown keys
 * (`ConfigUnknownKey`), which the call's output carries (`withCallWarnings`).
 */
export async function settingsFor(
  a: ParsedArgs,
  ws: string,
  ce: CommandEnv,
  log: Logger,
  warnings: KernelWarning[],
): Promise<KernelSettings> {
  const loaded = await loadKernelConfig(ws, { env: ce.env, settingsEnvPrefix: ce.settingsEnvPrefix });
  warnings.push(...loaded.warnings);
  if (loaded.files.length > 0) log.info('configuration', { files: loaded.files, sources: loaded.sources });
  return withFlags(loaded, {
    verify: a.verify,
    lock_timeout: a.lockTimeoutS,
    python: a.python,
    rust_analyzer: a.rustAnalyzer,
    safety: a.safety,
    include: a.include,
    exclude: a.exclude,
    test_command: a.testCommand,
    test_timeout: a.testTimeoutS,
  }).settings;
}

/**
 * The clock of a CLI call: `TUG_NOW` when it is a valid instant, else the system clock. The front door is
 * the one place the kernel's time and environment are read (a host maps its own clock variable onto it).
 */
export function cliClock(env: Record<string, string | undefined>): KernelClock {
  const fixed = env.TUG_NOW;
  if (fixed && !Number.isNaN(Date.parse(fixed))) {
    const iso = new Date(fixed).toISOString();
    return { now: () => iso };
  }
  return { now: () => new Date().toISOString() };
}

export function kernelOptions(
  a: ParsedArgs,
  ws: string,
  command: string,
  settings: KernelSettings,
  ce: CommandEnv,
  logger: Logger,
): KernelOptions {
  return applySettings<KernelOptions>(
    {
      workspace: ws,
      clock: cliClock(ce.env),
      // One command, one lock: held from open to close, as §3.1 describes.
      holdLock: true,
      sessionDir: a.sessionDir ? resolve(a.sessionDir) : undefined,
      fresh: a.fresh,
      noWait: a.noWait,
      keepSandbox: a.keepSandbox,
      logLevel: a.logLevel,
      logger,
      command,
      env: ce.env,
      settingsEnvPrefix: ce.settingsEnvPrefix,
      hostDirs: ce.hostDirs,
      hostFiles: ce.hostFiles,
      settings,
    },
    settings,
  );
}

/**
 * The envelope of a call (or the error it threw) with warnings of the call itself added, such as unknown
 * config keys (docs/kernel.md §5.3): every command reports them, an error envelope too.
 */
export async function withCallWarnings(
  warnings: KernelWarning[],
  f: () => Promise<Record<string, unknown>>,
): Promise<Record<string, unknown>> {
  let env: Record<string, unknown>;
  try {
    env = await f();
  } catch (e) {
    if (e instanceof KernelError && warnings.length > 0) {
      const had = (e.extra?.warnings as KernelWarning[] | undefined) ?? [];
      e.extra = { ...e.extra, warnings: sortWarnings([...had, ...warnings]) };
    }
    throw e;
  }
  if (warnings.length === 0) return env;
  return { ...env, warnings: sortWarnings([...((env.warnings as KernelWarning[] | undefined) ?? []), ...warnings]) };
}

/** Run one parsed command; returns the ok envelope or throws a KernelError. */
export async function executeCommand(a: ParsedArgs, ce: CommandEnv): Promise<Record<string, unknown>> {
  const ws = resolveWorkspace(a.workspace ? resolve(ce.cwd, a.workspace) : ce.cwd);
  if (ce.env.NODE_ENV === 'test' && ce.env.TUG_FAULT === 'internal')
    throw new Error('injected internal fault (TUG_FAULT=internal)');
  const clock = cliClock(ce.env);
  const log = new Logger(a.logLevel ?? 'error', ce.logSink, () => clock.now());
  const warnings: KernelWarning[] = [];
  const settings = await settingsFor(a, ws, ce, log, warnings);
  return withCallWarnings(warnings, () => commandOn(a, ce, ws, settings, log, clock));
}

async function commandOn(
  a: ParsedArgs,
  ce: CommandEnv,
  ws: string,
  settings: KernelSettings,
  log: Logger,
  clock: KernelClock,
): Promise<Record<string, unknown>> {
  const sessionDir = a.sessionDir ? resolve(ce.cwd, a.sessionDir) : resolve(ws, '.tug');
  switch (a.command) {
    case 'session status': {
      const { sessionStatus } = await import('../status.js');
      return okEnvelope(undefined, { ...sessionStatus(ws, sessionDir), warnings: [] });
    }
    case 'session clean': {
      const { sessionClean } = await import('../status.js');
      const warnings: KernelWarning[] = [];
      const r = await sessionClean(
        { workspace: ws, sessionDir, all: a.all, lockTimeoutS: settings.lock_timeout, noWait: a.noWait, clock },
        warnings,
      );
      return okEnvelope(undefined, { ...r, warnings: sortWarnings(warnings) });
    }
    case 'doctor': {
      const { doctor } = await import('../doctor.js');
      return okEnvelope(undefined, {
        ...(await doctor(sessionDir, {
          python: settings.python ?? undefined,
          rustAnalyzer: settings.rust_analyzer ?? undefined,
          env: ce.env,
          workspace: basename(sessionDir) === '.tug' ? dirname(sessionDir) : ce.cwd,
        })),
        warnings: [],
      });
    }
    default:
      break;
  }
  const kernel = await openKernel({ ...kernelOptions(a, ws, a.command, settings, ce, log), sessionDir });
  try {
    return await runOnKernel(kernel, a, settings);
  } finally {
    await kernel.close();
  }
}

/** One kernel command on an open kernel (the CLI's, or a warm one of a long-lived front door): its envelope. */
export async function runOnKernel(
  kernel: Kernel,
  a: ParsedArgs,
  settings: KernelSettings,
): Promise<Record<string, unknown>> {
  let r: Record<string, unknown>;
  switch (a.command) {
    case 'snapshot':
      r = { ...(await kernel.snapshot()) };
      break;
    case 'analyze-impact':
      r = { ...(await kernel.analyzeImpact(a.op!)) };
      break;
    case 'run':
      r = { ...(await kernel.run(a.op!, { apply: a.apply, verify: settings.verify, snapshotId: a.snapshotId })) };
      break;
    case 'verify':
      r = { ...(await kernel.verify(a.verifyMode!)) };
      break;
    default:
      throw new KernelError('InternalError', `unhandled command ${a.command}`, {
        message: `unhandled command ${a.command}`,
      });
  }
  const { id, fields } = omitSnapshot(r);
  return okEnvelope(id, fields);
}
