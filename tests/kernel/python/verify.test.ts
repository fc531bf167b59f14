/**
 * Python verification (docs/kernel.md §11): py-compile with the resolved interpreter (it catches what a
 * tree parser misses, like an IndentationError), detected pytest commands with `{python}`, pytest's "no
 * tests" exit as unavailable, failing tests, and pyright typecheck against a baseline.
 */
import { describe, it, expect } from 'vitest';
import { readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openKernel } from '../../../src/kernel/index.js';
import { KernelError } from '../../../src/kernel/errors.js';
import type { Verification } from '../../../src/kernel/types.js';
import { failure, kernelEnv, tempWs } from '../helpers.js';
import { missingTool } from '../fixture-runner.js';

const checks = (v: Verification | undefined) => (v?.checks ?? []).map((c) => [c.name, c.status]);

// These checks run the real interpreter; without one they are skipped loudly (TUG_REQUIRE_PYTHON=1 fails).
const noPython = missingTool('python3');
if (noPython && process.env.TUG_REQUIRE_PYTHON !== '1') process.stderr.write(`SKIP python verification: ${noPython}\n`);
const suite = noPython && process.env.TUG_REQUIRE_PYTHON !== '1' ? describe.skip : describe;

suite('python verification', () => {
  it('reports syntax errors of every Python file in verify, including an IndentationError', async () => {
    const ws = realpathSync(tempWs({ 'ok.py': 'x = 1\n', 'bad.py': 'def f():\nreturn 1\n' }));
    const k = await openKernel({ workspace: ws, env: kernelEnv() });
    try {
      const e = await failure(k.verify('syntax'));
      expect(e.code).toBe('SyntaxError');
      expect(e.details.errors).toEqual([
        {
          file: 'bad.py',
          line: 2,
          col: 1,
          code: 'IndentationError',
          message: 'expected an indented block after function definition on line 1',
        },
      ]);
      expect(checks(e.extra?.verification as Verification)).toEqual([['py-compile', 'failed']]);
    } finally {
      await k.close();
    }
  });

  it('runs detected pytest with {python}, fails on a broken test and treats no collected tests as unavailable', async () => {
    const ws = realpathSync(
      tempWs({
        'calc.py': 'def add(a, b):\n    return a + b\n',
        'tests/test_calc.py':
          'import calc\n\n\ndef test_add():\n    assert calc.add(1, 2) == 3\n\n\ndef test_by_name():\n    assert getattr(calc, "add")(2, 2) == 4\n',
      }),
    );
    const k = await openKernel({ workspace: ws, env: kernelEnv() });
    try {
      const ok = await k
        .run(
          { op: 'rename-symbol', at: { file: 'calc.py', line: 1, col: 5 }, to: 'plus' },
          { apply: false, verify: 'tests' },
        )
        .catch((e: KernelError) => e);
      expect(ok).toBeInstanceOf(KernelError);
      const e = ok as KernelError;
      expect(e.code).toBe('TestsFailed');
      expect(e.details.command).toEqual(['{python}', '-m', 'pytest', '-q']);
      expect(e.details.failed_tests).toEqual(['tests/test_calc.py::test_by_name']);
      expect(checks(e.extra?.verification as Verification)).toEqual([
        ['py-compile', 'passed'],
        ['tests', 'failed'],
      ]);
      expect(readFileSync(join(ws, 'calc.py'), 'utf8')).toContain('def add');
      const warn = (e.extra?.warnings as { code: string }[]).map((w) => w.code);
      expect(warn).toEqual(['DynamicAttributeAccess', 'SkippedStringLiteral']);
    } finally {
      await k.close();
    }
    const empty = realpathSync(
      tempWs({ 'calc.py': 'def add(a, b):\n    return a + b\n', 'tests/helpers.py': 'X = 1\n' }),
    );
    const k2 = await openKernel({ workspace: empty, env: kernelEnv() });
    try {
      const e = await failure(
        k2.run(
          { op: 'rename-symbol', at: { file: 'calc.py', line: 1, col: 5 }, to: 'plus' },
          { apply: true, verify: 'tests' },
        ),
      );
      expect([e.code, e.details.reason]).toEqual(['VerificationUnavailable', 'pytest collected no tests (exit 5)']);
      expect(readFileSync(join(empty, 'calc.py'), 'utf8')).toContain('def add');
    } finally {
      await k2.close();
    }
  });

  it('applies after passing tests given with {python} and {workspace}', async () => {
    const ws = realpathSync(
      tempWs({
        'calc.py': 'def add(a, b):\n    return a + b\n',
        'main.py': 'from calc import add\nprint(add(1, 2))\n',
      }),
    );
    const k = await openKernel({ workspace: ws, env: kernelEnv(), testCommand: ['{python}', '{workspace}/main.py'] });
    try {
      const r = await k.run(
        { op: 'rename-symbol', at: { file: 'calc.py', line: 1, col: 5 }, to: 'plus' },
        { apply: true, verify: 'tests' },
      );
      expect(checks(r.verification)).toEqual([
        ['py-compile', 'passed'],
        ['tests', 'passed'],
      ]);
      expect(r.verification.checks[1]!.output).toBe('3\n');
      expect(r.files_written).toEqual(['calc.py', 'main.py']);
    } finally {
      await k.close();
    }
  });

  it('takes a syntax error the renamed file already had as its baseline (minimal sandbox), cached per snapshot', async () => {
    const ws = realpathSync(
      tempWs({ 'a.py': 'def old_name():\n    return 1\n\n\nprint(old_name())\n\n\ndef broken(:\n    pass\n' }),
    );
    const k = await openKernel({ workspace: ws, env: kernelEnv() });
    try {
      const op = { op: 'rename-symbol' as const, at: { file: 'a.py', line: 1, col: 5 }, to: 'new_name' };
      const r = await k.run(op, { apply: false, verify: 'syntax' });
      expect(r.verification.sandbox).toBe('minimal');
      expect(checks(r.verification)).toEqual([['py-compile', 'passed']]);
      expect(r.verification.checks[0]!.baseline).toEqual({ diagnostics: 1 });
      const dir = join(ws, '.tug', 'baselines');
      const [name, ...more] = readdirSync(dir);
      expect(more).toEqual([]);
      const cached = JSON.parse(readFileSync(join(dir, name!), 'utf8'));
      expect([cached.key.check, cached.diagnostics.length]).toEqual(['py-compile', 1]);
      // Empty the cached baseline: the next run on this snapshot uses it, so the old error is new to it.
      writeFileSync(join(dir, name!), JSON.stringify({ ...cached, diagnostics: [] }));
      const e = await failure(k.run(op, { apply: false, verify: 'syntax' }));
      expect(e.code).toBe('SyntaxError');
      expect((e.details.errors as { line: number }[]).map((d) => d.line)).toEqual([8]);
    } finally {
      await k.close();
    }
  });

  it('fails typecheck on new pyright errors only (existing ones are the baseline)', async () => {
    const ws = realpathSync(
      tempWs({
        'mod.py':
          'def a() -> int:\n    return 1\n\n\ndef b() -> str:\n    return "b"\n\n\nx: int = a()\ny: int = "old error"\n',
      }),
    );
    const k = await openKernel({ workspace: ws, env: kernelEnv(), testCommand: ['{python}', '-c', 'pass'] });
    try {
      const e = await failure(
        k.run(
          { op: 'rename-symbol', at: { file: 'mod.py', line: 1, col: 5 }, to: 'b' },
          { apply: true, verify: 'typecheck' },
        ),
      );
      expect(e.code).toBe('TypecheckFailed');
      expect(e.details.baseline_count).toBe(1);
      expect((e.details.errors as { file: string }[]).every((d) => d.file === 'mod.py')).toBe(true);
      expect(checks(e.extra?.verification as Verification)).toEqual([
        ['py-compile', 'passed'],
        ['tests', 'passed'],
        ['pyright', 'failed'],
      ]);
      const ok = await k.run(
        { op: 'rename-symbol', at: { file: 'mod.py', line: 1, col: 5 }, to: 'c' },
        { apply: false, verify: 'typecheck' },
      );
      expect(checks(ok.verification)).toEqual([
        ['py-compile', 'passed'],
        ['tests', 'passed'],
        ['pyright', 'passed'],
      ]);
      expect(ok.verification.checks[2]!.baseline).toEqual({ diagnostics: 1 });
    } finally {
      await k.close();
    }
  });
});
