/**
 * Refactor operation text (`op_text`) syntax (docs/kernel.md §3.2, §7.1): the shell-style tokenizer and the
 * argument parser shared by the plan validator (error E020) and the kernel. Pure: no file system, no
 * workspace, no exceptions — every failure is a `{ ok: false, reason }` value.
 *
 * ```
 * rename-symbol (--at FILE:LINE:COL [--expect OLD] | --symbol FILE::Qualified.Name) --to NEW
 * organize-imports --file FILE [--mode all|sort|remove-unused]
 * + optional --verify none|syntax|tests|typecheck, --safety strict|aggressive|safe,
 *   --test-command JSON-ARGV, --allow-large
 * ```
 * Flags may come before or after the operation name, as `--flag value` or `--flag=value`. Any other flag
 * (including `--apply`, `--workspace`, `--session-dir`) is invalid, and no flag may be given twice.
 */

export const SUPPORTED_OPS = ['rename-symbol', 'organize-imports'] as const;
export type SupportedOp = (typeof SUPPORTED_OPS)[number];
/** Operations known to the kernel but refused (`UnsupportedOperation`) before their arguments are read. */
export const UNSUPPORTED_OPS = [
  'move-symbol',
  'change-signature',
  'extract-function',
  'extract-variable',
  'inline-function',
] as const;

export const VERIFY_MODES = ['none', 'syntax', 'tests', 'typecheck'] as const;
export type VerifyMode = (typeof VERIFY_MODES)[number];
export type SafetyMode = 'strict' | 'aggressive';
export const ORGANIZE_MODES = ['all', 'sort', 'remove-unused'] as const;
export type OrganizeMode = (typeof ORGANIZE_MODES)[number];

/** Options any operation may carry in a plan. */
export interface OpOptions {
  verify?: VerifyMode;
  /** `safe` is normalized to `strict`. */
  safety?: SafetyMode;
  test_command?: string[];
  allow_large?: boolean;
}

export interface AtSelector {
  file: string;
  /** 1-based. */
  line: number;
  /** 1-based, counted in UTF-8 bytes (checked against the file by the kernel, not here). */
  col: number;
}

export interface SymbolSelector {
  file: string;
  /** `Client.fetchAll`: the `.`-path of declaration names. */
  name: string;
}

export interface RenameSymbolArgs extends OpOptions {
  at?: AtSelector;
  expect?: string;
  symbol?: SymbolSelector;
  to: string;
}

export interface OrganizeImportsArgs extends OpOptions {
  file: string;
  mode: OrganizeMode;
}

export type ParsedOp =
  | { ok: true; op: 'rename-symbol'; args: RenameSymbolArgs }
  | { ok: true; op: 'organize-imports'; args: OrganizeImportsArgs };

export interface OpParseFailure {
  ok: false;
  reason: string;
  /** `syntax` (tokenizing or arguments), `unknown_operation`, `unsupported_operation`. */
  kind: 'syntax' | 'unknown_operation' | 'unsupported_operation';
  op?: string;
}

export type OpParseResult = ParsedOp | OpParseFailure;

export type TokenizeResult = { ok: true; tokens: string[] } | { ok: false; reason: string };

/**
 * Splits text into words like a POSIX shell, without any expansion: whitespace separates words; single
 * quotes keep everything literally; inside double quotes a backslash escapes only `"`, `\`, `$` and a
 * backtick; outside quotes a backslash escapes the next character. An unterminated quote or a trailing
 * backslash is an error.
 */
export function tokenizeShell(text: string): TokenizeResult {
  const tokens: string[] = [];
  let cur = '';
  let inWord = false;
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      if (inWord) tokens.push(cur);
      cur = '';
      inWord = false;
      i++;
    } else if (c === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) return { ok: false, reason: 'unterminated single quote' };
      cur += text.slice(i + 1, end);
      inWord = true;
      i = end + 1;
    } else if (c === '"') {
      i++;
      inWord = true;
      let closed = false;
      while (i < text.length) {
        const d = text[i]!;
        if (d === '"') {
          closed = true;
          i++;
          break;
        }
        if (d === '\\' && i + 1 < text.length && '"\\$`'.includes(text[i + 1]!)) {
          cur += text[i + 1];
          i += 2;
        } else {
          cur += d;
          i++;
        }
      }
      if (!closed) return { ok: false, reason: 'unterminated double quote' };
    } else if (c === '\\') {
      if (i + 1 >= text.length) return { ok: false, reason: 'trailing backslash' };
      cur += text[i + 1];
      inWord = true;
      i += 2;
    } else {
      cur += c;
      inWord = true;
      i++;
    }
  }
  if (inWord) tokens.push(cur);
  return { ok: true, tokens };
}

/** Flags taking a value, per operation (common ones apply to every operation). */
const COMMON_VALUE_FLAGS = ['--verify', '--safety', '--test-command'];
const COMMON_BOOL_FLAGS = ['--allow-large'];
const OP_VALUE_FLAGS: Record<SupportedOp, string[]> = {
  'rename-symbol': ['--at', '--expect', '--symbol', '--to'],
  'organize-imports': ['--file', '--mode'],
};

const fail = (reason: string, kind: OpParseFailure['kind'] = 'syntax', op?: string): OpParseFailure =>
  op === undefined ? { ok: false, reason, kind } : { ok: false, reason, kind, op };

/** Parses `op_text` (syntax only; files, positions and names are checked later by the kernel). */
export function parseOpText(text: string): OpParseResult {
  if (text.includes('\0')) return fail('op_text contains a NUL byte');
  const tok = tokenizeShell(text);
  if (!tok.ok) return fail(tok.reason);
  return parseOpArgv(tok.tokens);
}

/** Parses an already tokenized operation (`['rename-symbol', '--symbol', 'a.ts::f', '--to', 'g']`). */
export function parseOpArgv(argv: readonly string[]): OpParseResult {
  // The operation is the first word that is neither a flag nor a flag's value. Value flags may come before
  // it; their values are skipped here and parsed below.
  const anyValueFlag = new Set([...COMMON_VALUE_FLAGS, ...Object.values(OP_VALUE_FLAGS).flat()]);
  let opIndex = -1;
  for (let i = 0; i < argv.length; i++) {
    const w = argv[i]!;
    if (!w.startsWith('--')) {
      opIndex = i;
      break;
    }
    if (!w.includes('=') && anyValueFlag.has(w)) i++;
  }
  if (opIndex < 0) return fail('no operation given');
  const op = argv[opIndex]!;
  if ((UNSUPPORTED_OPS as readonly string[]).includes(op))
    return fail(`operation ${op} is not supported`, 'unsupported_operation', op);
  if (!(SUPPORTED_OPS as readonly string[]).includes(op))
    return fail(`unknown operation ${JSON.stringify(op)}`, 'unknown_operation', op);
  const sop = op as SupportedOp;
  const valueFlags = new Set([...COMMON_VALUE_FLAGS, ...OP_VALUE_FLAGS[sop]]);
  const values = new Map<string, string>();
  const bools = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    if (i === opIndex) continue;
    const w = argv[i]!;
    if (!w.startsWith('--')) return fail(`unexpected argument ${JSON.stringify(w)}`);
    const eq = w.indexOf('=');
    const name = eq >= 0 ? w.slice(0, eq) : w;
    if (values.has(name) || bools.has(name)) return fail(`${name} given twice`);
    if (COMMON_BOOL_FLAGS.includes(name)) {
      if (eq >= 0) return fail(`${name} takes no value`);
      bools.add(name);
      continue;
    }
    if (!valueFlags.has(name)) return fail(`flag ${name} is not allowed in ${op}`);
    let value: string | undefined;
    if (eq >= 0) value = w.slice(eq + 1);
    else {
      if (i + 1 === opIndex) return fail(`${name} needs a value`);
      value = argv[++i];
    }
    if (value === undefined) return fail(`${name} needs a value`);
    values.set(name, value);
  }
  const options = parseOptions(values, bools);
  if ('reason' in options) return options;
  return sop === 'rename-symbol' ? parseRename(values, options) : parseOrganize(values, options);
}

function parseOptions(values: Map<string, string>, bools: Set<string>): OpOptions | OpParseFailure {
  const o: OpOptions = {};
  const verify = values.get('--verify');
  if (verify !== undefined) {
    if (!(VERIFY_MODES as readonly string[]).includes(verify))
      return fail(`--verify must be one of ${VERIFY_MODES.join(', ')}`);
    o.verify = verify as VerifyMode;
  }
  const safety = values.get('--safety');
  if (safety !== undefined) {
    if (safety !== 'strict' && safety !== 'aggressive' && safety !== 'safe')
      return fail('--safety must be strict, aggressive or safe');
    o.safety = safety === 'aggressive' ? 'aggressive' : 'strict';
  }
  const tc = values.get('--test-command');
  if (tc !== undefined) {
    const argv = parseTestCommand(tc);
    if (argv === null) return fail('--test-command must be a non-empty JSON array of strings');
    o.test_command = argv;
  }
  if (bools.has('--allow-large')) o.allow_large = true;
  return o;
}

/** A JSON array of strings (non-empty, first element non-empty), or null. */
export function parseTestCommand(text: string): string[] | null {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  if (!Array.isArray(v) || v.length === 0 || !v.every((x) => typeof x === 'string') || v[0] === '') return null;
  return v as string[];
}

/** `FILE:LINE:COL`, split at the last two colons; line and col are positive integers. */
export function parseAt(text: string): AtSelector | null {
  const m = /^(.+):([0-9]+):([0-9]+)$/s.exec(text);
  if (!m) return null;
  const line = Number(m[2]);
  const col = Number(m[3]);
  if (!Number.isSafeInteger(line) || !Number.isSafeInteger(col) || line < 1 || col < 1) return null;
  return { file: m[1]!, line, col };
}

/** `FILE::Qualified.Name`, split at the first `::`; every name segment non-empty. */
export function parseSymbol(text: string): SymbolSelector | null {
  const k = text.indexOf('::');
  if (k <= 0) return null;
  const file = text.slice(0, k);
  const name = text.slice(k + 2);
  if (name === '' || name.split('.').some((seg) => seg.trim() === '' || seg !== seg.trim())) return null;
  return { file, name };
}

function parseRename(values: Map<string, string>, options: OpOptions): OpParseResult {
  const at = values.get('--at');
  const symbol = values.get('--symbol');
  const to = values.get('--to');
  const expect = values.get('--expect');
  if (at !== undefined && symbol !== undefined) return fail('give either --at or --symbol, not both');
  if (at === undefined && symbol === undefined)
    return fail('rename-symbol needs --at FILE:LINE:COL or --symbol FILE::Name');
  if (expect !== undefined && at === undefined) return fail('--expect is only valid with --at');
  if (to === undefined || to.trim() === '') return fail('rename-symbol needs --to NEW');
  const args: RenameSymbolArgs = { ...options, to };
  if (at !== undefined) {
    const sel = parseAt(at);
    if (!sel) return fail(`--at must be FILE:LINE:COL with 1-based line and col, got ${JSON.stringify(at)}`);
    args.at = sel;
    if (expect !== undefined) {
      if (expect === '') return fail('--expect needs a non-empty name');
      args.expect = expect;
    }
  } else {
    const sel = parseSymbol(symbol!);
    if (!sel) return fail(`--symbol must be FILE::Qualified.Name, got ${JSON.stringify(symbol)}`);
    args.symbol = sel;
  }
  return { ok: true, op: 'rename-symbol', args };
}

function parseOrganize(values: Map<string, string>, options: OpOptions): OpParseResult {
  const file = values.get('--file');
  if (file === undefined || file === '') return fail('organize-imports needs --file FILE');
  const mode = values.get('--mode') ?? 'all';
  if (!(ORGANIZE_MODES as readonly string[]).includes(mode))
    return fail(`--mode must be one of ${ORGANIZE_MODES.join(', ')}`);
  return { ok: true, op: 'organize-imports', args: { ...options, file, mode: mode as OrganizeMode } };
}
