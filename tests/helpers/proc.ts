/**
 * Whether a process lives, for tests that check what they started has gone (or that a lock's holder
 * is still there). No vitest imports: the global setup's helpers use it too.
 */
import { readdirSync, readFileSync } from 'node:fs';

/**
 * Alive and not a zombie. EPERM means it exists under another user. A zombie counts as dead: it has
 * ended, and in a container nothing may ever reap it.
 */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return true; // no /proc (not Linux): kill(0) answered
  }
}

/** The pids whose command line contains `text` (Linux: /proc), for a process that must be gone. */
export function running(text: string): number[] {
  const out: number[] = [];
  for (const p of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    let cmd = '';
    try {
      cmd = readFileSync(`/proc/${p}/cmdline`, 'utf8').replace(/\0/g, ' ');
    } catch {
      continue;
    }
    if (cmd.includes(text)) out.push(Number(p));
  }
  return out;
}
