/**
 * `session status` and `session clean` (docs/kernel.md §4.4, §12.3). Status never creates the session dir.
 */
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { KernelError } from './errors.js';
import type { KernelWarning } from './envelope.js';
import type { KernelClock } from './types.js';
import {
  dirBytes,
  KERNEL_VERSION,
  listSnapshots,
  readLockInfo,
  readPidFiles,
  readSessionJson,
  readToolchains,
  Session,
} from './session.js';
import { readFileSync } from 'node:fs';

export function sessionStatus(workspace: string, sessionDir: string): Record<string, unknown> {
  const exists = existsSync(sessionDir);
  const sj = exists ? readSessionJson(sessionDir) : null;
  const tool = exists ? readToolchains(sessionDir) : {};
  const pick = <K extends string>(v: Record<string, string> | undefined, keys: K[]): Record<K, string> | null => {
    if (!v || keys.some((k) => typeof v[k] !== 'string')) return null;
    return Object.fromEntries(keys.map((k) => [k, v[k]])) as Record<K, string>;
  };
  let current: string | null = null;
  try {
    current = readFileSync(join(sessionDir, 'snapshots', 'current'), 'utf8').trim() || null;
  } catch {
    current = null;
  }
  return {
    session: {
      path: sessionDir,
      exists,
      created_at: sj?.created_at ?? null,
      last_accessed: sj?.last_accessed ?? null,
      workspace_root: workspace,
      kernel_version: KERNEL_VERSION,
    },
    toolchains: {
      typescript: pick(tool.typescript, ['version']),
      pyright: pick(tool.pyright, ['version']),
      python: pick(tool.python, ['interpreter', 'version', 'source']),
      rust_analyzer: pick(tool.rust_analyzer, ['path', 'version']),
      cargo: pick(tool.cargo, ['version']),
    },
    lock: readLockInfo(sessionDir),
    backends: exists ? readPidFiles(sessionDir) : [],
    snapshots: { current, stored: exists ? listSnapshots(sessionDir) : [] },
    journal_pending: existsSync(join(sessionDir, 'apply.journal.json')),
    disk: { session_bytes: exists ? dirBytes(sessionDir) : 0 },
  };
}

export async function sessionClean(
  o: {
    workspace: string;
    sessionDir: string;
    all: boolean;
    lockTimeoutS?: number;
    noWait?: boolean;
    clock?: KernelClock;
  },
  warnings: KernelWarning[],
): Promise<Record<string, unknown>> {
  if (!existsSync(o.sessionDir)) return { all: o.all, removed: [], bytes_freed: 0 };
  let session: Session;
  try {
    session = await Session.open(
      {
        workspace: o.workspace,
        sessionDir: o.sessionDir,
        lockTimeoutS: o.lockTimeoutS,
        noWait: o.noWait,
        command: 'session clean',
        clock: o.clock,
        hold: true,
      },
      warnings,
    );
  } catch (e) {
    if (e instanceof KernelError && e.code === 'SessionCorrupt') throw e;
    throw e;
  }
  if (!o.all) {
    const r = session.wipe(true);
    await session.close();
    return { all: false, removed: [...r.removed, ...session.removedPidFiles].sort(), bytes_freed: r.bytes };
  }
  const r = session.wipe(false);
  await session.close();
  const rest = dirBytes(o.sessionDir);
  rmSync(o.sessionDir, { recursive: true, force: true });
  return { all: true, removed: [...r.removed, '.'].sort(), bytes_freed: r.bytes + rest };
}
