/**
 * `doctor` (docs/kernel.md §4.5): probe every backend and verifier by running it. Exits 0 whenever it ran;
 * consumers read `summary.failed`. Missing Python, rust-analyzer, cargo or git are warnings.
 */
import { accessSync, constants, existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { execCapture } from './exec.js';

type Status = 'passed' | 'warning' | 'failed';
interface DoctorCheck {
  name: string;
  status: Status;
  message: string;
  duration_ms: number;
}

async function probe(
  cmd: string,
  args: string[],
  env: Record<string, string | undefined>,
): Promise<{ ok: boolean; out: string; err: string | null }> {
  const r = await execCapture([cmd, ...args], { cwd: tmpdir(), env, timeoutMs: 10_000, keepStderr: true });
  if (r.spawn_error) return { ok: false, out: '', err: r.spawn_error };
  if (r.timed_out) return { ok: false, out: '', err: 'timed out' };
  return {
    ok: r.exit_code === 0,
    out: `${r.stdout}${r.stderr}`.trim(),
    err: r.exit_code === 0 ? null : `exit ${r.exit_code}: ${r.stderr.trim().split('\n')[0]}`,
  };
}

async function tsSmoke(): Promise<string | null> {
  const { loadTs } = await import('./backends/typescript.js');
  const ts = await loadTs();
  const files: Record<string, string> = {
    '/smoke/a.ts': 'export function f() { return 1; }\n',
    '/smoke/b.ts': "import { f } from './a';\nf();\n",
  };
  const host: import('typescript').LanguageServiceHost = {
    getScriptFileNames: () => Object.keys(files),
    getScriptVersion: () => '1',
    getScriptSnapshot: (f) => (files[f] !== undefined ? ts.ScriptSnapshot.fromString(files[f]!) : undefined),
    getCurrentDirectory: () => '/smoke',
    getCompilationSettings: () => ({
      noLib: true,
      noEmit: true,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
    }),
    getDefaultLibFileName: () => '/smoke/lib.d.ts',
    fileExists: (f) => files[f] !== undefined,
    readFile: (f) => files[f],
  };
  const ls = ts.createLanguageService(host);
  const locs =
    ls.findRenameLocations('/smoke/a.ts', 16, false, false, { providePrefixAndSuffixTextForRename: true }) ?? [];
  ls.dispose();
  return locs.length === 3 ? null : `expected 3 rename locations, got ${locs.length}`;
}

/**
 * `env`: the environment every probe runs with (the caller's; the kernel never reads process.env), default
 * empty. `workspace`: where a workspace `.venv` is looked for, default the session dir's parent.
 */
export async function doctor(
  sessionDir: string,
  o: { python?: string; rustAnalyzer?: string; env?: Record<string, string | undefined>; workspace?: string },
): Promise<Record<string, unknown>> {
  const env = o.env ?? {};
  const checks: DoctorCheck[] = [];
  const run = async (
    name: string,
    f: () => Promise<{ status: Status; message: string }> | { status: Status; message: string },
  ) => {
    const t0 = Date.now();
    let r: { status: Status; message: string };
    try {
      r = await f();
    } catch (e) {
      r = { status: 'failed', message: (e as Error).message };
    }
    checks.push({ name, status: r.status, message: r.message, duration_ms: Date.now() - t0 });
    return r;
  };
  const major = Number(process.versions.node.split('.')[0]);
  await run('node-version', () =>
    major >= 20
      ? { status: 'passed', message: `node ${process.versions.node}` }
      : { status: 'failed', message: `node ${process.versions.node} < 20` },
  );
  let tsVersion: string | null = null;
  let tsReason: string | null = null;
  const api = await run('typescript-api', async () => {
    const { loadTs } = await import('./backends/typescript.js');
    const ts = await loadTs();
    tsVersion = ts.version;
    const ok = /^5\./.test(ts.version) && typeof ts.createLanguageService === 'function';
    if (!ok) tsReason = `typescript ${ts.version} lacks a usable LanguageService`;
    return ok ? { status: 'passed', message: `typescript ${ts.version}` } : { status: 'failed', message: tsReason! };
  });
  const smoke = await run('typescript-rename-smoke', async () => {
    const err = await tsSmoke();
    return err ? { status: 'failed', message: err } : { status: 'passed', message: 'in-memory two-file rename ok' };
  });
  if (smoke.status !== 'passed') tsReason ??= smoke.message;
  // Python (pyright) and Rust (rust-analyzer): probed by running them (issue 6).
  const { candidates, probePython } = await import('./backends/python/interpreter.js');
  const { probePyrightLangserver, probePyrightTypeshed } = await import('./backends/python/probes.js');
  const { probeRustAnalyzer } = await import('./backends/rust/discovery.js');
  let pyPath: string | null = null;
  let pyVersion: string | null = null;
  let pySource: string | null = null;
  const workspace = o.workspace ?? dirname(sessionDir);
  const pyTried: string[] = [];
  for (const c of candidates({ workspace, explicit: o.python, env })) {
    if (c.path.includes('/') && !existsSync(c.path)) continue;
    pyTried.push(c.path);
    const v = await probePython(c.path, env);
    if (v.version) {
      [pyPath, pyVersion, pySource] = [c.path, v.version, c.source];
      break;
    }
  }
  // The two pyright probes run concurrently; their checks are listed in order.
  const langserver = probePyrightLangserver(env);
  const typeshed = probePyrightTypeshed(pyPath, env);
  const ls = await run('pyright-langserver', async () => {
    const r = await langserver;
    return { status: r.ok ? 'passed' : 'failed', message: r.message };
  });
  const tsd = await run('pyright-typeshed', async () => {
    const r = await typeshed;
    return { status: r.ok ? 'passed' : 'failed', message: r.message };
  });
  const pyrightVersion = (await langserver).version;
  await run('python-interpreter', () =>
    pyPath
      ? { status: 'passed', message: `${pyPath} ${pyVersion} (${pySource})` }
      : {
          status: 'warning',
          message: `no python interpreter found (tried ${pyTried.join(', ') || 'nothing'}); renames work, py-compile and Python tests are unavailable`,
        },
  );
  const raP = await probeRustAnalyzer(o.rustAnalyzer ?? null, env);
  const raR = { ok: raP.available, out: raP.version ?? '', err: raP.probe_error };
  const ra = raP.path ?? o.rustAnalyzer ?? 'rust-analyzer';
  await run('rust-analyzer', () =>
    raR.ok
      ? { status: 'passed', message: raR.out }
      : { status: 'warning', message: `rust-analyzer unavailable, Rust renames answer BackendUnavailable: ${raR.err}` },
  );
  const cargo = await probe('cargo', ['--version'], env);
  await run('cargo', () =>
    cargo.ok ? { status: 'passed', message: cargo.out } : { status: 'warning', message: `cargo: ${cargo.err}` },
  );
  const gitR = await probe('git', ['--version'], env);
  await run('git', () =>
    gitR.ok ? { status: 'passed', message: gitR.out } : { status: 'warning', message: `git: ${gitR.err}` },
  );
  await run('session-dir-writable', () => {
    const dir = existsSync(sessionDir) ? sessionDir : dirname(sessionDir);
    if (!existsSync(dir)) mkdirSync(dir, { recursive: true });
    accessSync(dir, constants.W_OK);
    return { status: 'passed', message: `${sessionDir} is writable` };
  });
  await run('apply-journal', () =>
    existsSync(join(sessionDir, 'apply.journal.json'))
      ? { status: 'warning', message: 'an interrupted apply is pending; the next command recovers it' }
      : { status: 'passed', message: 'no pending apply journal' },
  );
  const tsOk = api.status === 'passed' && smoke.status === 'passed';
  const summary = {
    total: checks.length,
    passed: checks.filter((c) => c.status === 'passed').length,
    warnings: checks.filter((c) => c.status === 'warning').length,
    failed: checks.filter((c) => c.status === 'failed').length,
  };
  const pyOk = ls.status === 'passed' && tsd.status === 'passed';
  return {
    checks,
    backends: {
      typescript: { available: tsOk, version: tsVersion, reason: tsOk ? null : tsReason },
      python: {
        available: pyOk,
        pyright_version: pyrightVersion,
        typeshed_ok: tsd.status === 'passed',
        interpreter: pyPath,
        python_version: pyVersion,
        interpreter_source: pySource,
        reason: pyOk ? null : ls.status !== 'passed' ? ls.message : tsd.message,
      },
      rust: {
        available: raR.ok,
        rust_analyzer: raR.ok ? ra : null,
        version: raR.ok ? raR.out : null,
        cargo_version: cargo.ok ? cargo.out : null,
        reason: raR.ok ? null : raR.err,
      },
    },
    verifiers: {
      'ts-syntax': { available: tsOk, command: null, reason: tsOk ? null : tsReason },
      tsc: {
        available: tsOk,
        command: ['tsc', '--noEmit', '--pretty', 'false', '-p', '<tsconfig>'],
        reason: tsOk ? null : tsReason,
      },
      'py-compile': pyPath
        ? { available: true, command: [pyPath, '-c', '<py-compile script>'], reason: null }
        : { available: false, command: null, reason: 'no python interpreter found' },
      pyright:
        tsd.status === 'passed'
          ? {
              available: true,
              command: ['pyright', '--outputjson', ...(pyPath ? ['--pythonpath', pyPath] : [])],
              reason: null,
            }
          : { available: false, command: null, reason: tsd.message },
      'cargo-check': cargo.ok
        ? { available: true, command: ['cargo', 'check', '--all-targets', '--message-format=json'], reason: null }
        : { available: false, command: null, reason: `cargo: ${cargo.err}` },
      tests: {
        available: true,
        command: null,
        reason: 'resolved per workspace (--test-command, config test_command, or detection)',
      },
    },
    summary,
  };
}
