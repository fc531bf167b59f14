/**
 * SIGINT/SIGTERM for the kernel front doors (docs/kernel.md §3.4): stop backends and verifier processes,
 * remove sandboxes and release the session lock (everything registered in ../lifecycle.ts), then exit
 * 130 (SIGINT) or 143 (SIGTERM), with no JSON guarantee. An apply in progress is synchronous, so it has
 * completed or rolled back before the handler runs. The exit itself belongs to the caller (`bin/tug.js`,
 * a host's front door), which passes it in and reports cleanup failures.
 */
import { abortAll } from '../lifecycle.js';

export const SIGNAL_EXIT = { SIGINT: 130, SIGTERM: 143 } as const;

/** Install the handlers; returns a function that removes them. */
export function installSignalHandlers(exit: (code: number, cleanupErrors: string[]) => void): () => void {
  const handlers = (Object.keys(SIGNAL_EXIT) as (keyof typeof SIGNAL_EXIT)[]).map((sig) => {
    const h = () => exit(SIGNAL_EXIT[sig], abortAll());
    process.on(sig, h);
    return [sig, h] as const;
  });
  return () => {
    for (const [sig, h] of handlers) process.off(sig, h);
  };
}
