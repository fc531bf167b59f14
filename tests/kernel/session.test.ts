/**
 * Sessions (docs/kernel.md §12): toolchains.json and backend pid files in `session status`, orphan cleanup,
 * `--log-level` logs, and SIGINT/SIGTERM (release the lock, remove the sandbox, stop verifiers, 130/143).
 */
import { describe, it, expect } from 'vitest';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openKernel } from '../../src/kernel/index.js';
import { runKernelCli } from '../../src/kernel/cli/tug.js';
import { readTree, tempWs, TSCONFIG } from './helpers.js';
import { alive } from '../helpers/proc.js';
import { tempDir } from '../helpers/repo.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const FILES = {
  'tsconfig.json': TSCONFIG,
  'src/a.ts': 'export function alpha(): number {\n  return 1;\n}\n',
  'src/b.ts': "import { alpha } from './a';\nexport const v = alpha();\n",
};
const cli = (argv: string[], cwd: string) => runKernelCli(argv, { prog: 'tug', env: {}, cwd });
const status = async (ws: string) => JSON.parse((await cli(['session', 'status'], ws)).stdout);

/** Wait for a condition driven by another process (bounded; no timed assertion). */
async function until<T>(f: () => T | null | undefined | false, what: string): Promise<T> {
  for (let i = 0; i < 1500; i++) {
    const v = f();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`gave up waiting for ${what}`);
}

describe('session files', () => {
  it('reports the sticky TypeScript toolchain and the live backend pid in session status', async () => {
    const ws = realpathSync(tempWs(FILES));
    const fresh = await status(ws);
    expect([fresh.session.exists, fresh.toolchains.typescript, fresh.backends]).toEqual([false, null, []]);
    const k = await openKernel({ workspace: ws, env: {}, holdLock: true });
    try {
      await k.analyzeImpact({ op: 'rename-symbol', symbol: 'src/a.ts::alpha', to: 'first' });
      const during = await status(ws);
      expect(during.toolchains.typescript).toEqual({ version: (await import('typescript')).default.version });
      expect(during.backends).toEqual([{ name: 'typescript', pid: process.pid, alive: true }]);
      expect(during.lock).toMatchObject({ held: true, holder_pid: process.pid });
    } finally {
      await k.close();
    }
    const after = await status(ws);
    expect([after.backends, after.lock.held, after.toolchains.typescript?.version]).toEqual([
      [],
      false,
      (await import('typescript')).default.version,
    ]);
    expect(JSON.parse(readFileSync(join(ws, '.tug', 'toolchains.json'), 'utf8'))).toHaveProperty('typescript');
  });

  it('stops a live orphaned backend and drops stale pid files when a session opens or is cleaned', async () => {
    const ws = realpathSync(tempWs(FILES));
    mkdirSync(join(ws, '.tug', 'backends'), { recursive: true });
    const orphan = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    const exited = new Promise<string | null>((r) => orphan.on('exit', (_c, sig) => r(sig)));
    writeFileSync(join(ws, '.tug', 'backends', 'pyright.pid'), `${orphan.pid}\n`);
    const s0 = await status(ws);
    expect(s0.backends).toEqual([{ name: 'pyright', pid: orphan.pid, alive: true }]);
    const k = await openKernel({ workspace: ws, env: {} });
    await k.close();
    expect(await exited).toBe('SIGTERM');
    expect(existsSync(join(ws, '.tug', 'backends', 'pyright.pid'))).toBe(false);
    // A dead pid is stale: session clean removes it and says so.
    writeFileSync(join(ws, '.tug', 'backends', 'rust-analyzer.pid'), `${orphan.pid}\n`);
    expect((await status(ws)).backends).toEqual([{ name: 'rust-analyzer', pid: orphan.pid, alive: false }]);
    const c = JSON.parse((await cli(['session', 'clean'], ws)).stdout);
    expect(c.removed).toContain('backends/rust-analyzer.pid');
  });

  it('logs to logs/kernel.log and stderr at --log-level info, and nowhere at the default level', async () => {
    const ws = realpathSync(tempWs(FILES));
    const quiet = await cli(
      ['run', '--verify', 'none', 'rename-symbol', '--symbol', 'src/a.ts::alpha', '--to', 'first'],
      ws,
    );
    expect([quiet.exitCode, quiet.stderr, existsSync(join(ws, '.tug', 'logs'))]).toEqual([0, '', false]);
    const loud = await cli(
      [
        '--log-level',
        'info',
        'run',
        '--verify',
        'syntax',
        'rename-symbol',
        '--symbol',
        'src/a.ts::alpha',
        '--to',
        'first',
      ],
      ws,
    );
    expect(loud.exitCode).toBe(0);
    expect(JSON.parse(loud.stdout).status).toBe('ok');
    const log = readFileSync(join(ws, '.tug', 'logs', 'kernel.log'), 'utf8');
    for (const what of [
      'session open',
      'kernel open',
      'snapshot',
      'typescript backend open',
      'prepare rename-symbol',
      'verify syntax',
      'kernel close',
    ]) {
      expect(log, what).toContain(` info [${process.pid}] ${what}`);
    }
    expect(
      loud.stderr
        .split('\n')
        .filter(Boolean)
        .every((l) => l.startsWith('tug: info: ')),
    ).toBe(true);
    expect(loud.stderr).toContain('tug: info: verify syntax');
    const dbg = await cli(['--log-level', 'warn', 'snapshot'], ws);
    expect(dbg.stderr).toBe('');
    // The binaries pass a live writer: lines reach stderr while the command runs, not at its end.
    let done = false;
    const live: [string, boolean][] = [];
    const streamed = await runKernelCli(['--log-level', 'info', 'snapshot'], {
      prog: 'tug',
      env: {},
      cwd: ws,
      writeLog: (line) => live.push([line, done]),
    }).finally(() => (done = true));
    expect(streamed.stderr).toBe('');
    expect(live.length).toBeGreaterThan(0);
    expect(live.every(([line, after]) => line.startsWith('tug: info: ') && !after)).toBe(true);
  });
});

describe('lock loss', () => {
  it('refuses to prepare or apply once the lock is reported compromised, writing nothing', async () => {
    const ws = realpathSync(tempWs(FILES));
    const before = readTree(ws);
    const k = await openKernel({ workspace: ws, env: {}, holdLock: true });
    try {
      const p = await k.prepare({ op: 'rename-symbol', symbol: 'src/a.ts::alpha', to: 'first' });
      // What proper-lockfile's onCompromised does when another process took the lock over.
      (k as unknown as { session: { compromised: boolean } }).session.compromised = true;
      for (const call of [
        () => k.apply(p),
        () => k.prepare({ op: 'rename-symbol', symbol: 'src/a.ts::alpha', to: 'first' }),
      ]) {
        const e = await call().catch((x) => x);
        expect([e.code, e.details.message]).toEqual(['InternalError', 'session lock compromised']);
      }
      expect(readTree(ws)).toEqual(before);
    } finally {
      await k.close();
    }
  });
});

describe('signals', () => {
  // Real child processes of the built CLI (npx tsc -p tsconfig.build.json first).
  for (const [sig, code] of [
    ['SIGTERM', 143],
    ['SIGINT', 130],
  ] as const) {
    it(`on ${sig} stops the verifier, removes the sandbox, releases the lock and exits ${code}`, async () => {
      const ws = realpathSync(tempWs(FILES));
      const before = readTree(ws);
      const marker = join(tempDir('tugcode-marker-'), 'marker.json'); // outside the workspace it checks
      const script = `require('fs').writeFileSync(${JSON.stringify(marker)}, JSON.stringify({pid: process.pid, cwd: process.cwd()})); setInterval(() => {}, 1000);`;
      const child = spawn(
        process.execPath,
        [
          join(ROOT, 'bin', 'tug.js'),
          'run',
          '--apply',
          '--verify',
          'tests',
          '--test-command',
          JSON.stringify(['node', '-e', script]),
          'rename-symbol',
          '--symbol',
          'src/a.ts::alpha',
          '--to',
          'first',
        ],
        { cwd: ws, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      const exit = new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
      const m = await until(() => existsSync(marker) && readFileSync(marker, 'utf8'), 'the test command to start');
      const { pid, cwd } = JSON.parse(m);
      expect(existsSync(join(ws, '.tug', 'lock.lock'))).toBe(true);
      child.kill(sig);
      expect(await exit).toBe(code);
      expect(existsSync(join(ws, '.tug', 'lock.lock'))).toBe(false);
      expect(existsSync(join(ws, '.tug', 'lock.json'))).toBe(false);
      expect(existsSync(cwd)).toBe(false);
      await until(() => !alive(pid), 'the test command to die');
      expect(readTree(ws)).toEqual(before);
      // The session is usable at once.
      expect((await cli(['snapshot', '--no-wait'], ws)).exitCode).toBe(0);
    });
  }
});
