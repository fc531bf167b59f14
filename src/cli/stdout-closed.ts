/**
 * What a reader gone from stdout (EPIPE: `tugcode … | head -3`) does. A short command just ends, exit 0
 * (docs/output.md §3); `run` takes it over, since exiting there would leave its implementers running and
 * their claims held: it stops as on a signal and exits 141 (docs/run.md §1.1 item 5).
 */
let handler: (() => void) | null = null;

/** Hands the next EPIPE on stdout to `h` instead of exiting (null: back to the default). */
export function onStdoutClosed(h: (() => void) | null): void {
  handler = h;
}

/** Called by the entry point on EPIPE from stdout. */
export function stdoutClosed(): void {
  if (handler) handler();
  else process.exit(0);
}
