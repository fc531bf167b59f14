/**
 * The processes that have a file open, read from Linux's /proc/<pid>/fd links: what names the holder of a
 * busy state.db (docs/state.md §1). Elsewhere, and for processes of other users (their fd directories are
 * unreadable), the answer is empty, and the caller words its message without a name.
 */
import { readdirSync, readFileSync, readlinkSync, realpathSync } from 'node:fs';

export interface Opener {
  pid: number;
  /** Its command line, cut to COMMAND_MAX characters. */
  command: string;
}

const COMMAND_MAX = 80;

/** Other processes than this one with `path` open, at most `limit`, by pid. Never throws. */
export function openersOf(path: string, limit = 5): Opener[] {
  let self: string;
  let pids: string[];
  let target: string;
  try {
    self = readlinkSync('/proc/self');
    pids = readdirSync('/proc').filter((n) => /^\d+$/.test(n));
    target = realpathSync(path);
  } catch {
    return [];
  }
  const out: Opener[] = [];
  for (const pid of pids.sort((a, b) => Number(a) - Number(b))) {
    if (out.length >= limit) break;
    if (pid === self) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    const open = fds.some((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`) === target;
      } catch {
        return false;
      }
    });
    if (open) out.push({ pid: Number(pid), command: commandOf(pid) });
  }
  return out;
}

function commandOf(pid: string): string {
  try {
    const words = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
    return words.length > COMMAND_MAX ? `${words.slice(0, COMMAND_MAX - 1)}…` : words;
  } catch {
    return '?';
  }
}

/**
 * Whether another process on this host has `path` open: a lock file a live git still holds. Where the host
 * cannot tell (not Linux), assumed yes, so a caller never removes a lock a live process may hold.
 */
export function heldOpen(path: string): boolean {
  if (process.platform !== 'linux') return true;
  return openersOf(path, 1).length > 0;
}
