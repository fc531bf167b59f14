/**
 * Implementers orphaned by a killed run (docs/run.md §1 item 3). An implementer leads its own process group,
 * so a SIGKILL of the driver leaves it running, and it could go on writing into a worktree the next run
 * adopts. While it runs, the worker records its group in `.tugtool/logs/<slug>/<worker>.pgid`; adopting
 * that worker's worktree ends the group — only when the process still runs in that worktree (a reused pid
 * is left alone).
 */
import { readFileSync, readlinkSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { runLogDir } from '../contract/layout.js';
import type { PidRecord } from '../git/git-thread.js';

export function pgidFile(mainRoot: string, slug: string, worker: string): string {
  return join(runLogDir(mainRoot, slug), `${worker}.pgid`);
}

/**
 * The record of a worker's agent group in its tree: the thread starting the agent writes it, and run/child.ts
 * removes it once the group is gone (git/git-thread.ts PidRecord).
 */
export function groupRecord(mainRoot: string, slug: string, tree: { worker: string; path: string }): PidRecord {
  return { path: pgidFile(mainRoot, slug, tree.worker), fields: { worktree: tree.path } };
}

/** The working directory of a live process (Linux /proc), else null. */
function cwdOf(pid: number): string | null {
  try {
    return readlinkSync(`/proc/${pid}/cwd`);
  } catch {
    return null;
  }
}

/** End the group recorded in `file` when its leader still runs in `worktree`; returns whether it did. */
export function endOrphan(file: string, worktree: string): boolean {
  let rec: { pid: number; worktree: string };
  try {
    rec = JSON.parse(readFileSync(file, 'utf8')) as { pid: number; worktree: string };
  } catch {
    return false;
  }
  rmSync(file, { force: true });
  if (!Number.isInteger(rec.pid) || rec.pid <= 1 || rec.worktree !== worktree) return false;
  const cwd = cwdOf(rec.pid);
  if (cwd === null || !(cwd === worktree || cwd.startsWith(worktree + '/'))) return false;
  try {
    process.kill(-rec.pid, 'SIGKILL');
    return true;
  } catch {
    return false;
  }
}
