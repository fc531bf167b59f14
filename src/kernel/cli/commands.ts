/**
 * The one command table shared by `tug` and `tugcode refactor` (05-kernel.md §2.1, §3.1): each command
 * returns its key-ordered envelope; rendering (JSON / --text) and exit codes live in `tug.ts`.
 */
import { resolve } from 'node:path';
import { KernelError } from '../errors.js';
import { okEnvelope, sortWarnings, type KernelWarning } from '../envelope.js';
import { openKernel, resolveWorkspace } from '../kernel.js';
import type { KernelOptions } from '../types.js';
import type { ParsedArgs } from './args.js';

export interface CommandEnv {
  env: Record<string, string | undefined>;
  cwd: string;
}

function omitSnapshot(r: Record<string, unknown>): { id: string | undefined; fields: Record<string, unknown> } {
  const { snapshot_id, ...fields } = r;
  return { id: snapshot_id as string | undefined, fields };
}

function kernelOptions(a: ParsedArgs, ws: string, command: string): KernelOptions {
  return {
    workspace: ws,
    sessionDir: a.sessionDir ? resolve(a.sessionDir) : undefined,
    fresh: a.fresh,
    lockTimeoutS: a.lockTimeoutS,
    noWait: a.noWait,
    python: a.python,
    rustAnalyzer: a.rustAnalyzer,
    safety: a.safety,
    include: a.include,
    exclude: a.exclude,
    testCommand: a.testCommand,
    testTimeoutS: a.testTimeoutS,
    keepSandbox: a.keepSandbox,
    logLevel: a.logLevel,
    command,
  };
}

/** Run one parsed command; returns the ok envelope or throws a KernelError. */
export async function executeCommand(a: ParsedArgs, ce: CommandEnv): Promise<Record<string, unknown>> {
  const ws = resolveWorkspace(a.workspace ? resolve(ce.cwd, a.workspace) : ce.cwd);
  const sessionDir = a.sessionDir ? resolve(ce.cwd, a.sessionDir) : resolve(ws, '.tug');
  if (ce.env.NODE_ENV === 'test' && ce.env.TUG_FAULT === 'internal') throw new Error('injected internal fault (TUG_FAULT=internal)');
  switch (a.command) {
    case 'session status': {
      const { sessionStatus } = await import('../status.js');
      return okEnvelope(undefined, { ...sessionStatus(ws, sessionDir), warnings: [] });
    }
    case 'session clean': {
      const { sessionClean } = await import('../status.js');
      const warnings: KernelWarning[] = [];
      const r = await sessionClean({ workspace: ws, sessionDir, all: a.all, lockTimeoutS: a.lockTimeoutS, noWait: a.noWait }, warnings);
      return okEnvelope(undefined, { ...r, warnings: sortWarnings(warnings) });
    }
    case 'doctor': {
      const { doctor } = await import('../doctor.js');
      return okEnvelope(undefined, { ...(await doctor(sessionDir, { python: a.python, rustAnalyzer: a.rustAnalyzer })), warnings: [] });
    }
    default:
      break;
  }
  const kernel = await openKernel({ ...kernelOptions(a, ws, a.command), sessionDir });
  try {
    let r: Record<string, unknown>;
    switch (a.command) {
      case 'snapshot':
        r = { ...(await kernel.snapshot()) };
        break;
      case 'analyze-impact':
        r = { ...(await kernel.analyzeImpact(a.op!)) };
        break;
      case 'run':
        r = { ...(await kernel.run(a.op!, { apply: a.apply, verify: a.verify ?? 'syntax', snapshotId: a.snapshotId })) };
        break;
      case 'verify':
        r = { ...(await kernel.verify(a.verifyMode!)) };
        break;
      default:
        throw new KernelError('InternalError', `unhandled command ${a.command}`, { message: `unhandled command ${a.command}` });
    }
    const { id, fields } = omitSnapshot(r);
    return okEnvelope(id, fields);
  } finally {
    await kernel.close();
  }
}
