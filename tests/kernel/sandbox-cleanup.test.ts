/**
 * A full verification sandbox never outlives its call (docs/kernel.md §11.1): a copy that fails midway is
 * removed and reported as VerificationUnavailable, and a FIFO in the workspace is left out instead of
 * blocking the copy. The CLI runs as a child process with a private TMPDIR, where a leftover `tug-sbx-*` shows.
 */
import { describe, it, expect } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
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

  it.skipIf(!existsSync('/proc/self/ns/pid'))(
    'a later call removes the sandbox of a SIGKILLed call, never a kept one or one whose owner it cannot prove gone',
    async () => {
      const ws = realpathSync(tempWs({ 'src/a.ts': 'export const a = 1;\n' }));
      const tmp = privateTmp();
      const bin = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'tug.js');
      // The test command marks that it runs (so the sandbox exists), then ends itself once tug is gone.
      const cmd = `require('fs').writeFileSync('ready', ''); const p = process.ppid;
        setInterval(() => { try { process.kill(p, 0); } catch { process.exit(0); } }, 20);`;
      const child = spawn(
        process.execPath,
        [bin, 'verify', 'tests', '--test-command', JSON.stringify([process.execPath, '-e', cmd])],
        { cwd: ws, env: kernelEnv({ TMPDIR: tmp }), stdio: 'ignore' },
      );
      const exited = new Promise<string | null>((resolve) => child.on('exit', (_c, sig) => resolve(sig)));
      let done = false;
      void exited.then(() => (done = true));
      const ready = () => sandboxes(tmp).some((n) => existsSync(join(tmp, n, 'ws', 'ready')));
      while (!done && !ready()) await new Promise((r) => setTimeout(r, 5));
      expect(done, 'the call ended before its test command ran').toBe(false);
      child.kill('SIGKILL');
      expect(await exited).toBe('SIGKILL');
      const [killed] = sandboxes(tmp);
      expect(killed).toMatch(new RegExp(`^tug-sbx-o[0-9a-f]{32}-\\d+-${child.pid}-\\d+-`));

      // Owners it cannot prove gone: another boot, another pid namespace (a container sharing /tmp), no owner.
      const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim().replace(/-/g, '');
      const ns = /\d+/.exec(readlinkSync('/proc/self/ns/pid'))![0];
      const unprovable = [
        `tug-sbx-o${'0'.repeat(32)}-${ns}-${child.pid}-1-aaaaaa`,
        `tug-sbx-o${boot}-1-${child.pid}-1-bbbbbb`,
        'tug-sbx-cccccc',
      ];
      for (const n of unprovable) mkdirSync(join(tmp, n, 'ws'), { recursive: true });
      // A symlink named like a dead call's sandbox: never followed, its target untouched.
      const outside = tempWs({ 'keep.txt': 'x\n' });
      const link = `tug-sbx-o${boot}-${ns}-${child.pid}-1-dddddd`;
      symlinkSync(outside, join(tmp, link));

      // A failing check with --keep-sandbox: its call ends, its sandbox stays, and it sweeps the killed one.
      // Another workspace: the killed call's session lock would hold this one up until it goes stale.
      const ws2 = realpathSync(tempWs({ 'src/b.ts': 'export const = ;\n' }));
      const kept = await tug(['verify', 'syntax', '--keep-sandbox'], ws2, tmp);
      expect(kept.code, kept.stdout + kept.stderr).toBe(5);
      const keptPath: string = kept.json.error.details.sandbox_path;
      expect(existsSync(keptPath)).toBe(true);
      expect(sandboxes(tmp)).not.toContain(killed);

      const again = await tug(['snapshot'], ws2, tmp);
      expect(again.code, again.stdout + again.stderr).toBe(0);
      expect(sandboxes(tmp).sort()).toEqual([...unprovable, link, keptPath.split('/').at(-2)!].sort());
      expect(readFileSync(join(outside, 'keep.txt'), 'utf8')).toBe('x\n');
    },
    60_000,
  );
});
