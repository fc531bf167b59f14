/**
 * The bounds of a workspace (docs/kernel.md §10.1, §11.1): `max_workspace_files` and `max_sandbox_mb` refuse
 * a workspace too large to list or copy with WorkspaceTooLarge (exit 2) before anything is written: no
 * session directory, no sandbox. The CLI cases run the built `bin/tug.js` as a child process with a private
 * TMPDIR (`npm test` builds first).
 */
import { describe, it, expect } from 'vitest';
import { existsSync, readdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { loadKernelConfig } from '../../src/kernel/config.js';
import { openKernel } from '../../src/kernel/index.js';
import { failure, gitInit, kernelEnv, privateTmp, tempWs, tugChild } from './helpers.js';

const tug = (args: string[], cwd: string, tmp: string) => tugChild(args, cwd, kernelEnv({ TMPDIR: tmp }));

/** `n` TypeScript files under src/, and a config table. */
function manyFiles(n: number, kernel: string): Record<string, string> {
  const files: Record<string, string> = { '.tugtool/config.toml': `[kernel]\n${kernel}\n` };
  for (let i = 0; i < n; i++) files[`src/f${String(i).padStart(2, '0')}.ts`] = `export const v${i} = ${i};\n`;
  return files;
}

const sandboxes = (tmp: string) => readdirSync(tmp).filter((n) => n.startsWith('tug-sbx-'));

describe('max_workspace_files (docs/kernel.md §10.1)', () => {
  it('is a positive integer key of the [kernel] table, 100000 by default', async () => {
    expect((await loadKernelConfig(tempWs())).settings.max_workspace_files).toBe(100_000);
    expect((await loadKernelConfig(tempWs())).settings.max_sandbox_mb).toBe(2048);
    const bad = await failure(
      loadKernelConfig(tempWs({ '.tugtool/config.toml': '[kernel]\nmax_workspace_files = 0\n' })),
    );
    expect([bad.code, bad.details.key]).toEqual(['ConfigInvalid', 'kernel.max_workspace_files']);
  });

  it('refuses a workspace over the limit outside git: one JSON document, exit 2, no session, no sandbox', async () => {
    const ws = realpathSync(tempWs(manyFiles(30, 'max_workspace_files = 20')));
    const tmp = privateTmp();
    for (const argv of [
      ['snapshot'],
      ['verify', 'syntax'],
      ['run', 'rename-symbol', '--symbol', 'src/f00.ts::v0', '--to', 'w'],
    ]) {
      const r = await tug(argv, ws, tmp);
      expect(r.code, r.stdout + r.stderr).toBe(2);
      expect(r.stdout.trim().split('\n')).toHaveLength(1);
      expect(r.json.status).toBe('error');
      expect(r.json.error.code).toBe('WorkspaceTooLarge');
      // The walk stops at the first file over the bound: the count is a lower bound.
      expect(r.json.error.details).toMatchObject({
        path: ws,
        key: 'max_workspace_files',
        limit: 20,
        files: 21,
        at_least: true,
      });
      expect(r.json.error.details.hint).toMatch(/--workspace.*--exclude.*max_workspace_files/);
      expect(r.json.error.message).toContain('more than 20 files');
      expect(existsSync(join(ws, '.tug'))).toBe(false);
      expect(sandboxes(tmp)).toEqual([]);
    }
  });

  it('counts git’s listing exactly, and --exclude narrows the workspace under the limit', async () => {
    const ws = realpathSync(tempWs(manyFiles(30, 'max_workspace_files = 20')));
    gitInit(ws);
    const tmp = privateTmp();
    const r = await tug(['snapshot'], ws, tmp);
    expect(r.code, r.stdout + r.stderr).toBe(2);
    // 30 sources and the config file.
    expect(r.json.error.details).toMatchObject({ key: 'max_workspace_files', limit: 20, files: 31, at_least: false });
    expect(existsSync(join(ws, '.tug'))).toBe(false);
    const ok = await tug(['snapshot', '--exclude', 'src/f1*', '--exclude', 'src/f2*'], ws, tmp);
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
    expect(ok.json.file_count).toBe(10);
  });

  it('refuses through the library before the session directory exists', async () => {
    const ws = realpathSync(tempWs(manyFiles(5, 'max_workspace_files = 3')));
    const e = await failure(openKernel({ workspace: ws, env: kernelEnv() }));
    expect(e.code).toBe('WorkspaceTooLarge');
    expect(e.exitCode).toBe(2);
    expect(existsSync(join(ws, '.tug'))).toBe(false);
  });
});

describe('the full sandbox (docs/kernel.md §11.1)', () => {
  it('refuses a workspace over max_sandbox_mb before copying anything', async () => {
    const ws = realpathSync(
      tempWs({
        '.tugtool/config.toml': '[kernel]\nmax_sandbox_mb = 1\n',
        'src/a.ts': 'export const a = 1;\n',
        'data.bin': new Uint8Array(1024 * 1024 + 1),
      }),
    );
    const tmp = privateTmp();
    const r = await tug(['verify', 'syntax'], ws, tmp);
    expect(r.code, r.stdout + r.stderr).toBe(2);
    expect(r.json.error.code).toBe('WorkspaceTooLarge');
    expect(r.json.error.details).toMatchObject({ path: ws, key: 'max_sandbox_mb', limit: 1, at_least: true });
    expect(r.json.error.details.bytes).toBeGreaterThan(1024 * 1024);
    expect(r.json.error.details.hint).toMatch(/max_sandbox_mb/);
    expect(sandboxes(tmp)).toEqual([]);
    expect(existsSync(join(ws, '.tug'))).toBe(false);
  });
});
