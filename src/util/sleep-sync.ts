/**
 * A bounded synchronous pause, for the few synchronous paths that must wait a moment (a stdin pipe whose
 * writer has not written yet, a SQLite lock race that SQLite answers without its busy handler). Never in code
 * a long-running process runs between events.
 */
export function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
