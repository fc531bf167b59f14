/**
 * Kernel configuration (docs/kernel.md §3.1): flag > environment > `.tugtool/config.toml [kernel]` (main repo
 * root in git, else the workspace's) > `pyproject.toml [tool.tug]` > defaults; ConfigInvalid for bad input.
 */
import { describe, it, expect } from 'vitest';
import { existsSync, mkdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { loadKernelConfig } from '../../src/kernel/config.js';
import { openKernel } from '../../src/kernel/index.js';
import { runKernelCli } from '../../src/kernel/cli/tug.js';
import { KernelHost } from '../../src/kernel/cli/warm.js';
import { TUGCODE_HOST, TUGCODE_REFACTOR } from '../../src/config/kernel-env.js';
import { git, gitInit, readTree, tempWs, TSCONFIG } from './helpers.js';

const SRC = {
  'tsconfig.json': TSCONFIG,
  'src/a.ts': 'export function alpha(): number {\n  return 1;\n}\n',
  'src/b.ts': "import { alpha } from './a';\nexport const v = alpha();\n",
  'gen/c.ts': 'export const c = 1;\n',
};
const cli = (argv: string[], cwd: string, env: Record<string, string> = {}) =>
  runKernelCli(argv, { prog: 'tug', env, cwd });

describe('kernel configuration', () => {
  it('layers flag over environment over [kernel] over pyproject [tool.tug] over defaults', async () => {
    const ws = realpathSync(
      tempWs({
        ...SRC,
        '.tugtool/config.toml': '[kernel]\nverify = "tests"\ntest_timeout = 42\ninclude = ["src/**"]\n',
        'pyproject.toml':
          '[project]\nname = "x"\n\n[tool.tug]\nverify = "typecheck"\ntest_timeout = 7\nmax_edits = 9\nsafety = "safe"\n',
      }),
    );
    const c = await loadKernelConfig(ws, { env: { TUG_TEST_TIMEOUT: '11' } });
    expect(c.settings).toMatchObject({
      verify: 'tests',
      test_timeout: 11,
      max_edits: 9,
      safety: 'strict',
      include: ['src/**'],
      lock_timeout: 30,
      test_command: null,
    });
    expect(c.sources).toMatchObject({
      verify: 'config',
      test_timeout: 'env',
      max_edits: 'pyproject',
      safety: 'pyproject',
      include: 'config',
      lock_timeout: 'default',
    });
    // The flag wins over everything.
    const r = await cli(
      ['run', '--verify', 'none', 'rename-symbol', '--symbol', 'src/a.ts::alpha', '--to', 'first'],
      ws,
    );
    expect(JSON.parse(r.stdout).verification.mode).toBe('none');
    // Without the flag, [kernel] verify = "tests" applies, with the configured include set.
    const s = await cli(['snapshot'], ws);
    expect(JSON.parse(s.stdout).files_by_language.typescript).toBe(2);
  });

  it('reads the main checkout config from a linked worktree, and the workspace config outside git', async () => {
    const main = realpathSync(tempWs({ ...SRC, '.tugtool/config.toml': '[kernel]\nexclude = ["gen/**"]\n' }));
    gitInit(main);
    const wt = join(tempWs(), 'wt');
    git(main, 'worktree', 'add', '-q', wt);
    // The worktree has no .tugtool/config.toml of its own (it is committed, so remove it there).
    git(wt, 'rm', '-q', '.tugtool/config.toml');
    const k = await openKernel({ workspace: wt, env: {} });
    try {
      expect(k.settings.exclude).toEqual(['gen/**']);
      expect((await k.snapshot()).file_count).toBe(3);
    } finally {
      await k.close();
    }
    const plain = realpathSync(
      tempWs({ ...SRC, '.tugtool/config.toml': '[kernel]\nlock_timeout = 3\nmax_files_affected = 4\n' }),
    );
    const c = await loadKernelConfig(plain, { env: {} });
    expect([c.settings.lock_timeout, c.settings.max_files_affected]).toEqual([3, 4]);
  });

  it("reads only its own [kernel] table: other tables are tugcode's, unknown kernel keys are output warnings", async () => {
    const ws = realpathSync(
      tempWs({
        ...SRC,
        '.tugtool/config.toml': '[state]\nlease_seconds = "soon"\n\n[kernel]\nmax_edits = 7\nspeed = 3\n',
      }),
    );
    const c = await loadKernelConfig(ws, { env: {} });
    expect([c.settings.max_edits, c.sources.max_edits]).toEqual([7, 'config']);
    const unknown = {
      code: 'ConfigUnknownKey',
      message: `${join(ws, '.tugtool', 'config.toml')}: unknown key kernel.speed ignored`,
    };
    expect(c.warnings).toEqual([unknown]);
    // A `tug` user sees it as tugcode's users do (docs/kernel.md §5.3): in `warnings`, an error's too, and as a
    // `--text` warning line (on stdout, §3.4).
    const snap = await cli(['snapshot'], ws);
    expect(JSON.parse(snap.stdout).warnings).toEqual([unknown]);
    const text = await cli(['snapshot', '--text'], ws);
    expect(text.stdout).toContain(`\nwarning ConfigUnknownKey: ${unknown.message}\n`);
    const err = await cli(['analyze-impact', 'rename-symbol', '--symbol', 'src/none.ts::x', '--to', 'y'], ws);
    expect([err.exitCode, JSON.parse(err.stdout).error.code]).toEqual([3, 'FileNotFound']);
    expect(JSON.parse(err.stdout).warnings).toEqual([unknown]);
    // The warm host of the MCP server too, on every call.
    const host = new KernelHost({ env: {}, cwd: ws });
    try {
      for (let i = 0; i < 2; i++) {
        const r = await host.call(['analyze-impact', 'rename-symbol', '--symbol', 'src/none.ts::x', '--to', 'y']);
        expect([r.exitCode, r.envelope.warnings]).toEqual([3, [unknown]]);
      }
    } finally {
      await host.close();
    }

    // The init template (headers and comments only) sets nothing and needs no TOML parser.
    const t = realpathSync(
      tempWs({ ...SRC, '.tugtool/config.toml': '# tugcode\n[state]\n# lease_seconds = 1\n[kernel]\n' }),
    );
    const d = await loadKernelConfig(t, { env: {} });
    expect(Object.values(d.sources).every((s) => s === 'default')).toBe(true);
  });

  it("lets a host's settingsEnvPrefix names (tugcode's TUGCODE_KERNEL_*) win over TUG_*, under that host only", async () => {
    const ws = realpathSync(tempWs(SRC));
    const env = { TUG_VERIFY: 'syntax', TUGCODE_KERNEL_VERIFY: 'none', TUGCODE_KERNEL_MAX_EDITS: '3' };
    const t = await loadKernelConfig(ws, { env, settingsEnvPrefix: TUGCODE_HOST.settingsEnvPrefix });
    expect([t.settings.verify, t.settings.max_edits, t.sources.verify]).toEqual(['none', 3, 'env']);
    const u = await loadKernelConfig(ws, { env });
    expect([u.settings.verify, u.settings.max_edits]).toEqual(['syntax', 500]);
    const r = await runKernelCli(['run', 'rename-symbol', '--symbol', 'src/a.ts::alpha', '--to', 'first'], {
      ...TUGCODE_REFACTOR,
      env,
      cwd: ws,
    });
    expect(JSON.parse(r.stdout).verification).toEqual({ status: 'skipped', mode: 'none', sandbox: null, checks: [] });
  });

  it('answers ConfigInvalid (exit 2) for a malformed file, a wrong type or a bad variable, and writes nothing', async () => {
    const cases: [Record<string, string>, Record<string, string>, { path: RegExp; key: string | null }][] = [
      [{ '.tugtool/config.toml': '[kernel\nverify = 1\n' }, {}, { path: /\.tugtool\/config\.toml$/, key: null }],
      [
        { '.tugtool/config.toml': '[kernel]\nverify = "fast"\n' },
        {},
        { path: /\.tugtool\/config\.toml$/, key: 'kernel.verify' },
      ],
      [
        { '.tugtool/config.toml': '[kernel]\ntest_command = "npm test"\n' },
        {},
        { path: /\.tugtool\/config\.toml$/, key: 'kernel.test_command' },
      ],
      [
        { 'pyproject.toml': '[tool.tug]\ntest_timeout = "soon"\n' },
        {},
        { path: /pyproject\.toml$/, key: 'tool.tug.test_timeout' },
      ],
      [{ 'pyproject.toml': '[tool.tug\n' }, {}, { path: /pyproject\.toml$/, key: null }],
      [{}, { TUG_VERIFY: 'fast' }, { path: /^TUG_VERIFY$/, key: 'verify' }],
      [{}, { TUG_TEST_COMMAND: 'npm test' }, { path: /^TUG_TEST_COMMAND$/, key: 'test_command' }],
      [
        { '.tugtool/config.toml': '[kernel]\nverify = "none"\n' },
        { TUG_LOCK_TIMEOUT: 'soon' },
        { path: /^TUG_LOCK_TIMEOUT$/, key: 'lock_timeout' },
      ],
    ];
    for (const [files, env, want] of cases) {
      const ws = realpathSync(tempWs({ ...SRC, ...files }));
      const before = readTree(ws, ['.git']);
      const r = await cli(['run', '--apply', 'rename-symbol', '--symbol', 'src/a.ts::alpha', '--to', 'first'], ws, env);
      const e = JSON.parse(r.stdout);
      expect([r.exitCode, e.error.code], JSON.stringify(files) + JSON.stringify(env)).toEqual([2, 'ConfigInvalid']);
      expect(e.error.details.path).toMatch(want.path);
      expect(e.error.details.key).toBe(want.key);
      expect(typeof e.error.details.reason).toBe('string');
      expect(readTree(ws, ['.git'])).toEqual(before);
      expect(existsSync(join(ws, '.tug'))).toBe(false);
    }
  });

  it('uses the configured test command, lock timeout and typecheck command', async () => {
    const ws = realpathSync(
      tempWs({
        ...SRC,
        '.tugtool/config.toml': '[kernel]\ntest_command = ["node", "-e", "process.exit(3)"]\nlock_timeout = 0\n',
      }),
    );
    const t = await cli(
      ['run', '--verify', 'tests', 'rename-symbol', '--symbol', 'src/a.ts::alpha', '--to', 'first'],
      ws,
    );
    const te = JSON.parse(t.stdout);
    expect([t.exitCode, te.error.code, te.error.details.exit_code, te.error.details.command]).toEqual([
      5,
      'TestsFailed',
      3,
      ['node', '-e', 'process.exit(3)'],
    ]);
    const holder = await openKernel({ workspace: ws, env: {}, holdLock: true });
    try {
      const l = await cli(['snapshot'], ws);
      const le = JSON.parse(l.stdout);
      expect([l.exitCode, le.error.code, le.error.details.waited_seconds]).toEqual([4, 'SessionLocked', 0]);
    } finally {
      await holder.close();
    }
    // typecheck_command replaces tsc: exits 0 on the baseline and non-zero once `first` exists.
    mkdirSync(join(ws, 'scripts'), { recursive: true });
    const script =
      "const t=require('fs').readFileSync('src/a.ts','utf8');if(/first/.test(t)){console.log('src/a.ts:1:17: error: renamed');process.exit(1)}";
    const k = await openKernel({
      workspace: ws,
      env: {},
      typecheckCommand: ['node', '-e', script],
      testCommand: ['node', '-e', ''],
    });
    try {
      const err = await k
        .run({ op: 'rename-symbol', symbol: 'src/a.ts::alpha', to: 'first' }, { apply: true, verify: 'typecheck' })
        .catch((e) => e);
      expect(err.code).toBe('TypecheckFailed');
      const checks = err.extra.verification.checks.map((c: any) => [c.name, c.status]);
      expect(checks).toEqual([
        ['ts-syntax', 'passed'],
        ['tests', 'passed'],
        ['typecheck-command', 'failed'],
      ]);
      expect(err.details.errors).toEqual([{ file: 'src/a.ts', line: 1, col: 17, code: null, message: 'renamed' }]);
      const ok = await k.run(
        { op: 'rename-symbol', symbol: 'src/a.ts::alpha', to: 'second' },
        { apply: false, verify: 'typecheck' },
      );
      expect(ok.verification.checks.map((c) => [c.name, c.status, c.baseline])).toEqual([
        ['ts-syntax', 'passed', { diagnostics: 0 }],
        ['tests', 'passed', null],
        ['typecheck-command', 'passed', { diagnostics: 0 }],
      ]);
    } finally {
      await k.close();
    }
  });
});
