/**
 * `--include` / `--exclude` (docs/kernel.md §10.1): picomatch globs over workspace-relative paths, applied
 * after the listing; a glob naming a directory covers its contents.
 */
import { describe, it, expect } from 'vitest';
import { globMatcher, listWorkspaceFiles } from '../../src/kernel/snapshot.js';
import { tempWs } from './helpers.js';

const FILES = [
  'src/a.ts',
  'src/b.ts',
  'src/m1.ts',
  'src/a.test.ts',
  'src/deep/c.test.ts',
  'gen/x.ts',
  '.config/y.ts',
  'README.md',
];

describe('include and exclude globs', () => {
  it('matches braces, classes, globstars, dotfiles and whole directories', async () => {
    const ws = tempWs(Object.fromEntries(FILES.map((f) => [f, 'export {};\n'])));
    const list = async (include: string[], exclude: string[]) =>
      (await listWorkspaceFiles(ws, { include, exclude })).map((f) => f.path);
    expect(await list(['src/{a,b}.ts', 'src/m[0-9].ts'], [])).toEqual(['src/a.ts', 'src/b.ts', 'src/m1.ts']);
    expect(await list([], ['**/*.test.ts', 'gen'])).toEqual([
      '.config/y.ts',
      'README.md',
      'src/a.ts',
      'src/b.ts',
      'src/m1.ts',
    ]);
    expect(await list(['**/*.ts'], ['src/**'])).toEqual(['.config/y.ts', 'gen/x.ts']);
    expect(globMatcher([])).toBeNull();
    expect(globMatcher(['gen/**'])!('gen')).toBe(true);
    expect(globMatcher(['gen'])!('gen/sub/z.ts')).toBe(true);
  });
});
