/**
 * Python and Rust verification stages (docs/kernel.md §11.2–11.4), used by run.ts next to the TS checks:
 * `py-compile` and `cargo-check` in the syntax stage, `pyright` in the typecheck stage (cargo-check's result
 * is reused for Rust), each with a baseline on the unpatched sandbox in `run` (the Python ones cached per
 * snapshot like the TypeScript ones, baselines.ts) and none in `verify`. Also the
 * language-aware test command: `--test-command` / config, else detection by language (TS, Python, Rust),
 * with `{python}` → the resolved interpreter and `{workspace}` → the sandbox root. A check that cannot run
 * is `unavailable`, never a pass.
 */
import type { KernelWarning } from '../envelope.js';
import type { KernelErrorCode } from '../errors.js';
import { languageOf, type Exclusions, type Language, type ListBounds } from '../snapshot.js';
import type { Check, Diagnostic, KernelOptions, VerifyMode } from '../types.js';
import { BaselineCache } from './baselines.js';
import { detectTsTestCommand, newDiagnostics } from './checks.js';
import { detectPythonTestCommand, pyCompile, pyrightCli, pyrightCliVersion, verifyPython } from './python.js';
import { cargoCheck, cargoEnv, cargoRoots, CARGO_CHECK_ARGV } from './rust.js';

export interface StageResult {
  check: Check;
  tool?: string | null;
  failure?: { code: KernelErrorCode; message: string; details: Record<string, unknown> };
}

export interface LangContext {
  workspace: string;
  sessionDir: string;
  options: KernelOptions;
  /** The kernel's environment: the base of every verifier's (the kernel never reads process.env). */
  env: Record<string, string | undefined>;
}

/** What a verification run needs: what a full sandbox leaves out, and a warnings sink. */
export interface VerifyContext extends LangContext {
  excluded: Exclusions;
  /** What a full sandbox may copy (max_workspace_files, max_sandbox_mb; docs/kernel.md §11.1). */
  bounds: ListBounds;
  /** Receives the run's warnings (a skipped lower stage, §11.4). */
  warnings: KernelWarning[];
}

const NO_PYTHON =
  'no python interpreter found (--python, TUG_PYTHON, config python, $VIRTUAL_ENV, $CONDA_PREFIX, .venv, python3, python)';

function mk(name: Check['name'], language: Check['language'], f: Partial<Check>): Check {
  return {
    name,
    language,
    status: f.status ?? 'passed',
    command: f.command ?? null,
    exit_code: f.exit_code ?? null,
    duration_ms: f.duration_ms ?? 0,
    baseline: f.baseline ?? null,
    diagnostics: (f.diagnostics ?? []).slice(0, 100),
    output: f.output ?? null,
    reason: f.reason ?? null,
  };
}

/** The interpreter for `{python}` and the Python checks (resolved and sticky per session), or null. */
export async function pythonForVerify(ctx: LangContext): Promise<string | null> {
  return (await verifyPython(ctx.workspace, ctx.sessionDir, ctx.options.python, ctx.env))?.path ?? null;
}

export class LangVerifier {
  private readonly py: string[];
  private readonly rust: string[];
  private pyBase: Diagnostic[] | null = null;
  private pyBaseMs = 0;
  private rsBase: Diagnostic[] | null = null;
  private rsBaseMs = 0;
  private prBase: Diagnostic[] | null = null;
  private prBaseMs = 0;
  private rsAfter: StageResult | null = null;

  constructor(
    private readonly ctx: LangContext,
    private readonly root: string,
    files: string[],
    private readonly mode: VerifyMode,
    private readonly names: string[],
    private readonly o: {
      baseline: boolean;
      typecheckCommand: boolean;
      /** The session's baseline cache and the snapshot the baselines are of (run.ts). */
      cache?: { store: BaselineCache; snapshotId: string };
      /** Puts unpatched files on disk for a baseline read from files (Sandbox.writeUnpatched). */
      writeUnpatched?: (rels: string[]) => Promise<void>;
    },
  ) {
    this.py = files.filter((f) => languageOf(f) === 'python');
    this.rust = cargoRoots(root, files);
  }

  private get timeoutMs(): number {
    return (this.ctx.options.typecheckTimeoutS ?? 600) * 1000;
  }

  private get pyright(): boolean {
    return this.mode === 'typecheck' && this.py.length > 0 && !this.o.typecheckCommand;
  }

  /** Baselines on the unpatched sandbox (run only). */
  async baselines(): Promise<void> {
    if (!this.o.baseline) return;
    const info = this.py.length
      ? await verifyPython(this.ctx.workspace, this.ctx.sessionDir, this.ctx.options.python, this.ctx.env)
      : null;
    const python = info?.path ?? null;
    const interpreter = info ? `${info.path} ${info.version}` : 'none';
    if (python && this.py.length) {
      const b = await this.cached('py-compile', interpreter, this.py, async () => {
        await this.o.writeUnpatched?.(this.py);
        return pyCompile(python, this.root, this.py, this.timeoutMs, this.ctx.env);
      });
      if (b) [this.pyBase, this.pyBaseMs] = b;
    }
    if (this.rust.length) {
      const b = await cargoCheck(this.root, this.rust, this.ctx.sessionDir, this.timeoutMs, this.ctx.env);
      if (!b.unavailable) [this.rsBase, this.rsBaseMs] = [b.diagnostics, b.proc.duration_ms];
    }
    if (this.pyright) {
      const b = await this.cached('pyright', `${pyrightCliVersion()} ${interpreter}`, [], () =>
        pyrightCli(this.root, python, this.timeoutMs, this.ctx.env),
      );
      if (b) [this.prBase, this.prBaseMs] = b;
    }
  }

  /**
   * A Python baseline (its diagnostics and how long it took), through the session's cache like the
   * TypeScript ones (run.ts, docs/kernel.md §11.3): the unpatched content is the snapshot's, so a dry run
   * and its `--apply` compute it once. A check that could not run gives null and is not stored.
   */
  private async cached(
    check: string,
    tool: string,
    argv: string[],
    compute: () => Promise<{
      diagnostics: Diagnostic[];
      unavailable: string | null;
      proc: { exit_code: number | null; duration_ms: number };
    }>,
  ): Promise<[Diagnostic[], number] | null> {
    const c = this.o.cache ?? { store: new BaselineCache(null), snapshotId: '' };
    const t0 = Date.now();
    let ran = null as { unavailable: string | null; ms: number } | null;
    const v = await c.store.through({ snapshot_id: c.snapshotId, check, tool_version: tool, argv }, async () => {
      const b = await compute();
      ran = { unavailable: b.unavailable, ms: b.proc.duration_ms };
      return { diagnostics: b.diagnostics, exit_code: b.proc.exit_code, cacheable: b.unavailable === null };
    });
    if (!ran) return [v.diagnostics, Date.now() - t0];
    return ran.unavailable ? null : [v.diagnostics, ran.ms];
  }

  private judge(
    name: Check['name'],
    language: Check['language'],
    code: KernelErrorCode,
    base: Diagnostic[] | null,
    baseMs: number,
    after: Diagnostic[],
    f: Partial<Check>,
  ): StageResult {
    const fresh = this.o.baseline ? newDiagnostics(base ?? [], after, this.names) : after;
    const check = mk(name, language, {
      ...f,
      status: fresh.length ? 'failed' : 'passed',
      duration_ms: (f.duration_ms ?? 0) + baseMs,
      baseline: this.o.baseline ? { diagnostics: (base ?? []).length } : null,
      diagnostics: fresh,
    });
    if (!fresh.length) return { check };
    const label = name === 'pyright' ? 'type' : 'syntax';
    const message = `${fresh.length} ${this.o.baseline ? 'new ' : ''}${label} error(s)`;
    const details: Record<string, unknown> =
      code === 'TypecheckFailed'
        ? { errors: check.diagnostics, baseline_count: (base ?? []).length, new_count: fresh.length }
        : { errors: check.diagnostics };
    return { check, failure: { code, message, details } };
  }

  /** Syntax stage after the TS check: py-compile, then cargo-check. */
  async *syntax(): AsyncGenerator<StageResult> {
    if (this.py.length) {
      const python = await pythonForVerify(this.ctx);
      if (!python)
        yield { check: mk('py-compile', 'python', { status: 'unavailable', reason: NO_PYTHON }), tool: 'python' };
      else {
        const r = await pyCompile(python, this.root, this.py, this.timeoutMs, this.ctx.env);
        const command = ['{python}', '-c', '<py-compile script>', ...this.py];
        if (r.unavailable)
          yield {
            check: mk('py-compile', 'python', {
              status: 'unavailable',
              command,
              reason: r.unavailable,
              output: r.proc.output || null,
            }),
            tool: python,
          };
        else
          yield this.judge('py-compile', 'python', 'SyntaxError', this.pyBase, this.pyBaseMs, r.diagnostics, {
            command,
            exit_code: r.proc.exit_code,
            duration_ms: r.proc.duration_ms,
          });
      }
    }
    if (this.rust.length) yield await this.cargo();
  }

  private async cargo(): Promise<StageResult> {
    if (this.rsAfter) return this.rsAfter;
    const r = await cargoCheck(this.root, this.rust, this.ctx.sessionDir, this.timeoutMs, this.ctx.env);
    const f = {
      command: CARGO_CHECK_ARGV,
      exit_code: r.proc.exit_code,
      duration_ms: r.proc.duration_ms,
      output: r.proc.output || null,
    };
    this.rsAfter = r.unavailable
      ? { check: mk('cargo-check', 'rust', { ...f, status: 'unavailable', reason: r.unavailable }), tool: 'cargo' }
      : this.judge('cargo-check', 'rust', 'SyntaxError', this.rsBase, this.rsBaseMs, r.diagnostics, f);
    return this.rsAfter;
  }

  /** Typecheck stage after tsc: pyright (unless a typecheck_command replaces it); cargo-check is reused. */
  async *typecheck(): AsyncGenerator<StageResult> {
    if (!this.pyright) return;
    const python = await pythonForVerify(this.ctx);
    const r = await pyrightCli(this.root, python, this.timeoutMs, this.ctx.env);
    const command = ['pyright', '--outputjson', ...(python ? ['--pythonpath', '{python}'] : [])];
    if (r.unavailable) {
      yield {
        check: mk('pyright', 'python', {
          status: 'unavailable',
          command,
          reason: r.unavailable,
          output: r.proc.output || null,
        }),
        tool: 'pyright',
      };
      return;
    }
    yield this.judge('pyright', 'python', 'TypecheckFailed', this.prBase, this.prBaseMs, r.diagnostics, {
      command,
      exit_code: r.proc.exit_code,
      duration_ms: r.proc.duration_ms,
      output: r.proc.output || null,
    });
  }
}

export interface TestCommand {
  /** As configured or detected (reported), or null when there is none. */
  argv: string[] | null;
  /** Expanded for the sandbox. */
  cmd: string[];
  language: Check['language'];
  env: Record<string, string>;
  unavailable: string | null;
}

/** Resolve the test command (§11.3) for the given languages, in detection order TS, Python, Rust. */
export async function resolveTestCommand(ctx: LangContext, root: string, langs: Language[]): Promise<TestCommand> {
  const order = (['typescript', 'python', 'rust'] as const).filter((l) => langs.includes(l));
  let argv: string[] | null = ctx.options.testCommand ?? null;
  let language: Check['language'] = order[0] ?? null;
  const python = () => pythonForVerify(ctx);
  if (!argv) {
    for (const l of order) {
      argv =
        l === 'typescript'
          ? detectTsTestCommand(root)
          : l === 'python'
            ? await detectPythonTestCommand(root, await python(), ctx.env)
            : ['cargo', 'test', '--quiet'];
      if (argv) {
        language = l;
        break;
      }
    }
  }
  const env = order.includes('rust') ? cargoEnv(ctx.sessionDir) : {};
  if (!argv) return { argv: null, cmd: [], language, env, unavailable: null };
  const needsPy = argv.some((a) => a.includes('{python}'));
  const py = needsPy ? await python() : null;
  if (needsPy && !py) return { argv, cmd: [], language, env, unavailable: NO_PYTHON };
  const cmd = argv.map((a) => a.replace(/\{workspace\}/g, root).replace(/\{python\}/g, py ?? '{python}'));
  return { argv, cmd, language, env, unavailable: null };
}

/** §11.4: pytest exit 5 means no tests were collected — unavailable, not a pass. */
export function pytestCollectedNothing(argv: string[], exitCode: number | null): boolean {
  return exitCode === 5 && argv.some((a) => /pytest/.test(a));
}
