/**
 * Python interpreter resolution (docs/kernel.md §6.3, the seed plan's [D10] extended) and sticky toolchain records
 * (§12.3). Candidates in order: `--python`/`TUG_PYTHON` (explicit), config `python`, `$VIRTUAL_ENV/bin/python`,
 * `$CONDA_PREFIX/bin/python`, `<workspace>/.venv/bin/python`, then `python3` and `python` on PATH. The first
 * that answers `-c "import sys;print(sys.version.split()[0])"` wins and is recorded in `toolchains.json`;
 * later calls reuse it unless an explicit value replaces it, or it vanished (then `ToolchainChanged`).
 */
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, isAbsolute, join } from 'node:path';
import type { KernelWarning } from '../../envelope.js';
import { execQuery } from '../../exec.js';
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

/** Run the version probe (../../exec.ts: never blocks the event loop); the version string or null. */
export async function probePython(
  path: string,
  env: Record<string, string | undefined> = {},
): Promise<{ version: string | null; error: string | null }> {
  const r = await execQuery([path, '-c', VERSION_SCRIPT], { cwd: tmpdir(), env, timeoutMs: 10_000 });
  if (r.spawn_error) return { version: null, error: r.spawn_error };
  if (r.timed_out) return { version: null, error: 'timed out' };
  if (r.exit_code !== 0)
    return { version: null, error: `exit ${r.exit_code}: ${r.stderr.trim().split('\n').pop() ?? ''}` };
  const v = r.stdout.trim();
  return /^\d+\.\d+/.test(v)
    ? { version: v, error: null }
    : { version: null, error: `unexpected output ${JSON.stringify(v)}` };
}

/** The first executable named `name` on PATH, or null. */
export function which(name: string, env: Record<string, string | undefined>): string | null {
  if (name.includes('/')) return existsSync(name) ? name : null;
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const p = join(dir, name);
    if (existsSync(p)) return p;
  }
  return null;
}

export function candidates(o: ResolveOptions): { path: string; source: PythonSource }[] {
  const env = o.env ?? {};
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
const keyOf = (o: ResolveOptions) =>
  [o.sessionDir, o.workspace, o.explicit, o.config, o.env?.PATH, o.env?.VIRTUAL_ENV, o.env?.CONDA_PREFIX]
    .map((v) => v ?? '')
    .join('\0');

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
 * Resolve the interpreter (sticky per session), probing candidates without blocking the event loop.
 * Returns null when no candidate answers; renames still work, the checks that need Python report
 * `unavailable`.
 */
export async function resolvePython(o: ResolveOptions, warnings: KernelWarning[] = []): Promise<PythonInfo | null> {
  if (memo.has(keyOf(o))) return memo.get(keyOf(o))!;
  let found = fromRecord(o, warnings);
  if (!found) {
    for (const c of candidates(o)) {
      if (c.path.includes('/') && !existsSync(c.path)) continue;
      const p = await probePython(c.path, o.env ?? {});
      if (p.version) {
        found = { path: c.path, version: p.version, source: c.source };
        break;
      }
    }
  }
  return remember(o, found);
}

/** The same as `resolvePython` (the name its asynchronous variant had). */
export const resolvePythonAsync = resolvePython;

/** Forget memoized resolutions (tests). */
export function clearPythonMemo(): void {
  memo.clear();
}
