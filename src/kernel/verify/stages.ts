/**
 * The pieces a verification run is built from (docs/kernel.md §11.3–§11.4): `Run` (the checks so far and its
 * fail-closed exits), the `check` record, `settle` for Python/Rust stage results, the tsconfig lookup, and
 * the stages shared by `run` and `verify`: the test command and the configured typecheck command.
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { TsModule } from '../backends/ts-project.js';
import { KernelError, type KernelErrorCode } from '../errors.js';
import type { Sandbox } from '../sandbox.js';
import { languageOf } from '../snapshot.js';
import type { Check, Verification, VerifyMode } from '../types.js';
import { runProcess, type ProcResult } from './checks.js';
import { diagnosticsOf, judge, type CommandBaseline } from './typecheck-command.js';
import { pytestCollectedNothing, resolveTestCommand, type StageResult, type VerifyContext } from './langs.js';

const MAX_DIAGS = 100;

/** A check with defaults filled in; diagnostics are capped at MAX_DIAGS. */
export function check(name: Check['name'], fields: Partial<Check>): Check {
  return {
    name,
    language: fields.language ?? null,
    status: fields.status ?? 'passed',
    command: fields.command ?? null,
    exit_code: fields.exit_code ?? null,
    duration_ms: fields.duration_ms ?? 0,
    baseline: fields.baseline ?? null,
    diagnostics: (fields.diagnostics ?? []).slice(0, MAX_DIAGS),
    output: fields.output ?? null,
    reason: fields.reason ?? null,
  };
}

/**
 * What `tsc` checks for the changed files (docs/kernel.md §11.2): the nearest tsconfig.json at or above each
 * file that includes it, and the `loose` files, which none includes (outside `"include"`, or no tsconfig
 * above them) and which are checked with the inferred project's options. Null when no changed file has a
 * tsconfig at or above it.
 */
export function tscTargets(ts: TsModule, root: string, files: string[]): { cfgs: string[]; loose: string[] } | null {
  const cfgs = new Set<string>();
  const loose: string[] = [];
  // An unreadable config (null) is tsc's to report: its files count as the config's.
  const included = new Map<string, Set<string> | null>();
  let any = false;
  for (const f of files) {
    const cfg = tsconfigsFor(root, [f])?.[0];
    if (!cfg) {
      loose.push(f);
      continue;
    }
    any = true;
    if (!included.has(cfg)) {
      const parsed = ts.getParsedCommandLineOfConfigFile(join(root, cfg), undefined, {
        ...ts.sys,
        onUnRecoverableConfigFileDiagnostic: () => undefined,
      });
      included.set(cfg, parsed ? new Set(parsed.fileNames.map((n) => resolve(n))) : null);
    }
    const names = included.get(cfg);
    if (!names || names.has(resolve(root, f))) cfgs.add(cfg);
    else loose.push(f);
  }
  return any ? { cfgs: [...cfgs].sort(), loose: loose.sort() } : null;
}

/** Nearest tsconfig.json at or above each file, inside the sandbox. */
export function tsconfigsFor(root: string, files: string[]): string[] | null {
  const out = new Set<string>();
  for (const f of files) {
    let dir = dirname(f);
    let found: string | null = null;
    for (;;) {
      const c = dir === '.' ? 'tsconfig.json' : `${dir}/tsconfig.json`;
      if (existsSync(join(root, c))) {
        found = c;
        break;
      }
      if (dir === '.' || dir === '') break;
      dir = dirname(dir);
    }
    if (!found) return null;
    out.add(found);
  }
  return [...out].sort();
}

/** One verification run: the checks so far, and its failing exits (dispose the sandbox, throw with the verification). */
export class Run {
  checks: Check[] = [];
  constructor(
    readonly mode: VerifyMode,
    readonly sandbox: Sandbox,
  ) {}

  verification(status: Verification['status']): Verification {
    return { status, mode: this.mode, sandbox: this.sandbox.kind, checks: this.checks };
  }

  fail(code: KernelErrorCode, message: string, details: Record<string, unknown>, keep: boolean): never {
    const kept = this.sandbox.dispose(keep);
    if (kept) details.sandbox_path = kept;
    throw new KernelError(code, message, details, { extra: { verification: this.verification('failed') } });
  }

  unavailable(c: Check, tool: string | null, keep: boolean): never {
    this.checks.push(c);
    this.fail(
      'VerificationUnavailable',
      `${c.name} is unavailable: ${c.reason}`,
      { check: c.name, tool, reason: c.reason },
      keep,
    );
  }
}

/** Record a Python/Rust stage result: unavailable and failed results end the run (§11.4). */
export function settle(r: Run, res: StageResult, keep: boolean): void {
  if (res.check.status === 'unavailable') r.unavailable(res.check, res.tool ?? null, keep);
  r.checks.push(res.check);
  if (res.failure) r.fail(res.failure.code, res.failure.message, res.failure.details, keep);
}

export const NO_TEST_COMMAND = 'no test command configured or detected';

/**
 * The tests stage: the resolved test command in the sandbox root; unavailable or failed ends the run.
 * §11.4: under `typecheck` (tests is then a lower stage) a missing test command is `skipped` with a
 * VerificationStageSkipped warning instead; a test command that exists must still run and pass.
 */
export async function testsStage(
  r: Run,
  ctx: VerifyContext,
  root: string,
  keep: boolean,
  files: string[],
): Promise<void> {
  const o = ctx.options;
  const langs = [...new Set(files.map(languageOf).filter((l) => l !== null))];
  const tc = await resolveTestCommand(ctx, root, langs);
  const argv = tc.argv;
  if (!argv && r.mode === 'typecheck') {
    r.checks.push(check('tests', { status: 'skipped', reason: NO_TEST_COMMAND }));
    ctx.warnings.push({
      code: 'VerificationStageSkipped',
      message:
        'verification stage tests skipped: no test command configured or detected ' +
        '(set --test-command, TUG_TEST_COMMAND or test_command in the [kernel] table of .tugtool/config.toml)',
    });
    return;
  }
  if (!argv) return r.unavailable(check('tests', { status: 'unavailable', reason: NO_TEST_COMMAND }), null, keep);
  if (tc.unavailable)
    return r.unavailable(
      check('tests', { language: tc.language, status: 'unavailable', command: argv, reason: tc.unavailable }),
      'python',
      keep,
    );
  const cmd = tc.cmd;
  const t0 = Date.now();
  const p = await runProcess(cmd, root, (o.testTimeoutS ?? 300) * 1000, { ...ctx.env, ...tc.env });
  const base = {
    language: tc.language,
    command: argv,
    exit_code: p.exit_code,
    duration_ms: Date.now() - t0,
    output: p.output,
  };
  if (p.spawn_error)
    r.unavailable(
      check('tests', { ...base, status: 'unavailable', reason: `cannot run ${argv[0]}: ${p.spawn_error}` }),
      argv[0] ?? null,
      keep,
    );
  if (pytestCollectedNothing(argv, p.exit_code))
    r.unavailable(
      check('tests', { ...base, status: 'unavailable', reason: 'pytest collected no tests (exit 5)' }),
      'pytest',
      keep,
    );
  if (p.exit_code !== 0 || p.timed_out) {
    r.checks.push(
      check('tests', { ...base, status: 'failed', reason: p.timed_out ? 'timed out' : `exit code ${p.exit_code}` }),
    );
    const failed = [...p.output.matchAll(/^FAILED (\S+)/gm), ...p.output.matchAll(/^test (\S+) \.\.\. FAILED/gm)].map(
      (m) => m[1]!,
    );
    r.fail(
      'TestsFailed',
      p.timed_out ? 'tests timed out' : `tests failed (exit ${p.exit_code})`,
      { command: argv, exit_code: p.exit_code, timed_out: p.timed_out, output: p.output, failed_tests: failed },
      keep,
    );
  }
  r.checks.push(check('tests', base));
}

/** The `typecheck-command` check: unavailable when it cannot be spawned, failed per `judge`. */
export function typecheckCommandStage(
  r: Run,
  argv: string[],
  base: CommandBaseline | null,
  p: ProcResult & { duration_ms: number },
  names: string[],
  root: string,
  keep: boolean,
): void {
  const fields = {
    command: argv,
    exit_code: p.exit_code,
    duration_ms: p.duration_ms,
    output: p.output.slice(-16384) || null,
  };
  if (p.spawn_error || (base && base.exit_code === null)) {
    r.unavailable(
      check('typecheck-command', {
        ...fields,
        status: 'unavailable',
        reason: `cannot run ${argv[0]}: ${p.spawn_error ?? 'spawn failed'}`,
      }),
      argv[0] ?? null,
      keep,
    );
  }
  const j = judge(base, p, names, root);
  const diagnostics = diagnosticsOf(j.fresh.join('\n'), root);
  const c = check('typecheck-command', {
    ...fields,
    status: j.failed ? 'failed' : 'passed',
    baseline: base ? { diagnostics: base.lines.length } : null,
    diagnostics,
    reason: j.reason,
  });
  r.checks.push(c);
  if (j.failed)
    r.fail(
      'TypecheckFailed',
      `typecheck command failed: ${j.reason}`,
      { errors: c.diagnostics, baseline_count: base?.lines.length ?? 0, new_count: j.fresh.length || 1 },
      keep,
    );
}
