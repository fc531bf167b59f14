/**
 * The Rust check (05-kernel.md §11.2): `cargo check --all-targets --message-format=json` in the sandbox,
 * error-level compiler messages only, with `CARGO_TARGET_DIR=<session>/cargo-target` shared across runs.
 * Under `typecheck` its result is reused.
 */
import { join } from 'node:path';
import type { Diagnostic } from '../types.js';
import { runCapture, type Captured } from './proc.js';

export const CARGO_CHECK_ARGV = ['cargo', 'check', '--all-targets', '--message-format=json'];

export function cargoEnv(sessionDir: string): Record<string, string> {
  return { CARGO_TARGET_DIR: join(sessionDir, 'cargo-target') };
}

export interface CargoCheckResult {
  proc: Captured;
  diagnostics: Diagnostic[];
  unavailable: string | null;
}

/** Parse cargo's JSON lines: `compiler-message` entries of level error, at their primary span. */
export function parseCargoMessages(stdout: string): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const line of stdout.split('\n')) {
    if (!line.startsWith('{')) continue;
    let m: {
      reason?: string;
      message?: {
        level?: string;
        message?: string;
        code?: { code?: string } | null;
        spans?: { file_name: string; line_start: number; column_start: number; is_primary: boolean }[];
      };
    };
    try {
      m = JSON.parse(line);
    } catch {
      continue;
    }
    if (m.reason !== 'compiler-message' || m.message?.level !== 'error') continue;
    const span = m.message.spans?.find((s) => s.is_primary) ?? m.message.spans?.[0];
    out.push({
      file: span?.file_name ?? '',
      line: span?.line_start ?? 1,
      col: span?.column_start ?? null,
      code: m.message.code?.code ?? null,
      message: m.message.message ?? '',
    });
  }
  return out;
}

export async function cargoCheck(root: string, sessionDir: string, timeoutMs: number): Promise<CargoCheckResult> {
  const proc = await runCapture(CARGO_CHECK_ARGV, root, timeoutMs, cargoEnv(sessionDir));
  if (proc.spawn_error) return { proc, diagnostics: [], unavailable: `cannot run cargo: ${proc.spawn_error}` };
  const diagnostics = parseCargoMessages(proc.stdout);
  // A failed build without any parsed error (e.g. no Cargo.toml, offline dependency fetch) still fails.
  if (proc.exit_code !== 0 && diagnostics.length === 0) {
    diagnostics.push({
      file: 'Cargo.toml',
      line: 1,
      col: null,
      code: null,
      message: `cargo check exited ${proc.exit_code}: ${proc.output.trim().split('\n').pop() ?? ''}`,
    });
  }
  return { proc, diagnostics, unavailable: null };
}
