/**
 * The Rust backend against the scripted fake LSP server standing in for rust-analyzer (docs/kernel.md §6.4,
 * docs/quality.md §1): availability by `--version`, the quiescent wait (IndexingTimeout, health errors),
 * WorkspaceEdit → Patch IR in the negotiated UTF-8 encoding with SkippedFile for target/ and outside edits,
 * resource operations refused, the error mapping table, timeouts and crashes, and cargo-check verification.
 */
import { describe, it, expect, afterEach } from 'vitest';
import { readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { runKernelCli } from '../../../src/kernel/cli/tug.js';
import { kernelEnv, tempWs } from '../helpers.js';
import { FAKE_SERVER, withScript } from '../fake-lsp/script.js';

const LIB =
  'pub fn process_data(x: i32) -> i32 {\n    x\n}\n// naïve café\npub fn use_it() -> i32 { /* é */ process_data(1) }\n';
const CALL_PREFIX = 'pub fn use_it() -> i32 { /* é */ ';
const CALL_COL8 = Buffer.byteLength(CALL_PREFIX, 'utf8');
const DEF = { start: { line: 0, character: 7 }, end: { line: 0, character: 19 } };
const CALL = { start: { line: 4, character: CALL_COL8 }, end: { line: 4, character: CALL_COL8 + 12 } };

function crate(): string {
  return realpathSync(
    tempWs({
      'Cargo.toml': '[package]\nname = "fake"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n',
      'src/lib.rs': LIB,
    }),
  );
}

const READY = {
  positionEncoding: 'utf-8',
  serverStatus: [
    { health: 'ok', quiescent: false },
    { health: 'ok', quiescent: true },
  ],
};
const RESOLVE = {
  'textDocument/definition': { result: [{ uri: '{root}/src/lib.rs', range: DEF }] },
  'textDocument/prepareRename': { result: DEF },
};

async function tug(ws: string, argv: string[]) {
  const r = await runKernelCli([...argv.slice(0, 1), '--rust-analyzer', FAKE_SERVER, ...argv.slice(1)], {
    prog: 'tug',
    // The kernel's environment, injected: the fake server's script and the test seams travel through it.
    env: kernelEnv({
      NODE_ENV: 'test',
      TUG_RA_INDEX_TIMEOUT_S: process.env.TUG_RA_INDEX_TIMEOUT_S,
      TUG_LSP_TIMEOUT_S: process.env.TUG_LSP_TIMEOUT_S,
    }),
    cwd: ws,
  });
  return { ...r, env: JSON.parse(r.stdout) };
}

const rename = (to = 'transform_data', at = 'src/lib.rs:1:8') => [
  'run',
  '--verify',
  'none',
  'rename-symbol',
  '--at',
  at,
  '--to',
  to,
];

afterEach(() => {
  for (const k of ['FAKE_LSP_SCRIPT', 'TUG_RA_INDEX_TIMEOUT_S', 'TUG_LSP_TIMEOUT_S']) delete process.env[k];
});

describe('rust-analyzer availability', () => {
  it('answers BackendUnavailable with the probe output when --version fails, and doctor says so', async () => {
    const ws = crate();
    withScript({
      version: { exit: 1, stderr: "error: Unknown binary 'rust-analyzer' in official toolchain 'stable'" },
    });
    const r = await tug(ws, rename());
    expect(r.exitCode).toBe(10);
    expect(r.env.error.code).toBe('BackendUnavailable');
    expect(r.env.error.details.backend).toBe('rust-analyzer');
    expect(r.env.error.details.searched).toEqual([FAKE_SERVER]);
    expect(r.env.error.details.probe_error).toContain("Unknown binary 'rust-analyzer'");
    const d = await runKernelCli(['doctor', '--rust-analyzer', FAKE_SERVER], {
      prog: 'tug',
      env: kernelEnv(),
      cwd: ws,
    });
    const doc = JSON.parse(d.stdout);
    const check = doc.checks.find((c: { name: string }) => c.name === 'rust-analyzer');
    expect(check.status).toBe('warning');
    expect(check.message).toContain("Unknown binary 'rust-analyzer'");
    expect(doc.backends.rust).toMatchObject({ available: false, rust_analyzer: null });
    expect(doc.backends.rust.reason).toContain("Unknown binary 'rust-analyzer'");
  });

  it('refuses a .rs file outside any Cargo project with NotCargoProject', async () => {
    const ws = realpathSync(tempWs({ 'src/lib.rs': LIB }));
    withScript({ ...READY, methods: RESOLVE });
    const r = await tug(ws, rename());
    expect([r.exitCode, r.env.error.code]).toEqual([3, 'NotCargoProject']);
  });
});

describe('rust-analyzer rename', () => {
  it('converts a UTF-8 WorkspaceEdit to byte-exact edits, drops target/ and outside edits, and verifies with cargo check', async () => {
    const ws = crate();
    withScript({
      ...READY,
      methods: {
        ...RESOLVE,
        'textDocument/rename': {
          result: {
            documentChanges: [
              {
                textDocument: { uri: '{root}/src/lib.rs', version: null },
                edits: [
                  { range: CALL, newText: 'transform_data' },
                  { range: DEF, newText: 'transform_data' },
                ],
              },
              {
                textDocument: { uri: '{root}/target/debug/build/gen.rs', version: null },
                edits: [{ range: DEF, newText: 'transform_data' }],
              },
              {
                textDocument: { uri: 'file:///nonexistent/registry/src/dep/lib.rs', version: null },
                edits: [{ range: DEF, newText: 'transform_data' }],
              },
            ],
          },
        },
      },
    });
    const r = await tug(ws, [
      'run',
      '--verify',
      'syntax',
      'rename-symbol',
      '--at',
      'src/lib.rs:1:8',
      '--to',
      'transform_data',
    ]);
    expect(r.exitCode, r.stdout).toBe(0);
    const start = Buffer.byteLength(LIB.slice(0, LIB.indexOf(CALL_PREFIX) + CALL_PREFIX.length), 'utf8');
    expect(r.env.patch.edits.map((e: { span: object; line: number; col: number }) => [e.span, e.line, e.col])).toEqual([
      [{ start: 7, end: 19 }, 1, 8],
      [{ start, end: start + 12 }, 5, CALL_COL8 + 1],
    ]);
    expect(r.env.symbol).toMatchObject({ name: 'process_data', kind: 'function' });
    expect(r.env.warnings.map((w: { code: string }) => w.code)).toEqual(['SkippedFile', 'SkippedFile']);
    const cargo = spawnSync('cargo', ['--version']);
    if (cargo.status === 0) {
      expect(r.env.verification.checks.map((c: { name: string; status: string }) => [c.name, c.status])).toEqual([
        ['cargo-check', 'passed'],
      ]);
    } else {
      expect(r.env.verification.checks[0].status).toBe('unavailable');
    }
    const a = await tug(ws, [...rename(), '--apply']);
    expect(a.env.files_written).toEqual(['src/lib.rs']);
    expect(readFileSync(join(ws, 'src/lib.rs'), 'utf8')).toBe(LIB.split('process_data').join('transform_data'));
  });

  it('selects --symbol through the documentSymbol outline, where impl T counts as T', async () => {
    const ws = crate();
    const sel = (l: number, a: number, b: number) => ({
      start: { line: l, character: a },
      end: { line: l, character: b },
    });
    const outline = [
      { name: 'process_data', kind: 12, range: sel(0, 0, 1), selectionRange: sel(0, 7, 19), children: [] },
      {
        name: 'impl Tool for Engine',
        kind: 19,
        range: sel(4, 0, 1),
        selectionRange: sel(4, 0, 4),
        children: [{ name: 'use_it', kind: 6, range: sel(4, 0, 1), selectionRange: sel(4, 7, 13) }],
      },
    ];
    const def = sel(4, 7, 13);
    withScript({
      ...READY,
      methods: {
        'textDocument/documentSymbol': { result: outline },
        'textDocument/definition': { result: [{ uri: '{root}/src/lib.rs', range: def }] },
        'textDocument/prepareRename': { result: def },
        'textDocument/rename': { result: { changes: { '{root}/src/lib.rs': [{ range: def, newText: 'run_it' }] } } },
      },
    });
    const r = await tug(ws, [
      'run',
      '--verify',
      'none',
      'rename-symbol',
      '--symbol',
      'src/lib.rs::Engine.use_it',
      '--to',
      'run_it',
    ]);
    expect(r.exitCode, r.stdout).toBe(0);
    expect(r.env.symbol).toMatchObject({
      name: 'use_it',
      qualified_name: 'Engine.use_it',
      container: 'Engine',
      selector: 'src/lib.rs::Engine.use_it',
    });
    const miss = await tug(ws, [
      'run',
      '--verify',
      'none',
      'rename-symbol',
      '--symbol',
      'src/lib.rs::Engine.nope',
      '--to',
      'run_it',
    ]);
    expect([miss.exitCode, miss.env.error.code, miss.env.error.details.reason]).toEqual([
      3,
      'SymbolNotFound',
      'no_match',
    ]);
  });

  it('retries a null prepareRename once, and refuses after a second null', async () => {
    const ws = crate();
    const ok = {
      ...RESOLVE,
      'textDocument/prepareRename': [{ result: null }, { result: DEF }],
      'textDocument/rename': { result: { changes: { '{root}/src/lib.rs': [{ range: DEF, newText: 'f2' }] } } },
    };
    withScript({ ...READY, methods: ok });
    expect((await tug(ws, rename('f2'))).exitCode).toBe(0);
    withScript({ ...READY, methods: { ...RESOLVE, 'textDocument/prepareRename': { result: null } } });
    const r = await tug(ws, rename('f2'));
    expect([r.exitCode, r.env.error.code, r.env.error.details.reason]).toEqual([3, 'NotRenameable', 'backend_refused']);
  });

  it('refuses resource operations with UnsupportedOperation', async () => {
    const ws = crate();
    withScript({
      ...READY,
      methods: {
        ...RESOLVE,
        'textDocument/rename': {
          result: { documentChanges: [{ kind: 'rename', oldUri: '{root}/src/a.rs', newUri: '{root}/src/b.rs' }] },
        },
      },
    });
    const r = await tug(ws, rename());
    expect([r.exitCode, r.env.error.code, r.env.error.details.reason]).toEqual([
      2,
      'UnsupportedOperation',
      'file_operation',
    ]);
  });

  it.each([
    ['Cannot rename a declaration produced by a proc-macro expansion', 'UnsupportedInProcMacro', 3],
    ['Cannot rename symbol defined in macro', 'UnsupportedInMacro', 3],
    ['No references found at position', 'SymbolNotFound', 3],
    ['Renaming aliases is currently unsupported', 'NotRenameable', 3],
  ])('maps the rename error %j to %s', async (message, code, exit) => {
    const ws = crate();
    withScript({ ...READY, methods: { ...RESOLVE, 'textDocument/rename': { error: { code: -32602, message } } } });
    const r = await tug(ws, rename());
    expect([r.exitCode, r.env.error.code]).toEqual([exit, code]);
    expect(r.env.error.details.location ?? r.env.error.location).toMatchObject({ file: 'src/lib.rs', line: 1, col: 8 });
  });

  it('maps a macro error of prepareRename like one of rename', async () => {
    const ws = crate();
    withScript({
      ...READY,
      methods: {
        ...RESOLVE,
        'textDocument/prepareRename': { error: { code: -32602, message: 'Cannot rename symbol defined in macro' } },
      },
    });
    const r = await tug(ws, rename());
    expect([r.exitCode, r.env.error.code]).toEqual([3, 'UnsupportedInMacro']);
    expect(r.env.error.details.suggestion).toMatch(/by hand/);
  });

  it('reports other request errors as BackendError', async () => {
    const ws = crate();
    withScript({
      ...READY,
      methods: { 'textDocument/definition': { error: { code: -32603, message: 'internal panic' } } },
    });
    const r = await tug(ws, rename());
    expect([r.exitCode, r.env.error.code]).toEqual([10, 'BackendError']);
    expect(r.env.error.details).toEqual({
      backend: 'rust-analyzer',
      request: 'textDocument/definition',
      lsp_code: -32603,
      message: 'internal panic',
    });
  });
});

describe('rust-analyzer failures', () => {
  it('gives IndexingTimeout when the server never becomes quiescent', async () => {
    const ws = crate();
    process.env.TUG_RA_INDEX_TIMEOUT_S = '1';
    withScript({ serverStatus: [{ health: 'ok', quiescent: false }], methods: RESOLVE });
    const r = await tug(ws, rename());
    expect([r.exitCode, r.env.error.code]).toEqual([10, 'IndexingTimeout']);
    expect(r.env.error.details).toEqual({ backend: 'rust-analyzer', timeout_seconds: 1 });
  });

  it('gives BackendCrashed with the status message when the server reports health error', async () => {
    const ws = crate();
    withScript({
      serverStatus: [{ health: 'error', quiescent: true, message: 'cargo metadata failed: no network' }],
      methods: RESOLVE,
    });
    const r = await tug(ws, rename());
    expect([r.exitCode, r.env.error.code]).toEqual([10, 'BackendCrashed']);
    expect(r.env.error.details.stderr_tail).toBe('cargo metadata failed: no network');
  });

  it('gives BackendCrashed when the server dies during the rename', async () => {
    const ws = crate();
    withScript({
      ...READY,
      stderr: 'thread main panicked',
      methods: { ...RESOLVE, 'textDocument/rename': { exit: 101 } },
    });
    const r = await tug(ws, rename());
    expect([r.exitCode, r.env.error.code]).toEqual([10, 'BackendCrashed']);
    expect(r.env.error.details).toMatchObject({ backend: 'rust-analyzer', exit_code: 101, signal: null });
    expect(r.env.error.details.stderr_tail).toContain('thread main panicked');
  });

  it('gives BackendTimeout when a request hangs', async () => {
    const ws = crate();
    process.env.TUG_LSP_TIMEOUT_S = '1';
    withScript({ ...READY, methods: { ...RESOLVE, 'textDocument/rename': { hang: true } } });
    const r = await tug(ws, rename());
    expect([r.exitCode, r.env.error.code]).toEqual([10, 'BackendTimeout']);
    expect(r.env.error.details).toEqual({
      backend: 'rust-analyzer',
      request: 'textDocument/rename',
      timeout_seconds: 1,
    });
  });
});
