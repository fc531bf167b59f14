/**
 * Individual checks (docs/kernel.md §11.2–11.3): ts-syntax (syntactic diagnostics), tsc, and the test
 * command, each run inside a sandbox root. Subprocesses get argv arrays, never a shell.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { runCapture } from './proc.js';
import { decodeFile, LineIndex } from '../patch/positions.js';
import { toByteColumns } from './columns.js';
import type { Diagnostic } from '../types.js';

export interface ProcResult {
  exit_code: number | null;
  signal: string | null;
  timed_out: boolean;
  output: string;
  spawn_error: string | null;
}

/** Run argv in cwd with `env` for its exit status and output tail (proc.ts runCapture, without stdout). */
export async function runProcess(
  argv: string[],
  cwd: string,
  timeoutMs: number,
  env: Record<string, string | undefined>,
): Promise<ProcResult> {
  const c = await runCapture(argv, cwd, timeoutMs, env, { keepStdout: false });
  return {
    exit_code: c.exit_code,
    signal: c.signal,
    timed_out: c.timed_out,
    output: c.output,
    spawn_error: c.spawn_error,
  };
}

type TsModule = typeof import('typescript');

/** Syntactic diagnostics of `files` (relative to root): each file parsed alone (no resolution, no lib). */
export function tsSyntaxDiagnostics(
  ts: TsModule,
  root: string,
  files: string[],
  read: (f: string) => Uint8Array = (f) => readFileSync(join(root, f)),
): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const f of files) {
    const ft = decodeFile(f, read(f));
    if (!ft) {
      out.push({ file: f, line: 1, col: null, code: null, message: 'file is not valid UTF-8' });
      continue;
    }
    // JSDoc is never parsed: its errors are not syntactic diagnostics, and skipping it makes parsing faster.
    const sf = ts.createSourceFile(
      join(root, f),
      ft.text,
      { languageVersion: ts.ScriptTarget.ESNext, jsDocParsingMode: ts.JSDocParsingMode.ParseNone },
      false,
    );
    const parsed = (sf as unknown as { parseDiagnostics?: readonly import('typescript').Diagnostic[] })
      .parseDiagnostics;
    const diags =
      parsed ??
      ts
        .createProgram([join(root, f)], { noResolve: true, noLib: true, allowJs: true, noEmit: true, types: [] })
        .getSyntacticDiagnostics();
    const idx = new LineIndex(ft);
    for (const d of diags) {
      const lc = d.start !== undefined ? idx.lineCol(idx.toByte(Math.min(d.start, ft.text.length))) : null;
      out.push({
        file: f,
        line: lc?.line ?? 1,
        col: lc?.col ?? null,
        code: `TS${d.code}`,
        message: ts.flattenDiagnosticMessageText(d.messageText, ' '),
      });
    }
  }
  return out;
}

/** The tsc to run: the workspace's own (node_modules/typescript) if present, else the bundled one. */
export function tscPath(root: string): string {
  const own = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  if (existsSync(own)) return own;
  return createRequire(import.meta.url).resolve('typescript/bin/tsc');
}

const TSC_LINE = /^(.+)\((\d+),(\d+)\): error (TS\d+): (.*)$/;

export function parseTscOutput(output: string): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const line of output.split(/\r?\n/)) {
    const m = TSC_LINE.exec(line);
    if (m)
      out.push({ file: m[1]!.replace(/\\/g, '/'), line: Number(m[2]), col: Number(m[3]), code: m[4]!, message: m[5]! });
  }
  return out;
}

/**
 * The options of the kernel's inferred project (docs/kernel.md §6.2) as tsc flags, for the changed files no
 * tsconfig includes (§11.2): they are type-checked as the rename saw them.
 */
export const LOOSE_TSC_FLAGS = [
  '--allowJs',
  '--skipLibCheck',
  '--jsx',
  'preserve',
  '--target',
  'ES2022',
  '--module',
  'ESNext',
  '--moduleResolution',
  'bundler',
];

/** `tsc --noEmit` of one config (a path), or of loose files (a list) with LOOSE_TSC_FLAGS. */
export async function runTsc(
  root: string,
  cfg: string | string[],
  timeoutMs: number,
  env: Record<string, string | undefined>,
): Promise<{ proc: ProcResult; diagnostics: Diagnostic[] }> {
  const target = typeof cfg === 'string' ? ['-p', cfg] : [...LOOSE_TSC_FLAGS, ...cfg];
  const proc = await runProcess(
    [process.execPath, tscPath(root), '--noEmit', '--pretty', 'false', ...target],
    root,
    timeoutMs,
    env,
  );
  return { proc, diagnostics: toByteColumns(root, parseTscOutput(proc.output)) };
}

const NPM_PLACEHOLDER = 'echo "Error: no test specified" && exit 1';

/** Detected TS/JS test command (§11.3), or null. */
export function detectTsTestCommand(root: string): string[] | null {
  try {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
    const t = pkg?.scripts?.test;
    if (typeof t === 'string' && t.trim() !== '' && t.trim() !== NPM_PLACEHOLDER) return ['npm', 'test', '--silent'];
  } catch {
    return null;
  }
  return null;
}

/** Diagnostic identity for baselines: (file, code, message) with old/new names replaced. */
export function diagnosticKey(d: Diagnostic, names: string[]): string {
  let msg = d.message;
  for (const n of names)
    if (n) msg = msg.replace(new RegExp(`(?<![\\w$])${n.replace(/[$]/g, '\\$')}(?![\\w$])`, 'g'), '<renamed>');
  return `${d.file}\0${d.code}\0${msg}`;
}

/** Diagnostics of `after` that the baseline multiset lacks. */
export function newDiagnostics(baseline: Diagnostic[], after: Diagnostic[], names: string[]): Diagnostic[] {
  const counts = new Map<string, number>();
  for (const d of baseline) counts.set(diagnosticKey(d, names), (counts.get(diagnosticKey(d, names)) ?? 0) + 1);
  const out: Diagnostic[] = [];
  for (const d of after) {
    const k = diagnosticKey(d, names);
    const c = counts.get(k) ?? 0;
    if (c > 0) counts.set(k, c - 1);
    else out.push(d);
  }
  return out;
}
