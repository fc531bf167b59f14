/**
 * The library API (docs/kernel.md §2.3), sessions and locking (§12), the source set (§10.1) and new-name
 * validation (§3.3), tested in-process.
 */
import { describe, it, expect } from 'vitest';
import { mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openKernel } from '../../src/kernel/index.js';
import { runKernelCli } from '../../src/kernel/cli/tug.js';
import { takeSnapshot, listWorkspaceFiles } from '../../src/kernel/snapshot.js';
import { validateNewName, validateForSymbol } from '../../src/kernel/names.js';
import { KernelError } from '../../src/kernel/errors.js';
import { gitInit, tempWs, TSCONFIG } from './helpers.js';

const FILES = {
  'tsconfig.json': TSCONFIG,
  'src/a.ts': 'export function alpha(): number {\n  return 1;\n}\nexport class Box {\n  size = 1;\n}\n',
  'src/b.ts': "import { alpha, Box } from './a';\n\nexport const v = alpha() + new Box().size;\n",
};

function codeOf(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    return `${(e as KernelError).code}:${String((e as KernelError).details.reason)}`;
  }
  return 'ok';
}

describe('library API', () => {
  it('runs several operations on one warm kernel and sees its own applied edits', async () => {
    const ws = realpathSync(tempWs(FILES));
    const k = await openKernel({ workspace: ws });
    try {
      const an = await k.analyzeImpact({ op: 'rename-symbol', symbol: 'src/a.ts::alpha', to: 'first' });
      expect(an.impact).toEqual({ files_affected: 2, references_count: 3, edits_estimated: 3 });
      const r1 = await k.run(
        { op: 'rename-symbol', symbol: 'src/a.ts::alpha', to: 'first' },
        { apply: true, verify: 'syntax' },
      );
      expect(r1.files_written).toEqual(['src/a.ts', 'src/b.ts']);
      const p2 = await k.prepare({ op: 'rename-symbol', symbol: 'src/a.ts::Box.size', to: 'volume' });
      expect(p2.snapshot_id).toBe(r1.snapshot_after);
      expect(p2.edits.map((e) => e.file)).toEqual(['src/a.ts', 'src/b.ts']);
      const v = await k.verifyPrepared(p2, 'none');
      expect(v).toEqual({ status: 'skipped', mode: 'none', sandbox: null, checks: [] });
      const a2 = await k.apply(p2);
      expect(a2.applied).toBe(true);
      expect(readFileSync(join(ws, 'src/b.ts'), 'utf8')).toBe(
        "import { first, Box } from './a';\n\nexport const v = first() + new Box().volume;\n",
      );
      // An empty patch is a valid no-op.
      const noop = await k.run(
        { op: 'organize-imports', file: 'src/a.ts', mode: 'all' },
        { apply: true, verify: 'syntax' },
      );
      expect([noop.applied, noop.summary.edits_count, noop.patch.unified_diff, noop.verification.status]).toEqual([
        false,
        0,
        '',
        'skipped',
      ]);
    } finally {
      await k.close();
    }
  });

  it("sees a tsconfig's new content between two operations (a paths alias added: its importers are renamed)", async () => {
    const options = { strict: true, target: 'ES2022', module: 'ESNext', moduleResolution: 'Bundler' };
    const ws = realpathSync(
      tempWs({
        'tsconfig.json': JSON.stringify({ compilerOptions: options, include: ['src'] }),
        'src/util.ts': 'export function loadConfig(p: string): string {\n  return p;\n}\n',
        'src/main.ts': "import { loadConfig } from '@app/util';\nexport const c = loadConfig('x');\n",
      }),
    );
    const k = await openKernel({ workspace: ws });
    try {
      // Without the alias, main.ts's import resolves to nothing: only the declaration is renamed.
      const before = await k.prepare({ op: 'rename-symbol', symbol: 'src/util.ts::loadConfig', to: 'readCfg' });
      expect(before.edits.map((e) => e.file)).toEqual(['src/util.ts']);
      const paths = { ...options, baseUrl: '.', paths: { '@app/*': ['src/*'] } };
      writeFileSync(join(ws, 'tsconfig.json'), JSON.stringify({ compilerOptions: paths, include: ['src'] }));
      const after = await k.prepare({ op: 'rename-symbol', symbol: 'src/util.ts::loadConfig', to: 'readCfg' });
      expect([...new Set(after.edits.map((e) => e.file))].sort()).toEqual(['src/main.ts', 'src/util.ts']);
    } finally {
      await k.close();
    }
  });

  it('sees a file edited outside the kernel between two operations (cached texts are checked by content)', async () => {
    const ws = realpathSync(tempWs(FILES));
    const k = await openKernel({ workspace: ws });
    try {
      const op = { op: 'rename-symbol' as const, symbol: 'src/a.ts::alpha', to: 'first' };
      const before = await k.prepare(op);
      expect(before.summary.edits_count).toBe(3);
      // Another line and another use above the old ones: every cached offset and line would now be wrong.
      writeFileSync(
        join(ws, 'src/b.ts'),
        "import { alpha, Box } from './a';\n\nexport const w = alpha();\nexport const v = alpha() + new Box().size;\n",
      );
      const after = await k.prepare(op);
      expect(after.summary.edits_count).toBe(4);
      expect(after.edits.filter((e) => e.file === 'src/b.ts').map((e) => [e.line, e.col])).toEqual([
        [1, 10],
        [3, 18],
        [4, 18],
      ]);
      expect(after.unified_diff).toContain('+export const w = first();');
    } finally {
      await k.close();
    }
  });

  it('refuses a patch whose files changed after prepare', async () => {
    const ws = realpathSync(tempWs(FILES));
    const k = await openKernel({ workspace: ws });
    try {
      const p = await k.prepare({ op: 'rename-symbol', at: { file: 'src/a.ts', line: 1, col: 17 }, to: 'first' });
      writeFileSync(join(ws, 'src/b.ts'), readFileSync(join(ws, 'src/b.ts'), 'utf8') + '// edited\n');
      await expect(k.apply(p)).rejects.toMatchObject({
        code: 'SnapshotMismatch',
        details: { changed_files: ['src/b.ts'] },
      });
      expect(readFileSync(join(ws, 'src/a.ts'), 'utf8')).toContain('alpha');
    } finally {
      await k.close();
    }
  });

  it('serializes a second caller behind the session lock', async () => {
    const ws = realpathSync(tempWs(FILES));
    const k = await openKernel({ workspace: ws });
    const second = runKernelCli(['snapshot', '--lock-timeout', '30'], { prog: 'tug', env: {}, cwd: ws });
    let done = false;
    void second.then(() => (done = true));
    await new Promise((r) => setImmediate(r));
    expect(done).toBe(false);
    await k.close();
    const r = await second;
    expect(r.exitCode).toBe(0);
  });
});

describe('unsupported files', () => {
  it('names the operation when a file has no backend (details.operation is never null there)', async () => {
    const ws = tempWs({ 'README.md': '# hi\n', 'a.ts': 'export const a = 1;\n' });
    for (const [argv, operation] of [
      [['run', 'rename-symbol', '--at', 'README.md:1:3', '--to', 'x'], 'rename-symbol'],
      [['analyze-impact', 'organize-imports', '--file', 'README.md'], 'organize-imports'],
    ] as const) {
      const r = await runKernelCli([...argv], { prog: 'tug', env: {}, cwd: ws });
      expect(r.exitCode).toBe(2);
      expect(JSON.parse(r.stdout).error).toMatchObject({
        code: 'UnsupportedOperation',
        details: { operation, language: null, reason: 'language' },
      });
    }
  });
});

describe('organize-imports', () => {
  it('changes nothing in an organized file, and leaves the import it keeps out of the diff', async () => {
    const ws = tempWs({
      'tsconfig.json': TSCONFIG,
      'src/y.ts': 'export const a = 1;\nexport const b = 2;\n',
      'src/z.ts': 'export const z = 3;\n',
      'src/ok.ts': "import { a } from './y';\nimport { z } from './z';\n\nexport const q = a + z;\n",
      'src/o.ts': "import { z } from './z';\nimport { b, a } from './y';\n\nexport const q = a + b;\n",
    });
    const cli = async (...argv: string[]) =>
      JSON.parse((await runKernelCli(['run', 'organize-imports', ...argv], { prog: 'tug', env: {}, cwd: ws })).stdout);
    const ok = await cli('--file', 'src/ok.ts', '--apply');
    expect([ok.summary.edits_count, ok.patch.unified_diff, ok.applied, ok.files_written]).toEqual([0, '', false, []]);
    const o = await cli('--file', 'src/o.ts', '--mode', 'remove-unused');
    expect(o.patch.unified_diff).toContain("-import { z } from './z';\n import { b, a } from './y';\n");
    expect(o.patch.edits).toEqual([expect.objectContaining({ old_text: "import { z } from './z';\n", new_text: '' })]);
  });
});

describe('source set and snapshots', () => {
  const files = {
    ...FILES,
    '.gitignore': 'ignored.ts\nbuild/\n',
    'ignored.ts': 'export const x = 1;\n',
    'build/out.ts': 'export const y = 1;\n',
    'node_modules/dep/index.ts': 'export const z = 1;\n',
    '.tugtree/wt/src/a.ts': 'export const w = 1;\n',
    'target/t.rs': 'fn f() {}\n',
    'README.md': '# readme\n',
    '.tugtool/state.db': 'db',
  };
  /** A host's own files (tugcode's worktrees and database), which the kernel names only when told. */
  const host = { hostDirs: ['.tugtree'], hostFiles: ['.tugtool/state.db'] };

  it("honours .gitignore, the always-excluded paths and the host's files, with and without git", async () => {
    const plain = realpathSync(tempWs(files));
    const repo = realpathSync(tempWs(files));
    gitInit(repo);
    for (const ws of [plain, repo]) {
      const s = await takeSnapshot(ws, host);
      expect([...s.files.keys()]).toEqual(['src/a.ts', 'src/b.ts', 'tsconfig.json']);
      expect((await listWorkspaceFiles(ws, host)).map((f) => f.path)).toEqual([
        '.gitignore',
        'README.md',
        'src/a.ts',
        'src/b.ts',
        'tsconfig.json',
      ]);
      // Without a host, its files are workspace files like any other.
      expect((await listWorkspaceFiles(ws)).map((f) => f.path)).toEqual([
        '.gitignore',
        '.tugtool/state.db',
        '.tugtree/wt/src/a.ts',
        'README.md',
        'src/a.ts',
        'src/b.ts',
        'tsconfig.json',
      ]);
    }
    expect((await takeSnapshot(plain, host)).id).toBe((await takeSnapshot(repo, host)).id);
  });

  it('reads a workspace whose .gitignore is a dangling symlink, without git', async () => {
    const ws = realpathSync(tempWs(FILES));
    mkdirSync(join(ws, 'sub'));
    symlinkSync(join(ws, 'nowhere'), join(ws, 'sub', '.gitignore'));
    expect([...(await takeSnapshot(ws)).files.keys()]).toEqual(['src/a.ts', 'src/b.ts', 'tsconfig.json']);
  });

  it('derives the id from content only and leaves symlinks out', async () => {
    const a = realpathSync(tempWs(FILES));
    const b = realpathSync(tempWs(FILES));
    mkdirSync(join(b, 'more'));
    symlinkSync(join(b, 'src/a.ts'), join(b, 'more/link.ts'));
    expect((await takeSnapshot(a)).id).toBe((await takeSnapshot(b)).id);
    writeFileSync(join(b, 'src/a.ts'), 'changed\n');
    expect((await takeSnapshot(a)).id).not.toBe((await takeSnapshot(b)).id);
  });
});

describe('new-name validation', () => {
  it('checks TS, Python and Rust names', () => {
    const cases: [Parameters<typeof validateNewName>[0], string, string][] = [
      ['typescript', 'loadConfig', 'ok'],
      ['typescript', 'naïve', 'ok'],
      ['typescript', '$el', 'ok'],
      ['typescript', 'class', 'InvalidArgument:reserved_word'],
      ['typescript', 'eval', 'InvalidArgument:reserved_word'],
      ['typescript', '1abc', 'InvalidArgument:not_an_identifier'],
      ['typescript', 'a-b', 'InvalidArgument:not_an_identifier'],
      ['python', 'match', 'ok'],
      ['python', '_', 'ok'],
      ['python', 'None', 'InvalidArgument:reserved_word'],
      ['python', 'ﬁle', 'InvalidArgument:not_nfkc'],
      ['python', '1abc', 'InvalidArgument:not_an_identifier'],
      ['rust', 'snake_case', 'ok'],
      ['rust', '_', 'InvalidArgument:reserved_word'],
      ['rust', 'r#type', 'InvalidArgument:raw_identifier'],
      ['rust', 'fn', 'InvalidArgument:reserved_word'],
      ['rust', 'naïve', 'InvalidArgument:not_an_identifier'],
    ];
    for (const [lang, name, want] of cases)
      expect(
        codeOf(() => validateNewName(lang, name)),
        `${lang} ${name}`,
      ).toBe(want);
    expect(codeOf(() => validateForSymbol('typescript', 'alpha', 'alpha', 'function'))).toBe(
      'InvalidArgument:unchanged',
    );
    expect(codeOf(() => validateForSymbol('typescript', 'string', 'Box', 'class'))).toBe(
      'InvalidArgument:reserved_type_name',
    );
    expect(codeOf(() => validateForSymbol('typescript', 'string', 'box', 'variable'))).toBe('ok');
  });
});
