/**
 * The front door of `tugcode refactor run-step` and `tugcode refactor skip` (docs/kernel.md §7.3–§7.4):
 * argv → one kernel-style JSON envelope (or `--text`), a `tugcode: Code: message` stderr line on errors,
 * and the exit code. Pure: returns what to print (src/commands/refactor.ts hands argv here).
 */
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { TugError } from '../contract/errors.js';
import type { VerifyMode } from '../kernel/light.js';
import { errorObjectOf } from '../refactor/run-step.js';
import { runStepEnvelope, type ErrorObject, type RunStepResult } from '../refactor/result.js';

export interface CliOutput {
  stdout: string;
  stderr: string;
  exitCode: number;
}

interface Spec {
  values: string[];
  bools: string[];
  positionals: number;
}

const SPECS: Record<'run-step' | 'skip', Spec> = {
  'run-step': {
    values: ['--worktree', '--attempt', '--verify'],
    bools: ['--retry-failed', '--json', '--text'],
    positionals: 2,
  },
  skip: { values: ['--worktree', '--attempt', '--ordinal', '--reason'], bools: ['--json', '--text'], positionals: 2 },
};

export const RUN_STEP_HELP = `usage: tugcode refactor run-step <plan> <step> --worktree W [--attempt N] [--retry-failed] [--verify none|syntax|tests|typecheck] [--text]
       tugcode refactor skip <plan> <step> --worktree W --ordinal N --reason TEXT [--attempt N] [--text]

run-step executes the step's open **Refactors:** rows in W (the step must be claimed by W); skip marks an
open or failed row skipped. Output is one JSON document (kernel envelope); exit codes 0, 2, 3, 4, 5, 10.
`;

const bad = (reason: string, argument?: string) =>
  new TugError('InvalidArgument', argument ? { reason, argument } : { reason });

function parse(
  command: 'run-step' | 'skip',
  argv: string[],
): { pos: string[]; values: Map<string, string>; bools: Set<string> } {
  const spec = SPECS[command];
  const pos: string[] = [];
  const values = new Map<string, string>();
  const bools = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const w = argv[i]!;
    if (!w.startsWith('--') || w === '--') {
      pos.push(w);
      continue;
    }
    const eq = w.indexOf('=');
    const name = eq >= 0 ? w.slice(0, eq) : w;
    if (spec.bools.includes(name)) {
      if (eq >= 0) throw bad(`${name} takes no value`, name);
      bools.add(name);
    } else if (spec.values.includes(name)) {
      const v = eq >= 0 ? w.slice(eq + 1) : argv[++i];
      if (v === undefined) throw bad(`${name} needs a value`, name);
      if (values.has(name)) throw bad(`${name} given twice`, name);
      values.set(name, v);
    } else throw bad(`unknown flag ${name} for refactor ${command}`, name);
  }
  if (pos.length !== spec.positionals)
    throw bad(`refactor ${command} needs <plan> <step>, got ${pos.length} argument(s)`);
  if (!values.has('--worktree')) throw bad(`refactor ${command} needs --worktree W`, '--worktree');
  return { pos, values, bools };
}

function intArg(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v.trim()) || !Number.isSafeInteger(Number(v)))
    throw bad(`${name} must be a non-negative integer, got ${JSON.stringify(v)}`, name);
  return Number(v);
}

const VERIFY: readonly string[] = ['none', 'syntax', 'tests', 'typecheck'];

/**
 * The process context for W (docs/kernel.md §7.3 setup 1): the one repo resolver, config and state store of
 * src/ops, W's canonical root, and the call the operation runs under.
 */
async function open(command: string, worktreeArg: string, cwd: string, env: NodeJS.ProcessEnv) {
  const abs = resolve(cwd, worktreeArg);
  try {
    if (!statSync(abs).isDirectory()) throw new Error('not a directory');
  } catch {
    throw new TugError('WorktreeNotFound', { worktree: abs, reason: 'no such directory' });
  }
  const { OpsContext, newCall } = await import('../ops/context.js');
  const { worktreeOf } = await import('../ops/support.js');
  const ops = new OpsContext({ cwd: abs, env });
  const call = newCall(command);
  const { repo, config } = await ops.load(call);
  const worktree = await worktreeOf(ops, repo, abs);
  return { ops, call, config, worktree, warnings: call.warnings };
}

function errorOutput(e: unknown, text: boolean): CliOutput {
  const { error, exit } = errorObjectOf(e);
  const env = {
    status: 'error',
    schema_version: '1',
    ...(snapshotOf(e) ? { snapshot_id: snapshotOf(e) } : {}),
    error,
    warnings: [],
  };
  return {
    stdout: text ? `error: ${error.code}: ${error.message}\n` : JSON.stringify(env) + '\n',
    stderr: stderrOf(error),
    exitCode: exit,
  };
}

/** The error line, then the hint when there is one (docs/output.md §1). */
function stderrOf(error: ErrorObject): string {
  const line = `tugcode: ${error.code}: ${error.message}`.replace(/[\r\n]+/g, ' ').slice(0, 500) + '\n';
  return error.hint ? line + `hint: ${error.hint}\n` : line;
}

function snapshotOf(e: unknown): string | undefined {
  return e instanceof Error && e.name === 'KernelError' ? (e as { snapshotId?: string }).snapshotId : undefined;
}

function runStepText(r: RunStepResult): string {
  const lines = [
    `${r.step_anchor}: ${r.summary.applied} applied, ${r.summary.failed} failed, ${r.summary.skipped} skipped, ${r.summary.open} open (${r.summary.executed} executed)`,
  ];
  for (const op of r.ops) {
    let l = `  [${op.ordinal}] ${op.status.padEnd(7)} ${op.op_text}`;
    if (op.snapshot_before || op.snapshot_after) l += `  ${op.snapshot_before ?? '-'}..${op.snapshot_after ?? '-'}`;
    if (op.error) l += `  ${op.error.code}: ${op.error.message}`;
    lines.push(l);
  }
  if (r.error && !r.ops.some((o) => o.error)) lines.push(`error: ${r.error.code}: ${r.error.message}`);
  return lines.join('\n') + '\n';
}

/** `tugcode refactor run-step|skip …` (argv starts with the subcommand). */
export async function runRefactorStepCommand(
  argv: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  kernelEnv: Record<string, string | undefined>,
): Promise<CliOutput> {
  const command = argv[0] as 'run-step' | 'skip';
  const rest = argv.slice(1);
  if (rest.includes('--help') || rest.includes('-h')) return { stdout: RUN_STEP_HELP, stderr: '', exitCode: 0 };
  const text = rest.includes('--text');
  let opened: Awaited<ReturnType<typeof open>> | null = null;
  try {
    const a = parse(command, rest);
    const [plan, step] = a.pos as [string, string];
    const attempt = intArg('--attempt', a.values.get('--attempt'));
    if (command === 'run-step') {
      const verify = a.values.get('--verify');
      if (verify !== undefined && !VERIFY.includes(verify))
        throw bad(`--verify must be one of ${VERIFY.join(', ')}`, '--verify');
      const o = (opened = await open('refactor run-step', a.values.get('--worktree')!, cwd, env));
      const { refactorRunStep } = await import('../ops/refactor.js');
      const r = await refactorRunStep(
        o.ops,
        {
          plan,
          step,
          worktree: o.worktree,
          attempt,
          cwd,
          retry_failed: a.bools.has('--retry-failed'),
          verify: verify as VerifyMode | undefined,
        },
        o.call,
        {
          heartbeat_seconds: o.config.run.heartbeat_seconds,
          max_concurrent_sessions: o.config.kernel.max_concurrent_sessions,
          kernel: { env: kernelEnv },
        },
      );
      const stderr = r.error ? stderrOf(r.error) : '';
      return {
        stdout: text ? runStepText(r) : JSON.stringify(runStepEnvelope(r)) + '\n',
        stderr,
        exitCode: r.exit_code,
      };
    }
    const ordinal = intArg('--ordinal', a.values.get('--ordinal'));
    if (ordinal === undefined) throw bad('refactor skip needs --ordinal N', '--ordinal');
    const reason = a.values.get('--reason');
    if (reason === undefined || reason.trim() === '') throw bad('refactor skip needs a non-empty --reason', '--reason');
    const o = (opened = await open('refactor skip', a.values.get('--worktree')!, cwd, env));
    const { refactorSkip } = await import('../ops/refactor.js');
    const r = await refactorSkip(o.ops, { plan, step, worktree: o.worktree, attempt, cwd, ordinal, reason }, o.call);
    const envelope = {
      status: 'ok',
      schema_version: '1',
      ...r,
      warnings: o.warnings.items.map((w) => ({ code: w.code, message: w.message })),
    };
    const line = r.already_skipped
      ? `refactor ${r.ordinal} of ${r.step_anchor} was already skipped\n`
      : `Skipped refactor ${r.ordinal} of ${r.step_anchor} (was ${r.previous_status}): ${r.op_text}\n`;
    return { stdout: text ? line : JSON.stringify(envelope) + '\n', stderr: '', exitCode: 0 };
  } catch (e) {
    return errorOutput(e, text);
  } finally {
    await opened?.ops.close();
  }
}
