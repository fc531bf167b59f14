/**
 * The Rust check (docs/kernel.md §11.2): `cargo check --all-targets --message-format=json` in the sandbox,
 * error-level compiler messages only, with `CARGO_TARGET_DIR=<session>/cargo-target` shared across runs.
 * Under `typecheck` its result is reused.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
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

/**
 * The Cargo roots (outermost directory with a Cargo.toml at or above, inside `root`) of the given `.rs`
 * files, sorted; `.rs` files outside any Cargo project have none and are not cargo-checked.
 */
export function cargoRoots(root: string, files: string[]): string[] {
  const out = new Set<string>();
  for (const f of files) {
    if (!f.endsWith('.rs')) continue;
    let dir = dirname(f);
    let found: string | null = null;
    for (;;) {
      if (existsSync(join(root, dir, 'Cargo.toml'))) found = dir;
      if (dir === '.' || dir === '') break;
      dir = dirname(dir);
    }
    if (found !== null) out.add(found);
  }
  return [...out].sort();
}

/** `cargo check` in each Cargo root; diagnostics get workspace-relative paths. */
export async function cargoCheck(
  root: string,
  cargoDirs: string[],
  sessionDir: string,
  timeoutMs: number,
  env: Record<string, string | undefined>,
): Promise<CargoCheckResult> {
  const diagnostics: Diagnostic[] = [];
  let exit: number | null = 0;
  let output = '';
  let duration = 0;
  let last: Captured | null = null;
  for (const d of cargoDirs) {
    const proc = await runCapture(CARGO_CHECK_ARGV, join(root, d), timeoutMs, {
      ...env,
      ...cargoEnv(sessionDir),
    });
    last = proc;
    duration += proc.duration_ms;
    if (proc.spawn_error) return { proc, diagnostics: [], unavailable: `cannot run cargo: ${proc.spawn_error}` };
    const prefix = d === '.' ? '' : `${d}/`;
    const found = parseCargoMessages(proc.stdout).map((x) => ({
      ...x,
      file: x.file.startsWith('/') ? x.file : prefix + x.file,
    }));
    // A failed build without any parsed error (e.g. an offline dependency fetch) still fails.
    if (proc.exit_code !== 0 && found.length === 0) {
      const why = proc.output.trim().split('\n').pop() ?? '';
      found.push({
        file: `${prefix}Cargo.toml`,
        line: 1,
        col: null,
        code: null,
        message: `cargo check exited ${proc.exit_code}: ${why}`,
      });
    }
    diagnostics.push(...found);
    if (proc.exit_code !== 0) exit = proc.exit_code;
    output += proc.output;
  }
  const base: Captured = last ?? {
    exit_code: 0,
    signal: null,
    timed_out: false,
    stdout: '',
    output: '',
    spawn_error: null,
    duration_ms: 0,
  };
  return {
    proc: { ...base, exit_code: exit, output: output.slice(-16384), duration_ms: duration },
    diagnostics,
    unavailable: null,
  };
}
