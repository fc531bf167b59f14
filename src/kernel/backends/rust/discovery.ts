/**
 * rust-analyzer discovery and error mapping (docs/kernel.md §6.4). The backend is available only when
 * `<ra> --version` exits 0 within 10 s — a rustup proxy without the component is found on PATH but fails
 * this probe. Candidates: `--rust-analyzer` / `TUG_RA_PATH` / config (one explicit value), then PATH.
 */
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { KernelError, type KernelLocation } from '../../errors.js';
import { execQuery } from '../../exec.js';
import { which } from '../python/interpreter.js';

export interface RaProbe {
  available: boolean;
  path: string | null;
  version: string | null;
  searched: string[];
  probe_error: string | null;
}

function firstLine(s: string): string {
  return s.trim().split('\n')[0]?.trim() ?? '';
}

/** Run `<ra> --version` (10 s) with the kernel's environment, without blocking the event loop. */
export async function probeRustAnalyzer(
  explicit: string | null | undefined,
  env: Record<string, string | undefined>,
): Promise<RaProbe> {
  const searched: string[] = [];
  const cands: string[] = [];
  if (explicit) cands.push(explicit);
  else {
    const onPath = which('rust-analyzer', env);
    searched.push('PATH');
    if (onPath) cands.push(onPath);
  }
  let lastError: string | null = explicit ? null : 'rust-analyzer not found on PATH';
  for (const c of cands) {
    searched.push(c);
    const r = await execQuery([c, '--version'], { cwd: tmpdir(), env, timeoutMs: 10_000 });
    if (r.spawn_error) {
      lastError = `${c}: ${r.spawn_error}`;
      continue;
    }
    if (r.exit_code === 0)
      return { available: true, path: c, version: firstLine(r.stdout) || null, searched, probe_error: null };
    lastError = `${c} --version exited ${r.exit_code ?? r.signal}: ${firstLine(r.stderr) || firstLine(r.stdout)}`;
  }
  return { available: false, path: null, version: null, searched, probe_error: lastError };
}

export function unavailableError(p: RaProbe): KernelError {
  return new KernelError('BackendUnavailable', `rust-analyzer is not available: ${p.probe_error}`, {
    backend: 'rust-analyzer',
    searched: p.searched,
    probe_error: p.probe_error,
  });
}

/** The outermost directory holding a Cargo.toml at or above `file`, inside the workspace. */
export function cargoRoot(workspace: string, file: string): string {
  let dir = dirname(join(workspace, file));
  let found: string | null = null;
  for (;;) {
    if (existsSync(join(dir, 'Cargo.toml'))) found = dir;
    if (dir === workspace || relative(workspace, dir).startsWith('..')) break;
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  if (!found)
    throw new KernelError('NotCargoProject', `no Cargo.toml at or above ${file} inside the workspace`, { path: file });
  return found;
}

/**
 * Map a rust-analyzer error of a rename request (first match wins): proc-macro → UnsupportedInProcMacro,
 * macro → UnsupportedInMacro, "no references"/"not found" → SymbolNotFound, any other refusal →
 * NotRenameable. `location` is the target.
 */
export function mapRenameError(message: string, name: string | null, location: KernelLocation): KernelError {
  if (/proc.?macro/i.test(message)) {
    return new KernelError(
      'UnsupportedInProcMacro',
      `cannot rename inside a procedural macro expansion: ${message}`,
      { location, macro_location: null, suggestion: 'rename by hand, or change the macro input' },
      { location },
    );
  }
  if (/macro/i.test(message)) {
    return new KernelError(
      'UnsupportedInMacro',
      `cannot rename a symbol defined by a macro: ${message}`,
      {
        location,
        macro_location: location,
        suggestion: 'rename the macro invocation argument by hand, then run `tug verify syntax`',
      },
      { location },
    );
  }
  if (/no references|not found/i.test(message)) {
    return new KernelError(
      'SymbolNotFound',
      `rust-analyzer found no symbol at ${location.file}:${location.line}:${location.col}: ${message}`,
      { location, reason: 'no_identifier' },
      { location },
    );
  }
  return new KernelError(
    'NotRenameable',
    `rust-analyzer refused the rename: ${message}`,
    { location, name, reason: 'backend_refused', backend_message: message },
    { location },
  );
}
