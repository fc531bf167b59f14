/**
 * Interruption cleanup (docs/kernel.md §3.4 "Signals", §12): resources that must not outlive an interrupted
 * call — the session lock, sandboxes, verifier process groups, backend processes — register a synchronous
 * cleanup here and unregister it when they are released normally. The CLI's SIGINT/SIGTERM handler runs
 * `abortAll()` and then exits 130/143; the kernel itself never exits.
 *
 * Applies need no entry: the write phase of §9.4 is synchronous, so a signal is handled only before it
 * starts or after it has completed (or rolled back), and the journal is always consistent.
 */

type Cleanup = () => void;

/** Registration order; cleanups run newest first (children before the lock that guards them). */
const cleanups = new Map<number, { what: string; fn: Cleanup }>();
let next = 0;

/** Register a cleanup; returns the function that unregisters it. */
export function onAbort(what: string, fn: Cleanup): () => void {
  const id = next++;
  cleanups.set(id, { what, fn });
  return () => void cleanups.delete(id);
}

/** Run every registered cleanup, newest first; failures are collected, never thrown. */
export function abortAll(): string[] {
  const errors: string[] = [];
  const entries = [...cleanups.entries()].reverse();
  cleanups.clear();
  for (const [, c] of entries) {
    try {
      c.fn();
    } catch (e) {
      errors.push(`${c.what}: ${(e as Error).message}`);
    }
  }
  return errors;
}
