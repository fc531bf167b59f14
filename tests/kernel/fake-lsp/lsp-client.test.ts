/**
 * The LSP client's error mapping (docs/kernel.md §6.3 "Timeouts"), against the scripted fake server: a
 * request past its deadline is BackendTimeout, a server that dies is BackendCrashed with its stderr tail,
 * an error response is BackendError, and server→client requests are answered (unknown ones with
 * MethodNotFound).
 */
import { describe, it, expect, afterEach } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { LspClient } from '../../../src/kernel/backends/lsp/client.js';
import { failure } from '../helpers.js';
import { FAKE_SERVER, withScript } from './script.js';

const clients: LspClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.kill();
  delete process.env.FAKE_LSP_SCRIPT;
});

function start(
  script: object,
  o: { requestTimeoutMs?: number; onRequest?: (m: string, p: unknown) => unknown } = {},
): LspClient {
  withScript(script);
  const c = new LspClient({
    backend: 'fake',
    argv: [process.execPath, FAKE_SERVER],
    cwd: tmpdir(),
    // The fake server reads its script from FAKE_LSP_SCRIPT: the client passes only the env it is given.
    env: process.env,
    initializeTimeoutMs: 5000,
    requestTimeoutMs: o.requestTimeoutMs ?? 5000,
    onRequest: o.onRequest,
  });
  clients.push(c);
  return c;
}

describe('LspClient', () => {
  it('answers initialize and passes server-to-client requests to the handler', async () => {
    const c = start(
      {
        askClient: { method: 'workspace/configuration', params: { items: [{ section: 'python' }] } },
        methods: { 'test/echo': { result: '{clientAnswer}' } },
      },
      { onRequest: (m) => (m === 'workspace/configuration' ? [{ pythonPath: '/py' }] : undefined) },
    );
    await c.request('initialize', { rootUri: 'file:///x', capabilities: {} });
    expect(await c.request('test/echo', {})).toBe(JSON.stringify([{ pythonPath: '/py' }]));
  });

  it('answers unknown server-to-client requests with MethodNotFound', async () => {
    const c = start({
      askClient: { method: 'custom/unknown', params: {} },
      methods: { 'test/echo': { result: '{clientAnswer}' } },
    });
    await c.request('initialize', { rootUri: 'file:///x', capabilities: {} });
    expect(JSON.parse(await c.request<string>('test/echo', {}))).toEqual({ error: -32601 });
  });

  it('turns a request past its deadline into BackendTimeout', async () => {
    const c = start({ methods: { 'textDocument/rename': { hang: true } } }, { requestTimeoutMs: 300 });
    await c.request('initialize', { capabilities: {} });
    const e = await failure(c.request('textDocument/rename', {}));
    expect(e.code).toBe('BackendTimeout');
    expect(e.details).toEqual({ backend: 'fake', request: 'textDocument/rename', timeout_seconds: 0.3 });
    expect(e.exitCode).toBe(10);
  });

  it('turns a server that exits mid-request into BackendCrashed with its stderr tail', async () => {
    const c = start({ stderr: 'panicked at src/main.rs', methods: { 'textDocument/rename': { exit: 3 } } });
    await c.request('initialize', { capabilities: {} });
    const e = await failure(c.request('textDocument/rename', {}));
    expect(e.code).toBe('BackendCrashed');
    expect(e.details).toMatchObject({ backend: 'fake', exit_code: 3, signal: null });
    expect(e.details.stderr_tail).toContain('panicked at src/main.rs');
    expect(c.alive).toBe(false);
    // Later requests fail the same way at once.
    expect((await failure(c.request('textDocument/definition', {}))).code).toBe('BackendCrashed');
  });

  it('turns a server that never starts into BackendUnavailable', async () => {
    const c = new LspClient({ backend: 'fake', argv: [join(tmpdir(), 'no-such-server-binary')], cwd: tmpdir() });
    clients.push(c);
    const e = await failure(c.request('initialize', {}));
    expect(e.code).toBe('BackendUnavailable');
    expect(e.details.probe_error).toBe('ENOENT');
  });

  it('turns an error response into BackendError with the LSP code', async () => {
    const c = start({ methods: { 'textDocument/definition': { error: { code: -32603, message: 'boom' } } } });
    await c.request('initialize', { capabilities: {} });
    const e = await failure(c.request('textDocument/definition', {}));
    expect(e.code).toBe('BackendError');
    expect(e.details).toEqual({
      backend: 'fake',
      request: 'textDocument/definition',
      lsp_code: -32603,
      message: 'boom',
    });
  });

  it('shuts a server down with shutdown and exit, and kills one that ignores them', async () => {
    const polite = start({});
    await polite.request('initialize', { capabilities: {} });
    await polite.close();
    expect(polite.alive).toBe(false);
    const stubborn = start({ methods: { shutdown: { hang: true } } });
    await stubborn.request('initialize', { capabilities: {} });
    writeFileSync(join(tmpdir(), 'unused'), '');
    await stubborn.close();
    expect(stubborn.alive).toBe(false);
  });
});
