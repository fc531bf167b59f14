/**
 * Python interpreter resolution (05-kernel.md §6.3, seed 000 D10 extended) and sticky toolchain records
 * (§12.3). Candidates in order: `--python`/`TUG_PYTHON` (explicit), config `python`, `$VIRTUAL_ENV/bin/python`,
 * `$CONDA_PREFIX/bin/python`, `<workspace>/.venv/bin/python`, then `python3` and `python` on PATH. The first
 * that answers `-c "import sys;print(sys.version.split()[0])"` wins and is recorded in `toolchains.json`;
 * later calls reuse it unless an explicit value replaces it, or it vanished (then `ToolchainChanged`).
 */
import { execFile, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import type { KernelWarning } from '../../envelope.js';
import { readToolchains, recordToolchain } from '../../session.js';

export type PythonSource = 'flag' | 'config' | 'virtual_env' | 'conda' | 'workspace_venv' | 'path';

export interface PythonInfo {
  path: string;
  version: string;
  source: PythonSource;
}

export interface ResolveOptions {
  workspace: string;
  sessionDir?: string | null;
  /** `--python` or `TUG_PYTHON`. */
  explicit?: string | null;
  /** Config key `python`. */
  config?: string | null;
  env?: Record<string, string | undefined>;
}

const VERSION_SCRIPT = 'import sys;print(sys.version.split()[0])';

/** Run the version probe; the version string or null. */
export function probePython(path: string): { version: string | null; error: string | null } {
  const r = spawnSync(path, ['-c', VERSION_SCRIPT], { encoding: 'utf8', timeout: 10_000 });
  if (r.error) return { version: null, error: (r.error as NodeJS.ErrnoException).code ?? r.error.message };
  if (r.status !== 0)
    return { version: null, error: `exit ${r.status}: ${`${r.stderr}`.trim().split('\n').pop() ?? ''}` };
  const v = `${r.stdout}`.trim();
  return /^\d+\.\d+/.test(v)
    ? { version: v, error: null }
    : { version: null, error: `unexpected output ${JSON.stringify(v)}` };
}

/** The first executable named `name` on PATH, or null. */
export function which(name: string, env: Record<string, string | undefined> = process.env): string | null {
  if (name.includes('/')) return existsSync(name) ? name : null;
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const p = join(dir, name);
    if (existsSync(p)) return p;
  }
  return null;
}

export function candidates(o: ResolveOptions): { path: string; source: PythonSource }[] {
  const env = o.env ?? process.env;
  const out: { path: string; source: PythonSource }[] = [];
  const abs = (p: string) => (isAbsolute(p) || !p.includes('/') ? p : join(o.workspace, p));
  if (o.explicit) out.push({ path: abs(o.explicit), source: 'flag' });
  if (o.config) out.push({ path: abs(o.config), source: 'config' });
  if (env.VIRTUAL_ENV) out.push({ path: join(env.VIRTUAL_ENV, 'bin', 'python'), source: 'virtual_env' });
  if (env.CONDA_PREFIX) out.push({ path: join(env.CONDA_PREFIX, 'bin', 'python'), source: 'conda' });
  out.push({ path: join(o.workspace, '.venv', 'bin', 'python'), source: 'workspace_venv' });
  for (const n of ['python3', 'python']) {
    const p = which(n, env);
    if (p) out.push({ path: p, source: 'path' });
  }
  return out;
}

const memo = new Map<string, PythonInfo | null>();
const keyOf = (o: ResolveOptions) => `${o.sessionDir ?? ''}\0${o.workspace}\0${o.explicit ?? ''}\0${o.config ?? ''}`;

/** The recorded interpreter when it still exists (§12.3: reused without a new probe), else null. */
function fromRecord(o: ResolveOptions, warnings: KernelWarning[]): PythonInfo | null {
  const recorded = o.sessionDir ? readToolchains(o.sessionDir).python : undefined;
  if (o.explicit || !recorded || typeof recorded.interpreter !== 'string') return null;
  if (existsSync(recorded.interpreter)) {
    return {
      path: recorded.interpreter,
      version: recorded.version ?? '',
      source: (recorded.source as PythonSource) ?? 'path',
    };
  }
  warnings.push({
    code: 'ToolchainChanged',
    message: `the recorded python ${recorded.interpreter} is gone; resolved again`,
  });
  return null;
}

function remember(o: ResolveOptions, found: PythonInfo | null): PythonInfo | null {
  if (found && o.sessionDir && existsSync(o.sessionDir)) {
    recordToolchain(o.sessionDir, 'python', { interpreter: found.path, version: found.version, source: found.source });
  }
  memo.set(keyOf(o), found);
  return found;
}

/**
 * Resolve the interpreter (sticky per session). Returns null when no candidate answers; renames still
 * work, the checks that need Python report `unavailable`.
 */
export function resolvePython(o: ResolveOptions, warnings: KernelWarning[] = []): PythonInfo | null {
  if (memo.has(keyOf(o))) return memo.get(keyOf(o))!;
  let found = fromRecord(o, warnings);
  if (!found) {
    for (const c of candidates(o)) {
      if (c.path.includes('/') && !existsSync(c.path)) continue;
      const p = probePython(c.path);
      if (p.version) {
        found = { path: c.path, version: p.version, source: c.source };
        break;
      }
    }
  }
  return remember(o, found);
}

/** The version probe without blocking the event loop (a language server may be starting meanwhile). */
export function probePythonAsync(path: string): Promise<{ version: string | null; error: string | null }> {
  return new Promise((resolve) => {
    execFile(path, ['-c', VERSION_SCRIPT], { encoding: 'utf8', timeout: 10_000 }, (err, stdout) => {
      const v = `${stdout ?? ''}`.trim();
      if (err) resolve({ version: null, error: (err as NodeJS.ErrnoException).code?.toString() ?? err.message });
      else
        resolve(
          /^\d+\.\d+/.test(v)
            ? { version: v, error: null }
            : { version: null, error: `unexpected output ${JSON.stringify(v)}` },
        );
    });
  });
}

/** `resolvePython` with asynchronous probes (same order, record and memo). */
export async function resolvePythonAsync(
  o: ResolveOptions,
  warnings: KernelWarning[] = [],
): Promise<PythonInfo | null> {
  if (memo.has(keyOf(o))) return memo.get(keyOf(o))!;
  let found = fromRecord(o, warnings);
  if (!found) {
    for (const c of candidates(o)) {
      if (c.path.includes('/') && !existsSync(c.path)) continue;
      const p = await probePythonAsync(c.path);
      if (p.version) {
        found = { path: c.path, version: p.version, source: c.source };
        break;
      }
    }
  }
  return remember(o, found);
}

/** Forget memoized resolutions (tests). */
export function clearPythonMemo(): void {
  memo.clear();
}
