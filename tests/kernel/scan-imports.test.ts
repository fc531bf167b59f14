/**
 * Lazy loading across languages (docs/kernel.md §2.1): through the built `tug` binary, a TypeScript rename
 * never loads web-tree-sitter, and a Python rename (whose syntax work is on tree-sitter) never loads
 * typescript. The Python rename also proves the bundled binary finds web-tree-sitter and its wasm.
 */
import { describe, it, expect } from 'vitest';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { packagesLoaded } from '../helpers/imports.js';
import { ROOT } from '../helpers/cli.js';
import { tempWs, TSCONFIG } from './helpers.js';

const TUG = join(ROOT, 'bin', 'tug.js');

/** The built `tug` (the bundle when it is current) as a child process; its JSON envelope. */
function tug(argv: string[], cwd: string) {
  const r = spawnSync(process.execPath, [TUG, ...argv], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, NODE_ENV: 'test' },
  });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
}

describe('lazy loading of syntax and language services', () => {
  it('renames TypeScript through tug without loading web-tree-sitter', () => {
    const ws = tempWs({ 'tsconfig.json': TSCONFIG, 'src/a.ts': 'export const value = 1;\nexport const b = value;\n' });
    const argv = ['run', '--verify', 'none', 'rename-symbol', '--at', 'src/a.ts:1:14', '--to', 'amount'];
    // (typescript itself is loaded through require, which the ESM trace does not see.)
    expect(packagesLoaded(argv, ws, {}, TUG).has('web-tree-sitter')).toBe(false);
    expect(tug(argv, ws).summary.edits_count).toBe(2);
  });

  it('renames Python through tug on tree-sitter without loading typescript', () => {
    const ws = tempWs({ 'a.py': 'def value():\n    return 1\n\nprint(value())\n' });
    const argv = ['run', '--verify', 'none', 'rename-symbol', '--at', 'a.py:1:5', '--to', 'amount'];
    const loaded = packagesLoaded(argv, ws, {}, TUG);
    expect(loaded.has('web-tree-sitter')).toBe(true);
    expect(loaded.has('typescript')).toBe(false);
    const env = tug(argv, ws);
    expect([env.symbol.kind, env.summary.edits_count]).toEqual(['function', 2]);
  });
});
