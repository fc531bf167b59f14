/**
 * Interpreter resolution (docs/kernel.md §6.3, the seed plan's [D10]): the candidate order, the first candidate that
 * answers wins, the choice is sticky in toolchains.json, an explicit value replaces it, and a vanished
 * recorded path is resolved again with ToolchainChanged.
 */
import { describe, it, expect, beforeEach } from 'vitest';
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { candidates, clearPythonMemo, resolvePython } from '../../../src/kernel/backends/python/interpreter.js';
import type { KernelWarning } from '../../../src/kernel/envelope.js';
import { tempWs } from '../helpers.js';

/** An executable that answers the version probe like a Python would. */
function fakePython(path: string, version: string): string {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, `#!/bin/sh\necho ${version}\n`);
  chmodSync(path, 0o755);
  return path;
}

beforeEach(() => clearPythonMemo());

describe('python interpreter resolution', () => {
  it('lists candidates in the order flag, config, VIRTUAL_ENV, CONDA_PREFIX, workspace .venv, PATH', () => {
    const ws = tempWs({});
    const bin = tempWs({});
    fakePython(join(bin, 'python3'), '3.12.0');
    fakePython(join(bin, 'python'), '3.12.0');
    const c = candidates({
      workspace: ws,
      explicit: '/opt/py',
      config: 'tools/py',
      env: { VIRTUAL_ENV: '/venv', CONDA_PREFIX: '/conda', PATH: bin },
    });
    expect(c).toEqual([
      { path: '/opt/py', source: 'flag' },
      { path: join(ws, 'tools/py'), source: 'config' },
      { path: '/venv/bin/python', source: 'virtual_env' },
      { path: '/conda/bin/python', source: 'conda' },
      { path: join(ws, '.venv/bin/python'), source: 'workspace_venv' },
      { path: join(bin, 'python3'), source: 'path' },
      { path: join(bin, 'python'), source: 'path' },
    ]);
  });

  it('takes the first candidate that answers and skips the ones that do not', async () => {
    const ws = tempWs({});
    const venv = tempWs({});
    fakePython(join(venv, 'bin', 'python'), '3.10.1');
    const p = await resolvePython({
      workspace: ws,
      explicit: join(ws, 'missing-python'),
      env: { VIRTUAL_ENV: venv, PATH: '' },
    });
    expect(p).toEqual({ path: join(venv, 'bin', 'python'), version: '3.10.1', source: 'virtual_env' });
    clearPythonMemo();
    fakePython(join(ws, '.venv', 'bin', 'python'), '3.13.0');
    expect((await resolvePython({ workspace: ws, env: { PATH: '' } }))?.source).toBe('workspace_venv');
  });

  it('returns null when nothing answers (renames still work; checks report unavailable)', async () => {
    expect(await resolvePython({ workspace: tempWs({}), env: { PATH: '' } })).toBeNull();
  });

  it('keeps the first resolution in toolchains.json and re-resolves a vanished one with ToolchainChanged', async () => {
    const ws = tempWs({});
    const session = join(ws, '.tug');
    mkdirSync(session);
    const a = tempWs({});
    const b = tempWs({});
    fakePython(join(a, 'bin', 'python'), '3.11.0');
    fakePython(join(b, 'bin', 'python'), '3.12.0');
    expect((await resolvePython({ workspace: ws, sessionDir: session, env: { VIRTUAL_ENV: a, PATH: '' } }))?.path).toBe(
      join(a, 'bin', 'python'),
    );
    expect(JSON.parse(readFileSync(join(session, 'toolchains.json'), 'utf8')).python).toEqual({
      interpreter: join(a, 'bin', 'python'),
      version: '3.11.0',
      source: 'virtual_env',
    });
    clearPythonMemo();
    // Sticky: another activated venv does not change the session's interpreter...
    expect((await resolvePython({ workspace: ws, sessionDir: session, env: { VIRTUAL_ENV: b, PATH: '' } }))?.path).toBe(
      join(a, 'bin', 'python'),
    );
    clearPythonMemo();
    // ...an explicit one does, and is recorded.
    expect(
      (
        await resolvePython({
          workspace: ws,
          sessionDir: session,
          explicit: join(b, 'bin', 'python'),
          env: { PATH: '' },
        })
      )?.source,
    ).toBe('flag');
    expect(JSON.parse(readFileSync(join(session, 'toolchains.json'), 'utf8')).python.interpreter).toBe(
      join(b, 'bin', 'python'),
    );
    clearPythonMemo();
    rmSync(b, { recursive: true, force: true });
    const warnings: KernelWarning[] = [];
    expect(
      (await resolvePython({ workspace: ws, sessionDir: session, env: { VIRTUAL_ENV: a, PATH: '' } }, warnings))?.path,
    ).toBe(join(a, 'bin', 'python'));
    expect(warnings.map((w) => w.code)).toEqual(['ToolchainChanged']);
  });
});
