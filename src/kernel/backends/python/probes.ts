/**
 * `doctor` probes for the Python backend (docs/kernel.md §4.5), each by actually running the tool:
 * `pyright-langserver` starts the language server as the kernel does (pyright.ts), initializes and shuts it
 * down; `pyright-typeshed` runs the pyright CLI on `x: int = len([1])\nprint(x)`, which reports 0 errors
 * only when the bundled typeshed is found (a wrong launch path silently loses it).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

export interface ProbeResult {
  ok: boolean;
  message: string;
}

export async function probePyrightLangserver(
  env: Record<string, string | undefined>,
): Promise<ProbeResult & { version: string | null }> {
  const { pyrightServerArgv, pyrightVersion } = await import('./pyright.js');
  const { LspClient } = await import('../lsp/client.js');
  const { clientCapabilities, Method } = await import('../lsp/protocol.js');
  const dir = mkdtempSync(join(tmpdir(), 'tug-doctor-'));
  const version = pyrightVersion();
  const client = new LspClient({
    backend: 'pyright',
    argv: pyrightServerArgv(),
    cwd: dir,
    env: env as NodeJS.ProcessEnv,
    initializeTimeoutMs: 30_000,
    onRequest: () => null,
  });
  try {
    const uri = pathToFileURL(dir).href;
    const init = await client.request<{ serverInfo?: { version?: string } }>(Method.initialize, {
      processId: process.pid,
      rootUri: uri,
      workspaceFolders: [{ uri, name: 'doctor' }],
      capabilities: clientCapabilities(),
    });
    client.notify(Method.initialized, {});
    return {
      ok: true,
      message: `pyright ${init?.serverInfo?.version ?? version ?? '?'} language server initialized`,
      version,
    };
  } catch (e) {
    return { ok: false, message: (e as Error).message, version };
  } finally {
    await client.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function probePyrightTypeshed(
  python: string | null,
  env: Record<string, string | undefined>,
): Promise<ProbeResult> {
  const { pyrightCli } = await import('../../verify/python.js');
  const dir = mkdtempSync(join(tmpdir(), 'tug-doctor-'));
  try {
    writeFileSync(join(dir, 'probe.py'), 'x: int = len([1])\nprint(x)\n');
    const r = await pyrightCli(dir, python, 60_000, env);
    if (r.unavailable) return { ok: false, message: r.unavailable };
    if (r.diagnostics.length > 0)
      return {
        ok: false,
        message: `pyright reports ${r.diagnostics.length} error(s) on a clean file (typeshed missing?): ${r.diagnostics[0]!.message}`,
      };
    return { ok: true, message: 'pyright CLI resolves builtins from its bundled typeshed' };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
