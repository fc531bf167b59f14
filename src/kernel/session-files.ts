/**
 * Session files besides the lock (docs/kernel.md §12.1, §12.3): sticky toolchains in toolchains.json and
 * backend pid files in backends/<name>.pid.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { readJsonFile as readJson, writeAtomic } from './atomic.js';

/* ---------------------------------------------------------------------------------------------------
 * Toolchains (§12.3): sticky tool paths and versions in toolchains.json.
 * ------------------------------------------------------------------------------------------------- */

export type ToolchainName = 'typescript' | 'pyright' | 'python' | 'rust_analyzer' | 'cargo';

export function readToolchains(sessionDir: string): Partial<Record<ToolchainName, Record<string, string>>> {
  const j = readJson(join(sessionDir, 'toolchains.json'));
  return j && typeof j === 'object' && !Array.isArray(j) ? j : {};
}

/** Record (or replace) one tool's sticky values; written only when they change. */
export function recordToolchain(sessionDir: string, name: ToolchainName, value: Record<string, string>): void {
  const cur = readToolchains(sessionDir);
  if (JSON.stringify(cur[name]) === JSON.stringify(value)) return;
  cur[name] = value;
  try {
    writeAtomic(join(sessionDir, 'toolchains.json'), JSON.stringify(cur));
  } catch {
    // the session dir vanished (session clean --all by another process): the value is simply not sticky
  }
}

/* ---------------------------------------------------------------------------------------------------
 * Backend pid files (§12.1, §12.3): `backends/<name>.pid` holds "<pid>\n<start>\n<owner>\n<owner start>\n",
 * where <start> is the process start time from /proc (Linux), so that a reused pid is never mistaken for the
 * backend, and <owner> the kernel process that runs it. A kernel holds the lock per operation, so a live
 * owner's backends are warm, not orphans, even while another process holds the lock.
 * ------------------------------------------------------------------------------------------------- */

function startTimeOf(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? '';
  } catch {
    return '';
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Write `backends/<name>.pid` for a live backend (in-process backends record the kernel's own pid). */
export function writePidFile(sessionDir: string, name: string, pid: number): void {
  // Another live kernel process's backend of the same name keeps its file (kernels share a session dir
  // now that the lock is taken per operation); this one then goes unrecorded.
  if (ownedByOtherLiveProcess(sessionDir, name)) return;
  try {
    mkdirSync(join(sessionDir, 'backends'), { recursive: true });
    const owner = `${process.pid}\n${startTimeOf(process.pid)}\n`;
    writeAtomic(join(sessionDir, 'backends', `${name}.pid`), `${pid}\n${startTimeOf(pid)}\n${owner}`);
  } catch {
    // best effort: the pid file only serves status and orphan cleanup
  }
}

/** Remove a pid file, unless it belongs to another live kernel process (see writePidFile). */
export function removePidFile(sessionDir: string, name: string): void {
  if (ownedByOtherLiveProcess(sessionDir, name)) return;
  rmSync(join(sessionDir, 'backends', `${name}.pid`), { force: true });
}

export interface BackendPid {
  name: string;
  pid: number;
  alive: boolean;
}

/** Pid files, sorted by name; `alive` also checks that the pid was not reused (Linux). */
export function readPidFiles(sessionDir: string): BackendPid[] {
  const dir = join(sessionDir, 'backends');
  if (!existsSync(dir)) return [];
  const out: BackendPid[] = [];
  for (const n of readdirSync(dir)
    .filter((n) => n.endsWith('.pid'))
    .sort()) {
    let text = '';
    try {
      text = readFileSync(join(dir, n), 'utf8');
    } catch {
      continue;
    }
    const [p, start] = text.split('\n');
    const pid = Number(p);
    if (!Number.isSafeInteger(pid) || pid <= 0) {
      out.push({ name: n.slice(0, -4), pid: 0, alive: false });
      continue;
    }
    const now = startTimeOf(pid);
    out.push({ name: n.slice(0, -4), pid, alive: isAlive(pid) && (!start || !now || start === now) });
  }
  return out;
}

function readLines(sessionDir: string, name: string): string[] | null {
  try {
    return readFileSync(join(sessionDir, 'backends', `${name}.pid`), 'utf8').split('\n');
  } catch {
    return null;
  }
}

/** The kernel process that wrote a pid file, or null for a file without an owner line. */
export function pidFileOwner(sessionDir: string, name: string): number | null {
  const owner = Number(readLines(sessionDir, name)?.[2]);
  return Number.isSafeInteger(owner) && owner > 0 ? owner : null;
}

/** Whether the owner of a pid file is a live process other than this one (its start time checked too). */
function ownedByOtherLiveProcess(sessionDir: string, name: string): boolean {
  const lines = readLines(sessionDir, name);
  const owner = pidFileOwner(sessionDir, name);
  if (owner === null || owner === process.pid || !isAlive(owner)) return false;
  const start = lines?.[3] ?? '';
  const now = startTimeOf(owner);
  return !start || !now || start === now;
}

/**
 * §12.2 step 5, with the lock held: remove pid files of dead processes and SIGTERM live ones (orphans of a
 * process that lost the lock or died). The current process's own entries, and those of another live kernel
 * process (warm between its operations), are left alone.
 */
export function cleanPidFiles(sessionDir: string): { stopped: string[]; removed: string[] } {
  const stopped: string[] = [];
  const removed: string[] = [];
  for (const b of readPidFiles(sessionDir)) {
    if (b.pid === process.pid || pidFileOwner(sessionDir, b.name) === process.pid) continue;
    if (ownedByOtherLiveProcess(sessionDir, b.name)) continue;
    if (b.alive) {
      try {
        process.kill(b.pid, 'SIGTERM');
        stopped.push(b.name);
      } catch {
        // already gone
      }
    }
    removePidFile(sessionDir, b.name);
    removed.push(b.name);
  }
  return { stopped, removed };
}
