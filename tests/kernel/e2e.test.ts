/**
 * End to end (docs/kernel.md §13.4): renames in a vendored TypeScript package with --verify typecheck; the
 * package still typechecks and its own tests pass; git sees exactly the reported diff and files.
 */
import { describe, it, expect } from 'vitest';
import { readFileSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { runKernelCli } from '../../src/kernel/cli/tug.js';
import { copyTree, git, gitInit, kernelEnv } from './helpers.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const TSC = require.resolve('typescript/bin/tsc');
process.env.TS_LIB_TYPESCRIPT = require.resolve('typescript');

/** Rename locations straight from a LanguageService over the package's tsconfig. */
function directLocations(ws: string, file: string, needle: string): string[] {
  const cfg = ts.getParsedCommandLineOfConfigFile(
    join(ws, 'tsconfig.json'),
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined },
  )!;
  const host: ts.LanguageServiceHost = {
    getScriptFileNames: () => cfg.fileNames,
    getScriptVersion: () => '1',
    getScriptSnapshot: (f) => (ts.sys.fileExists(f) ? ts.ScriptSnapshot.fromString(ts.sys.readFile(f)!) : undefined),
    getCurrentDirectory: () => ws,
    getCompilationSettings: () => cfg.options,
    getDefaultLibFileName: (o) => ts.getDefaultLibFilePath(o),
    fileExists: ts.sys.fileExists,
    readFile: ts.sys.readFile,
  };
  const ls = ts.createLanguageService(host);
  const abs = join(ws, file);
  const locs =
    ls.findRenameLocations(abs, readFileSync(abs, 'utf8').indexOf(needle), false, false, {
      providePrefixAndSuffixTextForRename: true,
    }) ?? [];
  return locs.map((l) => `${relative(ws, l.fileName)}:${l.textSpan.start}`).sort();
}

/** A child process's exit code and output (tsc and the package's tests run side by side). */
function run(argv: string[], cwd: string): Promise<{ status: number | null; out: string }> {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, argv, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    c.stdout.on('data', (d) => (out += d));
    c.stderr.on('data', (d) => (out += d));
    c.on('close', (status) => resolve({ status, out }));
  });
}

async function assertClean(ws: string, env: any): Promise<void> {
  const [tsc, tests] = await Promise.all([run([TSC, '--noEmit', '-p', '.'], ws), run(['scripts/run-tests.mjs'], ws)]);
  expect(tsc.status, tsc.out).toBe(0);
  expect(tests.status, tests.out).toBe(0);
  expect(git(ws, 'diff', '--name-only').trim().split('\n')).toEqual(env.files_written);
  // git adds function context after the hunk header; the kernel's headers are bare (docs/kernel.md §9.5).
  expect(
    git(ws, 'diff')
      .replace(/^(@@ [^@]+ @@).*$/gm, '$1')
      .replace(/^index .*\n/gm, ''),
  ).toBe(env.patch.unified_diff);
}

describe('vendored TypeScript package', () => {
  it('renames a widely used method and a barrel-exported function with --verify typecheck', async () => {
    const ws = realpathSync(copyTree(join(HERE, 'e2e', 'ts-lib')));
    gitInit(ws);
    const expected = directLocations(ws, 'src/schema/base.ts', 'parse(input: unknown');
    const r1 = await runKernelCli(
      [
        'run',
        '--apply',
        '--verify',
        'typecheck',
        'rename-symbol',
        '--symbol',
        'src/schema/base.ts::Schema.parse',
        '--to',
        'validate',
      ],
      { prog: 'tug', env: kernelEnv(), cwd: ws },
    );
    expect(r1.exitCode, r1.stdout).toBe(0);
    const e1 = JSON.parse(r1.stdout);
    expect(e1.verification.checks.map((c: any) => [c.name, c.status])).toEqual([
      ['ts-syntax', 'passed'],
      ['tests', 'passed'],
      ['tsc', 'passed'],
    ]);
    expect(e1.patch.edits.map((e: any) => `${e.file}:${e.span.start}`).sort()).toEqual(expected);
    // Schema.parse is overridden by every schema class and called across the package (12 files, 65 edits).
    expect([e1.summary.files_changed, e1.summary.edits_count, e1.warnings]).toEqual([12, 65, []]);
    await assertClean(ws, e1);
    git(ws, 'commit', '-qam', 'rename parse', '--no-gpg-sign');

    // The second rename only needs the syntax check: assertClean runs tsc and the package's tests itself.
    const r2 = await runKernelCli(
      [
        'run',
        '--apply',
        '--verify',
        'syntax',
        'rename-symbol',
        '--symbol',
        'src/text/format.ts::formatValue',
        '--to',
        'renderValue',
      ],
      { prog: 'tug', env: kernelEnv(), cwd: ws },
    );
    expect(r2.exitCode, r2.stdout).toBe(0);
    const e2 = JSON.parse(r2.stdout);
    expect(e2.files_written).toEqual([
      'src/text/csv.ts',
      'src/text/format.ts',
      'src/text/index.ts',
      'src/text/slug.ts',
      'src/text/template.ts',
      'src/ui/view.tsx',
      'tests/text.check.ts',
    ]);
    expect(e2.patch.unified_diff).not.toMatch(/ as formatValue/);
    await assertClean(ws, e2);
  });
});
