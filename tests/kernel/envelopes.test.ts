/**
 * Golden error and success envelopes for every exit code (docs/kernel.md §13.2), plus bad-input cases:
 * the right code and exit, one stderr line, key order, and nothing written.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runKernelCli } from '../../src/kernel/cli/tug.js';
import { TUGCODE_REFACTOR } from '../../src/config/kernel-env.js';
import { openKernel, type Kernel } from '../../src/kernel/index.js';
import { readTree, tempWs } from './helpers.js';
import { normalizedText } from './normalize.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const UPDATE = process.env.TUG_UPDATE_GOLDEN === '1';
const TSCONFIG = JSON.stringify({
  compilerOptions: {
    strict: true,
    target: 'ES2022',
    module: 'ESNext',
    moduleResolution: 'Bundler',
    lib: ['ES2022', 'DOM'],
    skipLibCheck: true,
    noEmit: true,
  },
});

const FILES = {
  'tsconfig.json': TSCONFIG,
  'package.json': '{ "name": "ws", "private": true }\n',
  'src/a.ts':
    "export function parseConfig(s: string): number {\n  return s.length;\n}\nexport const other = 1;\nexport const used = parseConfig('x') + other;\nconsole.log(used);\n",
  'src/b.ts': "import { parseConfig } from './a';\n\nexport const b = parseConfig('b');\n",
  'src/m.ts':
    'export class A {\n  m(): number {\n    return 1;\n  }\n}\nexport namespace A {\n  export function m(): number {\n    return 2;\n  }\n}\n',
  'src/lib.rs': 'fn main() {}\n',
};

function golden(name: string, actual: string): void {
  const p = join(HERE, 'golden', 'envelopes', `${name}.json`);
  if (UPDATE || !existsSync(p)) {
    mkdirSync(dirname(p), { recursive: true });
    writeFileSync(p, actual);
    if (!UPDATE) throw new Error(`golden envelopes/${name}.json was missing and has been written; review it`);
    return;
  }
  expect(actual).toBe(readFileSync(p, 'utf8'));
}

async function both(argv: string[], cwd: string, env: Record<string, string> = {}) {
  const t = await runKernelCli(argv, { prog: 'tug', env, cwd });
  if (argv.includes('--apply') && t.exitCode === 0) return t; // a second apply would be a different command
  const u = await runKernelCli(argv, { ...TUGCODE_REFACTOR, env, cwd });
  const strip = (x: string) => x.replace(/"duration_ms":\d+/g, '"duration_ms":0');
  expect(strip(u.stdout)).toBe(strip(t.stdout));
  expect(u.stderr).toBe(t.stderr.replace(/^tug:/, 'tugcode:'));
  return t;
}

/** Run a case, check exit, code, key order and stderr; compare with its golden; return the envelope. */
async function check(
  name: string,
  argv: string[],
  cwd: string,
  exit: number,
  code?: string,
  kernelEnv: Record<string, string> = {},
) {
  const before = readTree(cwd);
  const r = await both(argv, cwd, kernelEnv);
  expect(r.exitCode, r.stdout).toBe(exit);
  const env = JSON.parse(r.stdout);
  const keys = Object.keys(env);
  expect(keys.slice(0, 2)).toEqual(['status', 'schema_version']);
  if ('snapshot_id' in env) expect(keys[2]).toBe('snapshot_id');
  expect(keys).toContain('warnings');
  if (code) {
    expect(env.status).toBe('error');
    expect(env.error.code).toBe(code);
    expect(r.stderr.split('\n')).toEqual([
      `tug: ${code}: ${env.error.message}`.replace(/[\r\n]+/g, ' ').slice(0, 500),
      '',
    ]);
    if (exit !== 0 && !argv.includes('--apply')) expect(readTree(cwd)).toEqual(before);
  } else expect(r.stderr).toBe('');
  golden(name, normalizedText(r.stdout, [cwd]));
  return env;
}

let ws: string;
beforeAll(() => {
  ws = realpathSync(tempWs(FILES));
});

describe('exit 0 envelopes', () => {
  it('analyze, dry run, apply, verify, snapshot and session status succeed with stable shapes', async () => {
    const w = realpathSync(tempWs(FILES));
    await check('analyze_ok', ['analyze-impact', 'rename-symbol', '--at', 'src/a.ts:1:17', '--to', 'loadConfig'], w, 0);
    await check('run_dry_ok', ['run', 'rename-symbol', '--at', 'src/a.ts:1:17', '--to', 'loadConfig'], w, 0);
    const applied = await check(
      'run_apply_ok',
      ['run', '--apply', 'rename-symbol', '--at', 'src/a.ts:1:17', '--to', 'loadConfig'],
      w,
      0,
    );
    expect(applied.files_written).toEqual(['src/a.ts', 'src/b.ts']);
    expect(readFileSync(join(w, 'src/b.ts'), 'utf8')).toContain('loadConfig');
    await check('verify_ok', ['verify', 'syntax'], w, 0);
    await check('snapshot_ok', ['snapshot'], w, 0);
    await check('session_status_ok', ['session', 'status'], w, 0);
  });

  it('doctor runs every probe and exits 0', async () => {
    const r = await runKernelCli(['doctor'], { prog: 'tug', env: {}, cwd: ws });
    expect(r.exitCode).toBe(0);
    const env = JSON.parse(r.stdout);
    expect(env.checks.map((c: { name: string }) => c.name)).toEqual([
      'node-version',
      'typescript-api',
      'typescript-rename-smoke',
      'pyright-langserver',
      'pyright-typeshed',
      'python-interpreter',
      'rust-analyzer',
      'cargo',
      'git',
      'session-dir-writable',
      'apply-journal',
    ]);
    expect(env.backends.typescript.available).toBe(true);
    expect(Object.keys(env)).toEqual([
      'status',
      'schema_version',
      'checks',
      'backends',
      'verifiers',
      'summary',
      'warnings',
    ]);
  });
});

describe('exit 2 envelopes', () => {
  it('rejects a malformed --at, a reserved new name and an unsupported operation', async () => {
    await check('invalid_argument_at', ['run', 'rename-symbol', '--at', 'foo', '--to', 'x'], ws, 2, 'InvalidArgument');
    const e = await check(
      'invalid_argument_name',
      ['run', 'rename-symbol', '--at', 'src/a.ts:1:17', '--to', 'class'],
      ws,
      2,
      'InvalidArgument',
    );
    expect(e.error.details).toEqual({ argument: '--to', value: 'class', reason: 'reserved_word' });
    const n = await runKernelCli(['run', 'rename-symbol', '--at', 'src/a.ts:1:17', '--to', '1abc'], {
      prog: 'tug',
      env: {},
      cwd: ws,
    });
    expect(JSON.parse(n.stdout).error.details.reason).toBe('not_an_identifier');
    const u = await check('unsupported_operation', ['run', 'move-symbol', '--whatever'], ws, 2, 'UnsupportedOperation');
    expect(u.error.details.fallback).toMatch(/verify syntax/);
    const c = await runKernelCli(['nonsense'], { prog: 'tug', env: {}, cwd: ws });
    expect([c.exitCode, JSON.parse(c.stdout).error.code]).toEqual([2, 'InvalidArgument']);
  });
});

describe('exit 3 envelopes', () => {
  it('reports unknown files, bad positions, missing, ambiguous and unrenameable symbols', async () => {
    await check(
      'file_not_found',
      ['run', 'rename-symbol', '--at', 'src/nope.ts:1:1', '--to', 'x'],
      ws,
      3,
      'FileNotFound',
    );
    await check(
      'invalid_position',
      ['run', 'rename-symbol', '--at', 'src/a.ts:99:1', '--to', 'x'],
      ws,
      3,
      'InvalidPosition',
    );
    const col = await runKernelCli(['run', 'rename-symbol', '--at', 'src/a.ts:1:200', '--to', 'x'], {
      prog: 'tug',
      env: {},
      cwd: ws,
    });
    expect(JSON.parse(col.stdout).error.code).toBe('InvalidPosition');
    const s = await check(
      'symbol_not_found',
      ['run', 'rename-symbol', '--at', 'src/a.ts:1:7', '--to', 'x'],
      ws,
      3,
      'SymbolNotFound',
    );
    expect(s.error.details.reason).toBe('no_identifier');
    const ws1 = await runKernelCli(['run', 'rename-symbol', '--at', 'src/a.ts:2:1', '--to', 'x'], {
      prog: 'tug',
      env: {},
      cwd: ws,
    });
    expect(JSON.parse(ws1.stdout).error.details.reason).toBe('no_identifier');
    const ex = await runKernelCli(['run', 'rename-symbol', '--at', 'src/a.ts:1:17', '--expect', 'other', '--to', 'x'], {
      prog: 'tug',
      env: {},
      cwd: ws,
    });
    expect(JSON.parse(ex.stdout).error.details).toMatchObject({ reason: 'expect_mismatch', found: 'parseConfig' });
    const a = await check(
      'ambiguous_symbol',
      ['run', 'rename-symbol', '--symbol', 'src/m.ts::A.m', '--to', 'x'],
      ws,
      3,
      'AmbiguousSymbol',
    );
    expect(a.error.details.candidates).toHaveLength(2);
    await check(
      'not_renameable',
      ['run', 'rename-symbol', '--at', 'src/a.ts:6:9', '--to', 'x'],
      ws,
      3,
      'NotRenameable',
    );
  });
});

describe('exit 4 envelopes', () => {
  let holder: Kernel | null = null;
  afterAll(async () => {
    await holder?.close();
  });

  it('detects a file changed between analyze and run', async () => {
    const w = realpathSync(tempWs(FILES));
    const an = await runKernelCli(['analyze-impact', 'rename-symbol', '--at', 'src/a.ts:1:17', '--to', 'loadConfig'], {
      prog: 'tug',
      env: {},
      cwd: w,
    });
    expect(an.exitCode).toBe(0);
    // The run is bound to the analysis it names (docs/kernel.md §10.2).
    const analysed = JSON.parse(an.stdout).snapshot_id;
    writeFileSync(
      join(w, 'src/b.ts'),
      "import { parseConfig } from './a';\n\nexport const b = parseConfig('changed');\n",
    );
    const e = await check(
      'snapshot_mismatch',
      ['run', '--apply', '--snapshot-id', analysed, 'rename-symbol', '--at', 'src/a.ts:1:17', '--to', 'loadConfig'],
      w,
      4,
      'SnapshotMismatch',
    );
    expect(e.error.details.changed_files).toEqual(['src/b.ts']);
    expect(readFileSync(join(w, 'src/a.ts'), 'utf8')).toContain('parseConfig');
  });

  it('fails at once with --no-wait while another kernel holds the lock', async () => {
    const w = realpathSync(tempWs(FILES));
    holder = await openKernel({ workspace: w, holdLock: true });
    const e = await check('session_locked', ['snapshot', '--no-wait'], w, 4, 'SessionLocked');
    expect(e.error.details.lock_holder_pid).toBe(process.pid);
    await holder.close();
    holder = null;
  });

  it('rolls back an injected write failure', async () => {
    const w = realpathSync(tempWs(FILES));
    const before = readTree(w);
    // The fault seam is read from the kernel's injected environment, never from process.env.
    const e = await check(
      'write_error',
      ['run', '--apply', '--verify', 'none', 'rename-symbol', '--at', 'src/a.ts:1:17', '--to', 'loadConfig'],
      w,
      4,
      'WriteError',
      { NODE_ENV: 'test', TUG_FAULT: 'write:2' },
    );
    expect(e.error.details.rolled_back).toBe(true);
    expect(readTree(w)).toEqual(before);
  });
});

describe('exit 5 envelopes', () => {
  it('fails verification without touching the workspace', async () => {
    const broken = realpathSync(tempWs({ ...FILES, 'src/broken.ts': 'export const x = (;\n' }));
    const s = await check('syntax_error', ['verify', 'syntax'], broken, 5, 'SyntaxError');
    expect(Object.keys(s).slice(-4)).toEqual(['mode', 'passed', 'verification', 'warnings']);
    const t = await check(
      'tests_failed',
      [
        'run',
        '--apply',
        '--verify',
        'tests',
        '--test-command',
        '["node","-e","process.exit(1)"]',
        'rename-symbol',
        '--at',
        'src/a.ts:1:17',
        '--to',
        'loadConfig',
      ],
      ws,
      5,
      'TestsFailed',
    );
    expect(t.applied).toBe(false);
    expect(t.patch.edits.length).toBeGreaterThan(0);
    await check(
      'typecheck_failed',
      [
        'run',
        '--apply',
        '--verify',
        'typecheck',
        '--test-command',
        '["node","-e","0"]',
        'rename-symbol',
        '--at',
        'src/a.ts:1:17',
        '--to',
        'other',
      ],
      ws,
      5,
      'TypecheckFailed',
    );
    await check(
      'verification_unavailable',
      ['run', '--verify', 'tests', 'rename-symbol', '--at', 'src/a.ts:1:17', '--to', 'loadConfig'],
      ws,
      5,
      'VerificationUnavailable',
    );
  });
});

describe('exit 10 envelopes', () => {
  it('reports an unavailable backend and an internal error', async () => {
    await check(
      'backend_unavailable',
      ['run', '--rust-analyzer', '/nonexistent', 'rename-symbol', '--at', 'src/lib.rs:1:4', '--to', 'start'],
      ws,
      10,
      'BackendUnavailable',
    );
    const r = await runKernelCli(['snapshot'], {
      prog: 'tug',
      env: { NODE_ENV: 'test', TUG_FAULT: 'internal' },
      cwd: ws,
    });
    expect(r.exitCode).toBe(10);
    const env = JSON.parse(r.stdout);
    expect(env.error.code).toBe('InternalError');
    golden('internal_error', normalizedText(r.stdout, [ws]));
  });
});
