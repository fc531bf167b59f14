/**
 * End to end (05-kernel.md §13.4): renames in a vendored TypeScript package with --verify typecheck; the
 * package still typechecks and its own tests pass; git sees exactly the reported diff and files.
 */
import { describe, it, expect } from 'vitest';
import { readFileSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { runKernelCli } from '../../src/kernel/cli/tug.js';
import { copyTree, git, gitInit } from './helpers.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const TSC = require.resolve('typescript/bin/tsc');
process.env.TS_LIB_TYPESCRIPT = require.resolve('typescript');

/** Rename locations straight from a LanguageService over the package's tsconfig. */
function directLocations(ws: string, file: string, needle: string): string[] {
  const cfg = ts.getParsedCommandLineOfConfigFile(join(ws, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined })!;
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
  const locs = ls.findRenameLocations(abs, readFileSync(abs, 'utf8').indexOf(needle), false, false, { providePrefixAndSuffixTextForRename: true }) ?? [];
  return locs.map((l) => `${relative(ws, l.fileName)}:${l.textSpan.start}`).sort();
}

function assertClean(ws: string, env: any): void {
  const tsc = spawnSync(process.execPath, [TSC, '--noEmit', '-p', '.'], { cwd: ws, encoding: 'utf8' });
  expect(tsc.status, tsc.stdout).toBe(0);
  expect(git(ws, 'diff', '--name-only').trim().split('\n')).toEqual(env.files_written);
  // git adds function context after the hunk header; the kernel's headers are bare (05 §9.5).
  expect(git(ws, 'diff').replace(/^(@@ [^@]+ @@).*$/gm, '$1').replace(/^index .*\n/gm, '')).toBe(env.patch.unified_diff);
  const tests = spawnSync(process.execPath, ['scripts/run-tests.mjs'], { cwd: ws, encoding: 'utf8' });
  expect(tests.status, tests.stdout).toBe(0);
}

describe('vendored TypeScript package', () => {
  it('renames a widely used method and a barrel-exported function with --verify typecheck', async () => {
    const ws = realpathSync(copyTree(join(HERE, 'e2e', 'ts-lib')));
    gitInit(ws);
    const expected = directLocations(ws, 'src/schema/base.ts', 'parse(input: unknown');
    const r1 = await runKernelCli(['run', '--apply', '--verify', 'typecheck', 'rename-symbol', '--symbol', 'src/schema/base.ts::Schema.parse', '--to', 'validate'], { prog: 'tug', env: {}, cwd: ws });
    expect(r1.exitCode, r1.stdout).toBe(0);
    const e1 = JSON.parse(r1.stdout);
    expect(e1.verification.checks.map((c: any) => [c.name, c.status])).toEqual([['ts-syntax', 'passed'], ['tests', 'passed'], ['tsc', 'passed']]);
    expect(e1.patch.edits.map((e: any) => `${e.file}:${e.span.start}`).sort()).toEqual(expected);
    expect(e1.summary.files_changed).toBeGreaterThanOrEqual(4);
    assertClean(ws, e1);
    git(ws, 'commit', '-qam', 'rename parse', '--no-gpg-sign');

    const r2 = await runKernelCli(['run', '--apply', '--verify', 'typecheck', 'rename-symbol', '--symbol', 'src/text/format.ts::formatValue', '--to', 'renderValue'], { prog: 'tug', env: {}, cwd: ws });
    expect(r2.exitCode, r2.stdout).toBe(0);
    const e2 = JSON.parse(r2.stdout);
    expect(e2.files_written).toEqual(['src/text/format.ts', 'src/text/index.ts', 'src/text/slug.ts', 'src/ui/view.tsx', 'tests/text.check.ts']);
    expect(e2.patch.unified_diff).not.toMatch(/ as formatValue/);
    assertClean(ws, e2);
  });
});
