/**
 * What every kernel operation guarantees: the §11.4 exception for a missing lower stage, refused commands
 * that write nothing, the lock taken per operation (a warm kernel never locks `tug` out), the clock and environment
 * injected by the front door, and verifier processes that never block the event loop and die as a group.
 * The CLI cases run the built `bin/tug.js` as a child process (`npm test` builds first).
 */
import { describe, it, expect } from 'vitest';
import { existsSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openKernel } from '../../src/kernel/index.js';
import { gitInit, kernelEnv, tempWs, TSCONFIG, tugChild } from './helpers.js';

const cleanEnv = (extra: Record<string, string> = {}) => kernelEnv(extra) as Record<string, string>;

/** Run the built `tug` asynchronously (the test's own event loop keeps running). */
const tug = (args: string[], cwd: string, env: Record<string, string> = cleanEnv()) => tugChild(args, cwd, env);

const FILES = {
  'tsconfig.json': TSCONFIG,
  'src/a.ts': 'export function alpha(): number {\n  return 1;\n}\n',
  'src/b.ts': "import { alpha } from './a';\nexport const v = alpha();\n",
};

describe('cumulative verification without a test command (docs/kernel.md §11.4)', () => {
  it('skips the tests stage under --verify typecheck with a warning, and applies', async () => {
    const ws = realpathSync(tempWs(FILES));
    const r = await tug(
      ['run', '--apply', '--verify', 'typecheck', 'rename-symbol', '--symbol', 'src/a.ts::alpha', '--to', 'first'],
      ws,
    );
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.json.applied).toBe(true);
    expect(r.json.verification.status).toBe('passed');
    expect(r.json.verification.checks.map((c: any) => [c.name, c.status])).toEqual([
      ['ts-syntax', 'passed'],
      ['tests', 'skipped'],
      ['tsc', 'passed'],
    ]);
    const w = r.json.warnings.find((x: any) => x.code === 'VerificationStageSkipped');
    expect(w.message).toMatch(/tests/);
    expect(w.message).toMatch(/--test-command/);
    expect(readFileSync(join(ws, 'src/b.ts'), 'utf8')).toContain('first');
  });

  it('still fails when the stage the user asked for has no command, or a lower stage fails', async () => {
    const ws = realpathSync(tempWs(FILES));
    const asked = await tug(
      ['run', '--verify', 'tests', 'rename-symbol', '--symbol', 'src/a.ts::alpha', '--to', 'first'],
      ws,
    );
    expect([asked.code, asked.json.error.code]).toEqual([5, 'VerificationUnavailable']);
    const failing = await tug(
      [
        'run',
        '--verify',
        'typecheck',
        '--test-command',
        '["node","-e","process.exit(2)"]',
        'rename-symbol',
        '--symbol',
        'src/a.ts::alpha',
        '--to',
        'first',
      ],
      ws,
    );
    expect([failing.code, failing.json.error.code]).toEqual([5, 'TestsFailed']);
  });
});

describe('refused commands write nothing', () => {
  it('leaves no .tug directory after refused renames, in a plain directory and in a git repository', async () => {
    for (const git of [false, true]) {
      const ws = realpathSync(tempWs(FILES));
      if (git) gitInit(ws);
      const cases: [string[], number, string][] = [
        [['run', 'rename-symbol', '--symbol', 'src/a.ts::alpha', '--to', 'class'], 2, 'InvalidArgument'],
        [['run', '--apply', 'rename-symbol', '--at', 'src/nope.ts:1:1', '--to', 'x'], 3, 'FileNotFound'],
        [['run', '--apply', 'rename-symbol', '--symbol', 'src/a.ts::nope', '--to', 'x'], 3, 'SymbolNotFound'],
        [['analyze-impact', 'rename-symbol', '--at', 'src/a.ts:99:1', '--to', 'x'], 3, 'InvalidPosition'],
        [['run', '--verify', 'tests', 'rename-symbol', '--symbol', 'src/a.ts::alpha', '--to', 'x'], 5, ''],
        [['frobnicate'], 2, 'InvalidArgument'],
      ];
      for (const [args, exit, code] of cases) {
        const r = await tug(args, ws);
        expect([r.code, code ? r.json.error.code : r.code], args.join(' ')).toEqual([exit, code || exit]);
        expect(existsSync(join(ws, '.tug')), `${git ? 'git' : 'plain'}: ${args.join(' ')}`).toBe(false);
      }
      // An accepted command creates the session as before.
      const ok = await tug(['analyze-impact', 'rename-symbol', '--symbol', 'src/a.ts::alpha', '--to', 'x'], ws);
      expect(ok.code).toBe(0);
      expect(existsSync(join(ws, '.tug', 'session.json'))).toBe(true);
    }
  });

  it('adds no snapshot to an existing session when a rename is refused', async () => {
    const ws = realpathSync(tempWs(FILES));
    expect((await tug(['snapshot'], ws)).code).toBe(0);
    const before = readdirSync(join(ws, '.tug', 'snapshots')).sort();
    writeFile(ws, 'src/c.ts', 'export const c = 1;\n');
    const r = await tug(['run', 'rename-symbol', '--symbol', 'src/a.ts::nope', '--to', 'x'], ws);
    expect(r.json.error.code).toBe('SymbolNotFound');
    expect(readdirSync(join(ws, '.tug', 'snapshots')).sort()).toEqual(before);
  });
});

function writeFile(ws: string, rel: string, text: string): void {
  writeFileSync(join(ws, rel), text);
}

describe('a warm kernel takes the lock per operation', () => {
  it('lets a `tug` call in between its operations, then sees that call’s edits', async () => {
    const ws = realpathSync(tempWs(FILES));
    const k = await openKernel({ workspace: ws, env: cleanEnv() });
    try {
      const first = await k.run(
        { op: 'rename-symbol', symbol: 'src/a.ts::alpha', to: 'first' },
        { apply: true, verify: 'syntax' },
      );
      expect(first.applied).toBe(true);
      const pidFile = join(ws, '.tug', 'backends', 'typescript.pid');
      expect(existsSync(pidFile)).toBe(true);
      // The kernel is still open and warm: a concurrent CLI call gets the lock at once.
      const r = await tug(
        ['run', '--apply', '--no-wait', 'rename-symbol', '--symbol', 'src/a.ts::first', '--to', 'second'],
        ws,
      );
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(r.json.applied).toBe(true);
      // It did not take this live process's backend for an orphan.
      expect(readFileSync(pidFile, 'utf8').split('\n')[0]).toBe(String(process.pid));
      const third = await k.run(
        { op: 'rename-symbol', symbol: 'src/a.ts::second', to: 'third' },
        { apply: true, verify: 'syntax' },
      );
      expect(third.files_written).toEqual(['src/a.ts', 'src/b.ts']);
      expect(readFileSync(join(ws, 'src/b.ts'), 'utf8')).toContain('third()');
    } finally {
      await k.close();
    }
  });

  it('holds the lock from open to close with holdLock', async () => {
    const ws = realpathSync(tempWs(FILES));
    const k = await openKernel({ workspace: ws, env: cleanEnv(), holdLock: true });
    try {
      await k.snapshot();
      const r = await tug(['snapshot', '--no-wait'], ws);
      expect([r.code, r.json.error.code]).toEqual([4, 'SessionLocked']);
    } finally {
      await k.close();
    }
    expect((await tug(['snapshot', '--no-wait'], ws)).code).toBe(0);
  });
});

describe('clock and environment come from the front door', () => {
  it('stamps session files with the injected clock and never reads TUG_NOW itself', async () => {
    const ws = realpathSync(tempWs(FILES));
    const saved = process.env.TUG_NOW;
    process.env.TUG_NOW = '2001-01-01T00:00:00.000Z';
    try {
      const at = '2031-02-03T04:05:06.007Z';
      const k = await openKernel({ workspace: ws, env: cleanEnv(), clock: { now: () => at }, holdLock: true });
      try {
        expect(JSON.parse(readFileSync(join(ws, '.tug', 'lock.json'), 'utf8')).acquired_at).toBe(at);
        const s = await k.snapshot();
        const stored = JSON.parse(readFileSync(join(ws, '.tug', 'snapshots', `${s.snapshot_id}.json`), 'utf8'));
        expect(stored.created_at).toBe(at);
      } finally {
        await k.close();
      }
      const sj = JSON.parse(readFileSync(join(ws, '.tug', 'session.json'), 'utf8'));
      expect([sj.created_at, sj.last_accessed]).toEqual([at, at]);
    } finally {
      if (saved === undefined) delete process.env.TUG_NOW;
      else process.env.TUG_NOW = saved;
    }
    // The CLI is the front door that reads TUG_NOW.
    const ws2 = realpathSync(tempWs(FILES));
    expect((await tug(['snapshot'], ws2, cleanEnv({ TUG_NOW: '2032-01-01T00:00:00Z' }))).code).toBe(0);
    expect(JSON.parse(readFileSync(join(ws2, '.tug', 'session.json'), 'utf8')).created_at).toBe(
      '2032-01-01T00:00:00.000Z',
    );
  });

  it('gives verifiers the injected environment, not the process environment', async () => {
    const ws = realpathSync(tempWs(FILES));
    process.env.TUG_ISSUE11_LEAK = 'leaked';
    try {
      const script =
        'process.exit(process.env.INJECTED === "yes" && process.env.TUG_SANDBOX === "1" && !process.env.TUG_ISSUE11_LEAK ? 0 : 7)';
      const k = await openKernel({
        workspace: ws,
        env: cleanEnv({ INJECTED: 'yes' }),
        testCommand: [process.execPath, '-e', script],
      });
      try {
        const r = await k.run(
          { op: 'rename-symbol', symbol: 'src/a.ts::alpha', to: 'first' },
          {
            apply: false,
            verify: 'tests',
          },
        );
        expect(r.verification.checks.map((c) => [c.name, c.status])).toEqual([
          ['ts-syntax', 'passed'],
          ['tests', 'passed'],
        ]);
      } finally {
        await k.close();
      }
    } finally {
      delete process.env.TUG_ISSUE11_LEAK;
    }
  });
});

describe('verifier processes', () => {
  it('run without blocking the event loop, and a timeout kills the whole process group', async () => {
    const ws = realpathSync(tempWs(FILES));
    const pidDir = tempWs();
    const pidFile = join(pidDir, 'grandchild.pid');
    // The test command starts a grandchild that would outlive a kill of the direct child alone.
    const script = [
      "const { spawn } = require('node:child_process');",
      "const g = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });",
      `require('node:fs').writeFileSync(${JSON.stringify(pidFile)}, String(g.pid));`,
      'setInterval(() => {}, 1000);',
    ].join('\n');
    const k = await openKernel({
      workspace: ws,
      env: cleanEnv(),
      testCommand: [process.execPath, '-e', script],
      testTimeoutS: 2,
    });
    let ticks = 0;
    const timer = setInterval(() => ticks++, 100);
    try {
      const t0 = Date.now();
      const e = await k
        .run({ op: 'rename-symbol', symbol: 'src/a.ts::alpha', to: 'first' }, { apply: false, verify: 'tests' })
        .catch((x) => x);
      const elapsed = Date.now() - t0;
      expect([e.code, e.details.timed_out]).toEqual(['TestsFailed', true]);
      // The 100 ms timer kept firing while the tests ran (≥ 2 s): nothing blocked the loop.
      expect(ticks).toBeGreaterThanOrEqual(Math.floor(elapsed / 100 / 2));
      const gpid = Number(readFileSync(pidFile, 'utf8'));
      let gone = false;
      for (let i = 0; i < 50 && !gone; i++) {
        try {
          process.kill(gpid, 0);
          await new Promise((r) => setTimeout(r, 50));
        } catch {
          gone = true;
        }
      }
      expect(gone).toBe(true);
    } finally {
      clearInterval(timer);
      await k.close();
    }
  });
});
