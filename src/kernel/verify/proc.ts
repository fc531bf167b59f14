/**
 * The subprocess runner of the verifiers: ../exec.ts (execa; argv only, never a shell; its own process
 * group, killed on timeout and on an interrupted call) with `TUG_SANDBOX=1` on top of the caller's
 * environment (§11.1); a 16 KiB tail of stdout+stderr for the check's `output`, and, when the caller needs
 * it (JSON reports of py-compile, the pyright CLI and cargo), stdout itself up to 64 MiB.
 */
import { execCapture } from '../exec.js';

export interface Captured {
  exit_code: number | null;
  signal: string | null;
  timed_out: boolean;
  stdout: string;
  output: string;
  spawn_error: string | null;
  duration_ms: number;
}

/** Run argv in the sandbox `cwd` with `env` (the whole environment, plus TUG_SANDBOX=1). */
export async function runCapture(
  argv: string[],
  cwd: string,
  timeoutMs: number,
  env: Record<string, string | undefined>,
  opts: { keepStdout?: boolean } = {},
): Promise<Captured> {
  const r = await execCapture(argv, {
    cwd,
    env: { ...env, TUG_SANDBOX: '1' },
    timeoutMs,
    keepStdout: opts.keepStdout ?? true,
  });
  return {
    exit_code: r.exit_code,
    signal: r.signal,
    timed_out: r.timed_out,
    stdout: r.stdout,
    output: r.output,
    spawn_error: r.spawn_error,
    duration_ms: r.duration_ms,
  };
}
