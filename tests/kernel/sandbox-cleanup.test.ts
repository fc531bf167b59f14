/**
 * A full verification sandbox never outlives its call (docs/kernel.md §11.1): a copy that fails midway is
 * removed and reported as VerificationUnavailable, and a FIFO in the workspace is left out instead of
 * blocking the copy. The CLI runs as a child process with a private TMPDIR, where a leftover `tug-sbx-*` shows.
 */
import { describe, it, expect } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readdirSync, realpathSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { kernelEnv, privateTmp, tempWs, tugChild } from './helpers.js';

const tug = (args: string[], cwd: string, tmp: string) => tugChild(args, cwd, kernelEnv({ TMPDIR: tmp }));
const sandboxes = (tmp: string) => readdirSync(tmp).filter((n) => n.startsWith('tug-sbx-'));

describe('the full sandbox (docs/kernel.md §11.1)', () => {
  it('removes a sandbox whose copy fails midway (a path too long for the temp directory)', async () => {
    // Root reads any file, so this failure does not depend on permissions: the workspace path fits PATH_MAX,
    // its copy under a long TMPDIR does not.
    const seg = 'd'.repeat(200);
    const deep = Array.from({ length: 19 }, () => seg).join('/');
    const ws = realpathSync(tempWs({ 'src/a.ts': 'export const a = 1;\n', [`${deep}/z.txt`]: 'z\n' }));
    const tmp = join(privateTmp(), 't'.repeat(250), 't'.repeat(250));
    mkdirSync(tmp, { recursive: true });
    const r = await tug(['verify', 'syntax'], ws, tmp);
    expect(r.code, r.stdout + r.stderr).toBe(5);
    expect(r.json.error.code).toBe('VerificationUnavailable');
    expect(r.json.error.details.path).toBe(`${deep}/z.txt`);
    expect(r.json.verification).toMatchObject({ status: 'failed', sandbox: 'full', checks: [] });
    expect(sandboxes(tmp)).toEqual([]);
  });

  it.skipIf(process.getuid?.() === 0)('removes a sandbox whose copy meets an unreadable file', async () => {
    const ws = realpathSync(tempWs({ 'src/a.ts': 'export const a = 1;\n', 'secret.txt': 'x\n' }));
    chmodSync(join(ws, 'secret.txt'), 0);
    const tmp = privateTmp();
    try {
      const r = await tug(['verify', 'syntax'], ws, tmp);
      expect(r.code, r.stdout + r.stderr).toBe(5);
      expect(r.json.error.code).toBe('VerificationUnavailable');
      expect(r.json.error.details.path).toBe('secret.txt');
      expect(sandboxes(tmp)).toEqual([]);
    } finally {
      chmodSync(join(ws, 'secret.txt'), 0o644);
    }
  });

  it.skipIf(process.platform === 'win32')('leaves a FIFO out instead of blocking on it', async () => {
    const ws = realpathSync(tempWs({ 'src/a.ts': 'export const a = 1;\n' }));
    // A FIFO with a source extension: the snapshot would read it too.
    expect(spawnSync('mkfifo', [join(ws, 'pipe.ts')]).status).toBe(0);
    writeFileSync(join(ws, 'b.ts'), 'export const b = 2;\n');
    const tmp = privateTmp();
    const r = await tug(['verify', 'syntax'], ws, tmp);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.json.passed).toBe(true);
    expect(sandboxes(tmp)).toEqual([]);
  });

  it('removes a sandbox when the call is interrupted (SIGTERM) while it is built or used', async () => {
    const files: Record<string, string> = { 'src/a.ts': 'export const a = 1;\n' };
    const blob = 'x'.repeat(4096);
    for (let i = 0; i < 4000; i++) files[`data/d${i % 40}/f${i}.txt`] = blob;
    const ws = realpathSync(tempWs(files));
    const tmp = privateTmp();
    const bin = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'tug.js');
    const child = spawn(process.execPath, [bin, 'verify', 'syntax'], {
      cwd: ws,
      env: kernelEnv({ TMPDIR: tmp }),
      stdio: 'ignore',
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    let done = false;
    void exited.then(() => (done = true));
    // Poll for the sandbox (no sleep-for-a-state): signal as soon as it exists.
    while (!done && sandboxes(tmp).length === 0) await new Promise((r) => setTimeout(r, 2));
    expect(done, 'the call ended before its sandbox was seen').toBe(false);
    child.kill('SIGTERM');
    expect(await exited).toBe(143);
    expect(sandboxes(tmp)).toEqual([]);
  }, 60_000);
});
