/**
 * Python checks (docs/kernel.md §11.2–11.3): `py-compile` runs the resolved interpreter over the files with a
 * script that compiles each one (`compile(open(f,'rb').read(), f, 'exec')`, so no `.pyc` is written) and
 * prints JSON diagnostics; `pyright` runs the bundled pyright CLI with `--outputjson` (errors only); test
 * detection yields pytest or unittest argv with the `{python}` placeholder.
 */
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative, sep } from 'node:path';
import { resolvePython, type PythonInfo } from '../backends/python/interpreter.js';
import { pyrightArgv, pyrightVersion } from '../backends/python/launch.js';
import { execCapture } from '../exec.js';
import type { Diagnostic } from '../types.js';
import { runCapture, type Captured } from './proc.js';

export const PY_COMPILE_SCRIPT = [
  'import json, sys',
  'out = []',
  'for f in sys.argv[1:]:',
  '    try:',
  "        compile(open(f, 'rb').read(), f, 'exec', dont_inherit=True)",
  '    except SyntaxError as e:',
  "        out.append({'file': f, 'line': e.lineno or 1, 'col': e.offset, 'code': type(e).__name__, 'message': str(e.msg)})",
  '    except (ValueError, UnicodeDecodeError) as e:',
  "        out.append({'file': f, 'line': 1, 'col': None, 'code': type(e).__name__, 'message': str(e)})",
  'print(json.dumps(out))',
].join('\n');

/** The interpreter for verification (resolved once per session, §12.3), or null. */
export function verifyPython(
  workspace: string,
  sessionDir: string,
  explicit: string | undefined,
  env: Record<string, string | undefined>,
): Promise<PythonInfo | null> {
  return resolvePython({ workspace, sessionDir, explicit, env });
}

export interface PyCompileResult {
  proc: Captured;
  diagnostics: Diagnostic[];
  /** Set when the check could not run. */
  unavailable: string | null;
}

/** Compile `files` (relative to root) with `python`; JSON diagnostics, one per failing file. */
export async function pyCompile(
  python: string,
  root: string,
  files: string[],
  timeoutMs: number,
  env: Record<string, string | undefined>,
): Promise<PyCompileResult> {
  const proc = await runCapture([python, '-c', PY_COMPILE_SCRIPT, ...files], root, timeoutMs, {
    ...env,
    PYTHONDONTWRITEBYTECODE: '1',
  });
  if (proc.spawn_error) return { proc, diagnostics: [], unavailable: `cannot run ${python}: ${proc.spawn_error}` };
  try {
    const raw = JSON.parse(proc.stdout.trim().split('\n').pop() ?? '[]') as {
      file: string;
      line: number;
      col: number | null;
      code: string;
      message: string;
    }[];
    return {
      proc,
      diagnostics: raw.map((d) => ({
        file: d.file,
        line: d.line,
        col: d.col ?? null,
        code: d.code,
        message: d.message,
      })),
      unavailable: null,
    };
  } catch {
    return {
      proc,
      diagnostics: [],
      unavailable: `py-compile printed no JSON (exit ${proc.exit_code}): ${proc.output.trim().split('\n').pop() ?? ''}`,
    };
  }
}

export function pyrightCliPath(): string {
  return createRequire(import.meta.url).resolve('pyright/index.js');
}

/** The version of the pyright that `pyrightCliPath` runs (a baseline cache key), or `unknown`. */
export function pyrightCliVersion(): string {
  return `pyright ${pyrightVersion() ?? 'unknown'}`;
}

export interface PyrightCliResult {
  proc: Captured;
  diagnostics: Diagnostic[];
  unavailable: string | null;
}

/** The pyright CLI over the sandbox: `--outputjson [--pythonpath PY]`, error-severity diagnostics only. */
export async function pyrightCli(
  root: string,
  python: string | null,
  timeoutMs: number,
  env: Record<string, string | undefined>,
): Promise<PyrightCliResult> {
  const argv = pyrightArgv(pyrightCliPath(), ['--outputjson', ...(python ? ['--pythonpath', python] : [])]);
  const proc = await runCapture(argv, root, timeoutMs, env);
  if (proc.spawn_error) return { proc, diagnostics: [], unavailable: `cannot run pyright: ${proc.spawn_error}` };
  let report: {
    generalDiagnostics?: {
      file?: string;
      severity?: string;
      message?: string;
      rule?: string;
      range?: { start: { line: number; character: number } };
    }[];
  };
  try {
    report = JSON.parse(proc.stdout);
  } catch {
    return {
      proc,
      diagnostics: [],
      unavailable: `pyright printed no JSON report (exit ${proc.exit_code}): ${proc.output.trim().split('\n').pop() ?? ''}`,
    };
  }
  const realRoot = realpathSync(root);
  const rel = (f: string) => {
    const r = relative(realRoot, f);
    return (r.startsWith('..') ? relative(root, f) : r).split(sep).join('/');
  };
  const diagnostics: Diagnostic[] = [];
  for (const d of report.generalDiagnostics ?? []) {
    if (d.severity !== 'error') continue;
    diagnostics.push({
      file: rel(d.file ?? ''),
      line: (d.range?.start.line ?? 0) + 1,
      col: (d.range?.start.character ?? 0) + 1,
      code: d.rule ?? null,
      message: d.message ?? '',
    });
  }
  return { proc, diagnostics, unavailable: null };
}

function fileHas(path: string, re: RegExp): boolean {
  try {
    return re.test(readFileSync(path, 'utf8'));
  } catch {
    return false;
  }
}

/** Detected Python test argv (with `{python}`), or null (§11.3). */
export async function detectPythonTestCommand(
  root: string,
  python: string | null,
  env: Record<string, string | undefined>,
): Promise<string[] | null> {
  const testsDir = existsSync(join(root, 'tests')) && statSync(join(root, 'tests')).isDirectory();
  const configured =
    fileHas(join(root, 'pyproject.toml'), /^\s*\[tool\.pytest/m) ||
    existsSync(join(root, 'pytest.ini')) ||
    fileHas(join(root, 'setup.cfg'), /^\s*\[tool:pytest\]/m);
  if (!configured && !testsDir) return null;
  const hasPytest = python
    ? (await execCapture([python, '-c', 'import pytest'], { cwd: root, env, timeoutMs: 30_000, keepStdout: false }))
        .exit_code === 0
    : true;
  if (hasPytest) return ['{python}', '-m', 'pytest', '-q'];
  if (testsDir) return ['{python}', '-m', 'unittest', 'discover'];
  return null;
}
