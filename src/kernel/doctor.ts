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

/** `f`'s answer and how long it took from now (the probes overlap, so each check's duration is its own). */
async function timed<T>(f: () => Promise<T>): Promise<{ v: T; ms: number }> {
  const t0 = Date.now();
  const v = await f();
  return { v, ms: Date.now() - t0 };
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
  // Python (pyright) and Rust (rust-analyzer): probed by running them (issue 6).
  const { candidates, probePython } = await import('./backends/python/interpreter.js');
  const { probePyrightLangserver, probePyrightTypeshed } = await import('./backends/python/probes.js');
  const { probeRustAnalyzer } = await import('./backends/rust/discovery.js');
  const workspace = o.workspace ?? dirname(sessionDir);
  // The child-process probes start at once and run beside each other and beside the in-process TypeScript
  // checks; only the typeshed probe waits, for the interpreter it hands pyright. The checks are listed in
  // their fixed order all the same (docs/kernel.md §4.5), each with its own timeout.
  const langserver = timed(() =>
    probePyrightLangserver(env).catch((e: Error) => ({ ok: false, message: e.message, version: null })),
  );
  const python = timed(async () => {
    const tried: string[] = [];
    for (const c of candidates({ workspace, explicit: o.python, env })) {
      if (c.path.includes('/') && !existsSync(c.path)) continue;
      tried.push(c.path);
      const v = await probePython(c.path, env);
      if (v.version) return { path: c.path, version: v.version, source: c.source, tried };
    }
    return { path: null, version: null, source: null, tried };
  });
  const typeshed = python.then(({ v }) =>
    timed(() => probePyrightTypeshed(v.path, env).catch((e: Error) => ({ ok: false, message: e.message }))),
  );
  const rust = timed(() => probeRustAnalyzer(o.rustAnalyzer ?? null, env));
  const cargoP = timed(() => probe('cargo', ['--version'], env));
  const gitP = timed(() => probe('git', ['--version'], env));
  const probes = Promise.all([langserver, python, typeshed, rust, cargoP, gitP]);
  // Awaited below, after the TypeScript checks: a probe that throws meanwhile is not an unhandled rejection.
  probes.catch(() => undefined);
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
  const [lsT, pyT, tsdT, raT, cargoT, gitT] = await probes;
  const add = (name: string, ms: number, status: Status, message: string) => {
    checks.push({ name, status, message, duration_ms: ms });
    return { status, message };
  };
  const ls = add('pyright-langserver', lsT.ms, lsT.v.ok ? 'passed' : 'failed', lsT.v.message);
  const tsd = add('pyright-typeshed', tsdT.ms, tsdT.v.ok ? 'passed' : 'failed', tsdT.v.message);
  const pyrightVersion = lsT.v.version;
  const { path: pyPath, version: pyVersion, source: pySource, tried: pyTried } = pyT.v;
  if (pyPath) add('python-interpreter', pyT.ms, 'passed', `${pyPath} ${pyVersion} (${pySource})`);
  else
    add(
      'python-interpreter',
      pyT.ms,
      'warning',
      `no python interpreter found (tried ${pyTried.join(', ') || 'nothing'}); renames work, py-compile and Python tests are unavailable`,
    );
  const raP = raT.v;
  const raR = { ok: raP.available, out: raP.version ?? '', err: raP.probe_error };
  const ra = raP.path ?? o.rustAnalyzer ?? 'rust-analyzer';
  if (raR.ok) add('rust-analyzer', raT.ms, 'passed', raR.out);
  else
    add(
      'rust-analyzer',
      raT.ms,
      'warning',
      `rust-analyzer unavailable, Rust renames answer BackendUnavailable: ${raR.err}`,
    );
  const cargo = cargoT.v;
  add('cargo', cargoT.ms, cargo.ok ? 'passed' : 'warning', cargo.ok ? cargo.out : `cargo: ${cargo.err}`);
  const gitR = gitT.v;
  add('git', gitT.ms, gitR.ok ? 'passed' : 'warning', gitR.ok ? gitR.out : `git: ${gitR.err}`);
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
