/**
 * Kernel argv parsing (docs/kernel.md §3.1). Never prints, never exits: every failure is a KernelError
 * (InvalidArgument / UnsupportedOperation). Operation arguments go through the one op grammar in
 * `../opspec.ts`, shared with the plan validator.
 */
import { KernelError } from '../errors.js';
import { parseOpArgv, parseTestCommand, UNSUPPORTED_OPS } from '../opspec.js';
import type { OpSpec, VerifyMode } from '../types.js';

export type CommandName =
  'analyze-impact' | 'run' | 'verify' | 'snapshot' | 'session status' | 'session clean' | 'doctor';

export interface ParsedArgs {
  command: CommandName | 'help' | 'version';
  workspace?: string;
  sessionDir?: string;
  fresh: boolean;
  noWait: boolean;
  lockTimeoutS?: number;
  python?: string;
  rustAnalyzer?: string;
  safety?: 'strict' | 'aggressive';
  include: string[];
  exclude: string[];
  text: boolean;
  logLevel?: 'error' | 'warn' | 'info' | 'debug';
  apply: boolean;
  verify?: VerifyMode;
  testCommand?: string[];
  testTimeoutS?: number;
  snapshotId?: string;
  keepSandbox: boolean;
  all: boolean;
  op?: OpSpec;
  verifyMode?: 'syntax' | 'tests' | 'typecheck';
}

const VALUE_FLAGS = new Set([
  '--workspace',
  '--session-dir',
  '--lock-timeout',
  '--python',
  '--rust-analyzer',
  '--include',
  '--exclude',
  '--log-level',
  '--test-timeout',
  '--snapshot-id',
]);
const BOOL_FLAGS = new Set([
  '--fresh',
  '--no-wait',
  '--text',
  '--json',
  '--apply',
  '--keep-sandbox',
  '--all',
  '--help',
  '-h',
  '--version',
]);
const REPEATABLE = new Set(['--include', '--exclude']);
/** Flags the op grammar owns (they may sit anywhere in argv). */
const OP_VALUE_FLAGS = new Set([
  '--at',
  '--expect',
  '--symbol',
  '--to',
  '--file',
  '--mode',
  '--verify',
  '--safety',
  '--test-command',
]);

export const UNSUPPORTED_FALLBACK: Record<string, string> = {
  'change-signature':
    'list the call sites with `tug analyze-impact rename-symbol --at <decl> --to <any>`, edit by hand, then run `tug verify syntax`',
};

function bad(argument: string, value: string | null, reason: string, message: string): KernelError {
  return new KernelError('InvalidArgument', message, { argument, value, reason });
}

function num(flag: string, v: string, min: number, max: number): number {
  const n = Number(v);
  if (!/^\d+(\.\d+)?$/.test(v) || !Number.isFinite(n) || n < min || n > max)
    throw bad(flag, v, 'out_of_range', `${flag} must be a number between ${min} and ${max}`);
  return n;
}

/** The kernel's commands, in the order help and the missing-command message list them. */
const KERNEL_COMMAND_NAMES = ['analyze-impact', 'run', 'verify', 'snapshot', 'session', 'doctor'] as const;

/**
 * `extraCommands`: a host's own commands (tugcode's run-step and skip, docs/kernel.md §7.3–§7.4), named in the
 * missing-command message only: the host dispatches them before the kernel parses.
 */
export function parseArgs(
  argv: string[],
  env: Record<string, string | undefined> = {},
  extraCommands: readonly string[] = [],
): ParsedArgs {
  const out: ParsedArgs = {
    command: 'help',
    fresh: false,
    noWait: false,
    include: [],
    exclude: [],
    text: false,
    apply: false,
    keepSandbox: false,
    all: false,
  };
  const values = new Map<string, string>();
  const seen = new Set<string>();
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const w = argv[i]!;
    const eq = w.startsWith('--') ? w.indexOf('=') : -1;
    const name = eq > 0 ? w.slice(0, eq) : w;
    if (VALUE_FLAGS.has(name)) {
      const v = eq > 0 ? w.slice(eq + 1) : argv[++i];
      if (v === undefined) throw bad(name, null, 'missing_value', `${name} needs a value`);
      if (REPEATABLE.has(name)) (name === '--include' ? out.include : out.exclude).push(v);
      else {
        if (values.has(name)) throw bad(name, v, 'duplicate', `${name} given twice`);
        values.set(name, v);
      }
    } else if (BOOL_FLAGS.has(name) && eq < 0) {
      if (seen.has(name) && name !== '--json') throw bad(name, null, 'duplicate', `${name} given twice`);
      seen.add(name);
    } else if (OP_VALUE_FLAGS.has(name)) {
      rest.push(w);
      if (eq < 0 && i + 1 < argv.length) rest.push(argv[++i]!);
    } else rest.push(w);
  }
  if (seen.has('--help') || seen.has('-h')) return { ...out, command: 'help' };
  if (seen.has('--version')) return { ...out, command: 'version' };
  out.fresh = seen.has('--fresh');
  out.noWait = seen.has('--no-wait');
  out.text = seen.has('--text');
  out.apply = seen.has('--apply');
  out.keepSandbox = seen.has('--keep-sandbox');
  out.all = seen.has('--all');
  out.workspace = values.get('--workspace');
  out.sessionDir = values.get('--session-dir') ?? env.TUG_SESSION_DIR;
  // Config keys (lock timeout, python, …) take only flags here; the environment and config files are
  // layered under them by ../config.ts. TUG_SESSION_DIR and TUG_LOG_LEVEL are not config keys.
  const lt = values.get('--lock-timeout');
  if (lt !== undefined) out.lockTimeoutS = num('--lock-timeout', lt, 0, 86400);
  out.python = values.get('--python');
  out.rustAnalyzer = values.get('--rust-analyzer');
  const ll = values.get('--log-level') ?? env.TUG_LOG_LEVEL;
  if (ll !== undefined) {
    if (!['error', 'warn', 'info', 'debug'].includes(ll))
      throw bad('--log-level', ll, 'invalid_choice', '--log-level must be error, warn, info or debug');
    out.logLevel = ll as ParsedArgs['logLevel'];
  }
  const tt = values.get('--test-timeout');
  if (tt !== undefined) out.testTimeoutS = num('--test-timeout', tt, 1, 3600);
  out.snapshotId = values.get('--snapshot-id');

  const cmd = rest[0];
  if (cmd === undefined)
    throw bad(
      'command',
      null,
      'missing',
      `no command given (${[...KERNEL_COMMAND_NAMES, ...extraCommands].join(', ')})`,
    );
  // A flag the table does not know stays in `rest`: in a command's place it is an unknown option, not command.
  if (cmd.startsWith('-') && cmd !== '-') throw unknownOption(cmd);
  const tail = rest.slice(1);
  const noMore = (c: string, extra: string[]) => {
    if (extra.length === 0) return;
    if (extra[0]!.startsWith('--')) throw unknownOption(extra[0]!, ` for ${c}`);
    throw bad(extra[0]!, extra[0]!, 'unexpected', `unexpected argument ${extra[0]} for ${c}`);
  };
  const opOnly = (c: string) => {
    if (out.apply && c !== 'run') throw bad('--apply', null, 'not_allowed', `--apply is only valid with run`);
  };
  switch (cmd) {
    case 'analyze-impact':
    case 'run': {
      out.command = cmd;
      opOnly(cmd);
      // A short flag (`-v`, `-q`, `-C`: tugcode's, before `refactor`) is an unknown option, not an operand.
      for (let i = 0; i < tail.length; i++) {
        const w = tail[i]!;
        if (OP_VALUE_FLAGS.has(w)) i++;
        else if (/^-[^-]/.test(w)) throw unknownOption(w, ` for ${cmd}`);
      }
      const { op, verify, testCommand, safety } = parseOp(tail);
      out.op = op;
      if (verify && cmd !== 'run') throw bad('--verify', verify, 'not_allowed', '--verify is only valid with run');
      out.verify = verify;
      out.testCommand = testCommand;
      out.safety = safety;
      return out;
    }
    case 'verify': {
      out.command = 'verify';
      opOnly(cmd);
      const mode = tail[0];
      if (mode !== 'syntax' && mode !== 'tests' && mode !== 'typecheck')
        throw bad('mode', mode ?? null, 'invalid_choice', 'verify needs a mode: syntax, tests or typecheck');
      const more = tail.slice(1);
      const tcIdx = more.indexOf('--test-command');
      if (tcIdx >= 0) {
        out.testCommand = testCmd(more[tcIdx + 1]);
        more.splice(tcIdx, 2);
      }
      noMore('verify', more);
      out.verifyMode = mode;
      return out;
    }
    case 'snapshot':
    case 'doctor':
      out.command = cmd;
      opOnly(cmd);
      noMore(cmd, tail);
      return out;
    case 'session': {
      const sub = tail[0];
      if (sub !== 'status' && sub !== 'clean')
        throw bad('command', sub ?? null, 'unknown_command', 'session needs status or clean');
      opOnly(cmd);
      noMore(`session ${sub}`, tail.slice(1));
      out.command = sub === 'status' ? 'session status' : 'session clean';
      return out;
    }
    default:
      throw bad('command', cmd, 'unknown_command', `unknown command ${JSON.stringify(cmd)}`);
  }
}

function unknownOption(token: string, where = ''): KernelError {
  const flag = token.split('=')[0]!;
  return bad(flag, token, 'unknown_option', `unknown option ${JSON.stringify(flag)}${where}`);
}

function testCmd(v: string | undefined): string[] {
  const argv = v === undefined ? null : parseTestCommand(v);
  if (!argv) throw bad('--test-command', v ?? null, 'not_json_argv', '--test-command must be a JSON array of strings');
  return argv;
}

/** The op and its op-level options, through the shared op grammar. */
export function parseOp(tokens: string[]): {
  op: OpSpec;
  verify?: VerifyMode;
  testCommand?: string[];
  safety?: 'strict' | 'aggressive';
} {
  const name = tokens.find((t, i) => !t.startsWith('--') && (i === 0 || !OP_VALUE_FLAGS.has(tokens[i - 1]!)));
  if (name && (UNSUPPORTED_OPS as readonly string[]).includes(name)) {
    throw new KernelError('UnsupportedOperation', `${name} is not supported`, {
      operation: name,
      language: null,
      reason: 'operation',
      fallback: UNSUPPORTED_FALLBACK[name] ?? 'edit by hand, then run `tug verify syntax`',
    });
  }
  const r = parseOpArgv(tokens);
  if (!r.ok) {
    const argument = r.kind === 'syntax' ? argumentOf(r.reason) : 'operation';
    throw new KernelError('InvalidArgument', r.reason, {
      argument,
      value: r.op ?? valueOf(tokens, argument),
      reason: r.kind === 'syntax' ? 'syntax' : r.kind,
    });
  }
  if (r.op === 'organize-imports') {
    return {
      op: { op: 'organize-imports', file: r.args.file, mode: r.args.mode },
      verify: r.args.verify,
      testCommand: r.args.test_command,
      safety: r.args.safety,
    };
  }
  const a = r.args;
  const op: OpSpec = { op: 'rename-symbol', to: a.to };
  if (a.at) op.at = { file: a.at.file, line: a.at.line, col: a.at.col };
  if (a.symbol) op.symbol = `${a.symbol.file}::${a.symbol.name}`;
  if (a.expect !== undefined) op.expect = a.expect;
  if (a.safety) op.safety = a.safety;
  return { op, verify: a.verify, testCommand: a.test_command, safety: a.safety };
}

function argumentOf(reason: string): string {
  return /--[a-z-]+/.exec(reason)?.[0] ?? 'operation';
}

function valueOf(tokens: string[], flag: string): string | null {
  const i = tokens.indexOf(flag);
  return i >= 0 && i + 1 < tokens.length ? tokens[i + 1]! : null;
}
