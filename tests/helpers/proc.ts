/**
 * Whether a process lives, for tests that check what they started has gone (or that a lock's holder
 * is still there). No vitest imports: the global setup's helpers use it too.
 */
import { readFileSync } from 'node:fs';

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
